package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tako-mcp/tako/mcptest"
)

// TestCheckedInCodeIsGenerated regenerates the Go code into a temporary
// directory and compares it with proto/mcppb: a .proto edited without
// `make proto`, or generated code edited by hand, fails here. Without the
// pinned protoc it skips, except under CI (mcptest.InCI), where CI
// installs it and a skip would hide drift.
func TestCheckedInCodeIsGenerated(t *testing.T) {
	if err := CheckProtoc(); err != nil {
		mcptest.SkipOrFail(t, err.Error())
	}
	if testing.Short() {
		t.Skip("builds the protoc plugins; not in -short")
	}
	root := filepath.Join("..", "..")
	out := t.TempDir()
	if err := Generate(root, out); err != nil {
		t.Fatal(err)
	}
	gotDir := filepath.Join(out, "proto", "mcppb")
	wantDir := filepath.Join(root, "proto", "mcppb")
	generated, err := filepath.Glob(filepath.Join(gotDir, "*.go"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("protoc wrote nothing under %s (%v)", gotDir, err)
	}
	for _, g := range generated {
		name := filepath.Base(g)
		got, _ := os.ReadFile(g)
		want, err := os.ReadFile(filepath.Join(wantDir, name))
		if errors.Is(err, os.ErrNotExist) {
			t.Errorf("proto/mcppb/%s is not checked in: run make proto", name)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("proto/mcppb/%s differs from what the .proto files generate: run make proto", name)
		}
	}
	checkedIn, _ := filepath.Glob(filepath.Join(wantDir, "*.pb.go"))
	for _, c := range checkedIn {
		if _, err := os.Stat(filepath.Join(gotDir, filepath.Base(c))); err != nil {
			t.Errorf("proto/mcppb/%s is no longer generated: delete it or run make proto", filepath.Base(c))
		}
	}
}
