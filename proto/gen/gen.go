package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The pins. Changing one changes the generated code, so it is a commit of
// its own that also carries the regenerated files.
const (
	// ProtocVersion is what `protoc --version` must print: Debian 12's
	// protobuf-compiler package, which CI installs.
	ProtocVersion = "libprotoc 3.21.12"
	// ProtocGenGo matches google.golang.org/protobuf in go.mod, so the
	// generated code and the runtime agree.
	ProtocGenGo = "google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12"
	// ProtocGenGoGRPC generates code for grpc.SupportPackageIsVersion9,
	// which google.golang.org/grpc in go.mod supports.
	ProtocGenGoGRPC = "google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2"
)

// modulePath is the root module; generated files land under
// OUT/<go_package relative to it>.
const modulePath = "github.com/tako-mcp/tako"

// ProtoFiles are the inputs, relative to the repository root.
var ProtoFiles = []string{"proto/mcp.proto", "proto/mcp_messages.proto"}

// ErrNoProtoc reports that protoc is missing or is not the pinned version.
var ErrNoProtoc = errors.New("protoc not found or not the pinned version")

// CheckProtoc returns nil when protoc on PATH is the pinned version.
func CheckProtoc() error {
	path, err := exec.LookPath("protoc")
	if err != nil {
		return fmt.Errorf("%w: %v (Debian: apt-get install protobuf-compiler)", ErrNoProtoc, err)
	}
	got, err := exec.Command(path, "--version").Output()
	if err != nil {
		return fmt.Errorf("%w: protoc --version: %v", ErrNoProtoc, err)
	}
	if v := strings.TrimSpace(string(got)); v != ProtocVersion {
		return fmt.Errorf("%w: protoc says %q, the pin is %q", ErrNoProtoc, v, ProtocVersion)
	}
	return nil
}

// Generate builds the pinned plugins and runs protoc over ProtoFiles, found
// under root, writing the Go code under out.
func Generate(root, out string) error {
	if err := CheckProtoc(); err != nil {
		return err
	}
	plugins, err := os.MkdirTemp("", "tako-protoc-plugins-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(plugins)
	// One go install per plugin: they live in different modules.
	for _, pkg := range []string{ProtocGenGo, ProtocGenGoGRPC} {
		install := exec.Command("go", "install", pkg)
		install.Env = append(os.Environ(), "GOBIN="+plugins, "GOFLAGS=")
		if b, err := install.CombinedOutput(); err != nil {
			return fmt.Errorf("go install %s: %v\n%s", pkg, err, b)
		}
	}
	args := []string{
		"--plugin=protoc-gen-go=" + filepath.Join(plugins, "protoc-gen-go"),
		"--plugin=protoc-gen-go-grpc=" + filepath.Join(plugins, "protoc-gen-go-grpc"),
		"-I", filepath.Join(root, "proto"),
		"--go_out=" + out, "--go_opt=module=" + modulePath,
		"--go-grpc_out=" + out, "--go-grpc_opt=module=" + modulePath,
	}
	for _, f := range ProtoFiles {
		// Relative to the -I directory, so the descriptor's file names are
		// "mcp.proto" and "mcp_messages.proto" whatever the checkout path.
		args = append(args, strings.TrimPrefix(f, "proto/"))
	}
	cmd := exec.Command("protoc", args...)
	cmd.Dir = "."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// protoc resolves the file arguments against -I, so the paths above work
	// from any working directory.
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("protoc: %v\n%s", err, stderr.Bytes())
	}
	return nil
}
