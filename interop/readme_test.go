package interop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadme runs the README's examples as a reader would: every Go
// snippet and every block of tako command lines is marked, on the line
// before its fence, with what the test does with it, and a block with Go
// or a tako command line and no marker fails the test.
//
//	<!-- check: run -->          a Go program: built in a module of its own
//	                             (a replace directive points at this
//	                             checkout) and run from the repository root
//	<!-- check: run H -->        a Go fragment: put in place of //README in
//	                             testdata/readme/H.go, which supplies what the
//	                             fragment takes as given, then built and run
//	<!-- check: build H -->      the same, built but not run (the marker's
//	                             "--" part says why)
//	<!-- check: sh -->           command lines, run one after another by bash
//	                             from the repository root; each must exit 0
//	<!-- check: output -->       what the block before it prints
//	<!-- no-check: REASON -->    not run, on purpose
//
// A sh block whose lines start with "$ " is a transcript: the lines after
// a command are what it prints (stdout and stderr as a terminal shows
// them), and a command may fail only when the next one is `echo $?`. In
// what a block shows, "…" stands for any text, and a line of "…" alone for
// any lines; for `tako shell`, lines "NAME> INPUT" are what the person
// types. A command that ends with & runs in the background, and the next
// one waits until the address it listens on (--listen-ws, --listen-grpc
// or PORT=) accepts connections.
//
// Options after the kind: ports=8765,8443 replaces those ports with free
// ones in the block (so that a busy port on the machine cannot fail it);
// group=NAME runs the blocks of that name in one subtest, in order, the
// background commands of one living until the group ends; files says the
// group writes files in the repository root (the openssl recipe), which
// are removed afterwards, and makes it run alone.
//
// The binaries are built fresh from this checkout (not with -race: what a
// user builds), and tako on PATH is that build; so is the `go install` of
// the README, whose GOBIN is the test's.
func TestReadme(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseReadme(string(md))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	for _, b := range blocks {
		if b.marker == "" && b.needsMarker() {
			t.Errorf("README.md:%d: a ```%s block with Go or tako command lines has no <!-- check: … --> or <!-- no-check: reason --> on the line before it", b.line, b.lang)
		}
	}
	groups, err := groupBlocks(blocks)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	env := readmeEnv(t, root)

	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			if !g.files {
				t.Parallel()
			} else {
				removeNewFiles(t, root)
			}
			r := &readmeRun{root: root, env: env, ports: map[string]string{}}
			t.Cleanup(func() { r.stop(); r.checkStopped(t) })
			for i, b := range g.blocks {
				switch b.kind {
				case "run", "build":
					var want *readmeBlock
					if i+1 < len(g.blocks) && g.blocks[i+1].kind == "output" {
						want = g.blocks[i+1]
					}
					r.goBlock(t, b, want)
				case "sh":
					r.shBlock(t, b)
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}

// readmeBlock is one fenced block of the README.
type readmeBlock struct {
	line   int    // of the opening fence, 1-based
	lang   string // the fence's info string: go, sh, or empty
	marker string // the comment on the line before: "check: …", "no-check: …", or empty
	text   string // the lines between the fences

	// From a check marker.
	kind    string   // run, build, sh, output
	harness string   // for a Go fragment
	ports   []string // replaced with free ones
	group   string
	files   bool
	model   string // a port where the test puts a scripted model
	http    string // a port where the test puts server-everything over Streamable HTTP
}

var (
	fenceRE  = regexp.MustCompile("^```\\s*(\\S*)\\s*$")
	markerRE = regexp.MustCompile(`^<!--\s*(check|no-check)\s*(?::\s*(.*?))?\s*-->$`)
	// takoLineRE finds a tako command line: at the start of a line, after
	// a prompt, or after && or |.
	takoLineRE = regexp.MustCompile(`(?m)(^|\$ |&& |\| )tako\s`)
)

// needsMarker reports whether the block shows code the test must run or
// be told not to.
func (b *readmeBlock) needsMarker() bool {
	return b.lang == "go" || takoLineRE.MatchString(b.text)
}

// parseReadme returns the fenced blocks of md with their markers.
func parseReadme(md string) ([]*readmeBlock, error) {
	lines := strings.Split(md, "\n")
	var blocks []*readmeBlock
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := &readmeBlock{line: i + 1, lang: m[1]}
		if i > 0 {
			if mm := markerRE.FindStringSubmatch(strings.TrimSpace(lines[i-1])); mm != nil {
				b.marker = mm[1] + ": " + mm[2]
				if mm[1] == "no-check" && strings.TrimSpace(mm[2]) == "" {
					return nil, fmt.Errorf("line %d: no-check needs a reason", i)
				}
				if mm[1] == "check" {
					if err := b.parseMarker(mm[2]); err != nil {
						return nil, fmt.Errorf("line %d: %v", i, err)
					}
				}
			}
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			if m := fenceRE.FindStringSubmatch(lines[i]); m != nil && m[1] != "" {
				return nil, fmt.Errorf("line %d: a ```%s fence inside the block of line %d", i+1, m[1], b.line)
			}
			body = append(body, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("line %d: the block is never closed", b.line)
		}
		b.text = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// parseMarker reads "KIND [HARNESS] [OPTION...] [-- why]".
func (b *readmeBlock) parseMarker(s string) error {
	if i := strings.Index(s, "--"); i >= 0 {
		s = s[:i]
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return fmt.Errorf("check needs a kind (run, build, sh, output)")
	}
	b.kind = f[0]
	switch b.kind {
	case "run", "build", "sh", "output":
	default:
		return fmt.Errorf("unknown check kind %q", b.kind)
	}
	for _, o := range f[1:] {
		k, v, _ := strings.Cut(o, "=")
		switch {
		case k == "ports" && v != "":
			b.ports = strings.Split(v, ",")
		case k == "group" && v != "":
			b.group = v
		case k == "model" && v != "":
			b.model = v
			b.ports = append(b.ports, v)
		case k == "http" && v != "":
			b.http = v
			b.ports = append(b.ports, v)
		case o == "files":
			b.files = true
		case !strings.Contains(o, "=") && b.harness == "" && (b.kind == "run" || b.kind == "build"):
			b.harness = o
		default:
			return fmt.Errorf("unknown check option %q", o)
		}
	}
	return nil
}

// readmeGroup is the blocks one subtest runs.
type readmeGroup struct {
	name   string
	blocks []*readmeBlock
	files  bool
}

// groupBlocks makes the subtests: each checked block on its own, an
// output block with the block before it, and each group= together.
func groupBlocks(blocks []*readmeBlock) ([]*readmeGroup, error) {
	var groups []*readmeGroup
	named := map[string]*readmeGroup{}
	var last *readmeGroup
	for _, b := range blocks {
		if b.kind == "" {
			last = nil
			continue
		}
		var g *readmeGroup
		switch {
		case b.kind == "output":
			if last == nil || last.blocks[len(last.blocks)-1].kind != "run" {
				return nil, fmt.Errorf("line %d: an output block must follow a block that is run", b.line)
			}
			g = last
		case b.group != "" && named[b.group] != nil:
			g = named[b.group]
		default:
			name := fmt.Sprintf("line%d", b.line)
			if b.group != "" {
				name = b.group
			}
			g = &readmeGroup{name: name}
			groups = append(groups, g)
			if b.group != "" {
				named[b.group] = g
			}
		}
		g.blocks = append(g.blocks, b)
		g.files = g.files || b.files
		last = g
	}
	return groups, nil
}

// readmeEnvironment is what every block runs with.
type readmeEnvironment struct {
	bin string   // tako and demo-server, fresh
	env []string // for bash and the programs
}

// readmeEnv builds tako and the demo server into a directory of the
// test's and returns the environment the blocks run in: that directory
// first on PATH and as GOBIN, node's servers held to loopback, no API
// keys (the README shows what a user without one sees), and a token
// store of the test's own.
func readmeEnv(t *testing.T, root string) *readmeEnvironment {
	t.Helper()
	for _, tool := range []string{"bash", "node", "npx", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			requireInstalled(t, tool+" is not on PATH: the README's examples use it (Node.js 20 or later with npm for node and npx)")
		}
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-everything")); err != nil {
		requireInstalled(t, "server-everything is not installed: run `npm ci` in the repository root")
	}
	bin := t.TempDir()
	start := time.Now()
	build := exec.Command("go", "build", "-o", bin+string(os.PathSeparator), "./cmd/tako", "./examples/demo-server")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building tako and the demo server: %v\n%s", err, out)
	}
	t.Logf("built tako and the demo server in %s", time.Since(start).Round(time.Millisecond))
	loopback, err := filepath.Abs(filepath.Join("testdata", "loopback.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "GOBIN", "NODE_OPTIONS", "TAKO_AUTH_DIR", "TAKO_SHELL_HISTORY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL":
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOBIN="+bin,
		"NODE_OPTIONS=--require="+loopback,
		"TAKO_AUTH_DIR="+t.TempDir(),
		"TAKO_SHELL_HISTORY=off",
	)
	return &readmeEnvironment{bin: bin, env: env}
}

// readmeRun is one group's run: its ports and its background processes.
type readmeRun struct {
	root  string
	env   *readmeEnvironment
	ports map[string]string // the README's port -> the free one
	sh    *bashShell        // the group's bash, once a sh block ran
}

// substitute replaces the block's ports with free ones, the same for the
// whole group.
func (r *readmeRun) substitute(t *testing.T, b *readmeBlock, s string) string {
	t.Helper()
	r.services(t, b)
	for _, p := range b.ports {
		if r.ports[p] == "" {
			r.ports[p] = strconv.Itoa(freePort(t))
		}
	}
	for old, new := range r.ports {
		s = regexp.MustCompile(`([:=])`+regexp.QuoteMeta(old)+`\b`).ReplaceAllString(s, "${1}"+new)
	}
	return s
}

// services starts what the block reaches, once: the scripted model and
// server-everything over Streamable HTTP, each on a port of its own that
// takes the place of the README's.
func (r *readmeRun) services(t *testing.T, b *readmeBlock) {
	t.Helper()
	if b.model != "" && r.ports[b.model] == "" {
		srv := httptest.NewServer(&readmeModel{})
		t.Cleanup(srv.Close)
		r.ports[b.model] = portOf(t, srv.URL)
	}
	if b.http != "" && r.ports[b.http] == "" {
		r.ports[b.http] = portOf(t, everythingHTTP(t, "streamableHttp"))
	}
}

func portOf(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// stop ends the group's bash and its background commands: bash is asked
// to end them (SIGTERM, which lets a bridge end its own servers) and wait
// for them; past 20 seconds its process group is killed. The group is
// killed once bash has exited too: npx, told to end, exits without ending
// the server it started (sh, then node), which stayed behind in the group.
func (r *readmeRun) stop() {
	if r.sh == nil {
		return
	}
	io.WriteString(r.sh.stdin, "kill $(jobs -p) 2>/dev/null; wait; exit 0\n")
	r.sh.stdin.Close()
	exited := make(chan struct{})
	go func() {
		r.sh.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		syscall.Kill(-r.sh.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	syscall.Kill(-r.sh.cmd.Process.Pid, syscall.SIGKILL)
	r.sh.pipe.Close()
}

// checkStopped fails t if a process of the group's bash outlived stop:
// the README's background servers must end with the group.
func (r *readmeRun) checkStopped(t *testing.T) {
	if r.sh == nil {
		return
	}
	pgid := r.sh.cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Errorf("a process of the README's shell (group %d) is still running after it stopped", pgid)
			return
		}
		time.Sleep(50 * time.Millisecond) // killed processes wait for init to reap them: poll, under a deadline
	}
}

// command returns a command run from the repository root, in the
// README's environment, in a process group of its own.
func (r *readmeRun) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.root
	cmd.Env = r.env.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// removeNewFiles removes, when the test ends, what was made in dir
// while it ran.
func removeNewFiles(t *testing.T, dir string) {
	t.Helper()
	before := map[string]bool{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		before[e.Name()] = true
	}
	t.Cleanup(func() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !before[e.Name()] && !e.IsDir() {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	})
}

// goBlock builds a Go block as a program of its own and, for run, runs it
// from the repository root and checks what it prints against want.
func (r *readmeRun) goBlock(t *testing.T, b, want *readmeBlock) {
	t.Helper()
	src := r.substitute(t, b, b.text)
	if b.harness != "" {
		harness, err := os.ReadFile(filepath.Join("testdata", "readme", b.harness+".go"))
		if err != nil {
			t.Fatalf("README.md:%d: %v", b.line, err)
		}
		src, err = spliceFragment(string(harness), src)
		if err != nil {
			t.Fatalf("README.md:%d: %s: %v", b.line, b.harness, err)
		}
	} else if !strings.HasPrefix(strings.TrimSpace(src), "package main") {
		t.Fatalf("README.md:%d: a Go block without a harness must be a whole program (package main)", b.line)
	}
	dir := t.TempDir()
	gomod := "module readme\n\ngo 1.26.0\n\nrequire github.com/tako-mcp/tako v0.0.0-00010101000000-000000000000\n\nreplace github.com/tako-mcp/tako => " + r.root + "\n"
	sum, err := os.ReadFile(filepath.Join(r.root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prog := filepath.Join(dir, "prog")
	build := exec.CommandContext(ctx, "go", "build", "-mod=mod", "-o", prog, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("README.md:%d: the Go block does not build: %v\n%s\nthe program:\n%s", b.line, err, out, numbered(src))
	}
	if b.kind == "build" {
		return
	}
	cmd := r.command(ctx, prog)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("README.md:%d: the program printed:\n%s%s", b.line, stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("README.md:%d: the program failed: %v\nstderr: %s", b.line, err, stderr.String())
	}
	if want != nil {
		if diff := matchOutput(r.substitute(t, want, want.text), stdout.String()); diff != "" {
			t.Errorf("README.md:%d: the program's output is not what README.md:%d shows: %s", b.line, want.line, diff)
		}
	}
}

// spliceFragment puts fragment in place of the //README line of harness,
// indented as that line is; the fragment's own import lines go after the
// package clause.
func spliceFragment(harness, fragment string) (string, error) {
	var imports, body []string
	lines := strings.Split(strings.TrimRight(fragment, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "import ("):
			for ; i < len(lines) && lines[i] != ")"; i++ {
				imports = append(imports, lines[i])
			}
			imports = append(imports, ")")
		case strings.HasPrefix(l, "import "):
			imports = append(imports, l)
		default:
			body = append(body, l)
		}
	}
	re := regexp.MustCompile(`(?m)^([ \t]*)//README$`)
	m := re.FindStringSubmatchIndex(harness)
	if m == nil {
		return "", fmt.Errorf("the harness has no //README line")
	}
	indent := harness[m[2]:m[3]]
	for i, l := range body {
		if l != "" {
			body[i] = indent + l
		}
	}
	out := harness[:m[0]] + strings.Join(body, "\n") + harness[m[1]:]
	if len(imports) > 0 {
		pkg := regexp.MustCompile(`(?m)^package main$`).FindStringIndex(out)
		if pkg == nil {
			return "", fmt.Errorf("the harness has no package main")
		}
		out = out[:pkg[1]] + "\n\n" + strings.Join(imports, "\n") + out[pkg[1]:]
	}
	return out, nil
}

// numbered returns src with line numbers, for a compiler's messages.
func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}

// waitListening waits until addr accepts a TCP connection, or until the
// file ended exists: the command that was to listen has ended.
func waitListening(ctx context.Context, addr, ended string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if status, err := os.ReadFile(ended); err == nil {
			return fmt.Errorf("it ended (exit %s) before anything listened on %s", strings.TrimSpace(string(status)), addr)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nothing listens on %s: %w", addr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
