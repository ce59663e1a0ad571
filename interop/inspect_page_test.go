package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color/palette"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The harness of the tako inspect tests: the built tako command run as a
// person runs it (`tako inspect --no-browser ...`, its URL read from
// stdout), and a page of headless Chromium driven through the DevTools
// protocol with real clicks and keystrokes. Every wait has a deadline
// (pageWait); every page's JavaScript errors fail the test; a screenshot
// of each page goes to the test's artifacts (artifactDir) for a person to
// look at.

// inspector is one running `tako inspect`.
type inspector struct {
	URL, Base, Token string
	stderr           *tailBuffer
}

// startInspector runs tako inspect with args and env added, and returns
// once it printed its URL. It is interrupted (SIGINT, then SIGKILL after
// 15 s) when the test ends, and must exit with status 0.
func startInspector(t *testing.T, ctx context.Context, env []string, args ...string) *inspector {
	t.Helper()
	cmd := exec.Command(takoCLI(t), append([]string{"inspect", "--no-browser"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in := &inspector{stderr: &tailBuffer{max: 64 << 10}}
	cmd.Stderr = in.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "tako inspect: "); ok && !sent {
				lines <- u
				sent = true
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("tako inspect exited with %v after the interrupt\nstderr: %s", err, in.stderr)
			}
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			t.Errorf("tako inspect did not end within 15 s of the interrupt\nstderr: %s", in.stderr)
		}
	})
	select {
	case u := <-lines:
		in.URL = strings.TrimSpace(u)
	case err := <-exited:
		t.Fatalf("tako inspect exited (%v) before printing its URL\nstderr: %s", err, in.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("tako inspect printed no URL within 30 s\nstderr: %s", in.stderr)
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	pu, err := url.Parse(in.URL)
	if err != nil {
		t.Fatalf("tako inspect printed %q: %v", in.URL, err)
	}
	in.Token = pu.Query().Get("token")
	in.Base = pu.Scheme + "://" + pu.Host
	if pu.Hostname() != "127.0.0.1" || in.Token == "" {
		t.Fatalf("tako inspect serves %q: want 127.0.0.1 and a token", in.URL)
	}
	return in
}

// api calls the inspector's API as the page does, with the token.
func (in *inspector) api(t *testing.T, ctx context.Context, method, path string, body any, v any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, in.Base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+in.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if v != nil {
		json.NewDecoder(resp.Body).Decode(v)
	}
	return resp.StatusCode
}

// artifactsRoot is where the browser tests' screenshots go when
// TAKO_ARTIFACTS does not say: artifacts/ in the interop module
// (ignored by git), so that they outlive the run, in CI too, for a person
// to look at.
const artifactsRoot = "artifacts"

var (
	artifactsMu    sync.Mutex
	artifactsFresh = map[string]bool{}
)

// artifactDir is the directory of the test's screenshots:
// $TAKO_ARTIFACTS/<test>, else artifacts/<test> under the interop module,
// emptied of an earlier run's the first time a run asks for it.
func artifactDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("TAKO_ARTIFACTS")
	if root == "" {
		root = artifactsRoot
	}
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_"))
	artifactsMu.Lock()
	defer artifactsMu.Unlock()
	if !artifactsFresh[dir] {
		artifactsFresh[dir] = true
		os.RemoveAll(dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// page is one tab of headless Chromium on the inspector's page.
type inspectPage struct {
	t    *testing.T
	tab  context.Context
	dir  string
	shot int

	mu   sync.Mutex
	errs []string
}

// newBrowser starts a headless Chromium for the test and returns its
// first tab; under CI=true a missing Chromium fails the test.
func newBrowser(t *testing.T, flags ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		requireInstalled(t, "chromium is not installed (apt-get install -y chromium)")
	}
	output := &tailBuffer{max: 32 << 10}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true), chromedp.WindowSize(1280, 900), chromedp.CombinedOutput(output))
	opts = append(opts, flags...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting chromium: %v\n%s", err, output)
	}
	return tab
}

// openPage opens url in a new tab of the browser tab belongs to (a tab of
// its own, so that a person's login pages can use the first).
func openPage(t *testing.T, browser context.Context, u string) *inspectPage {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	p := &inspectPage{t: t, tab: tab, dir: artifactDir(t)}
	if err := chromedp.Do(tab); err != nil {
		t.Fatal(err)
	}
	go func() {
		for m, err := range chromedp.Console(tab) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleException || m.Type == "error" {
				p.mu.Lock()
				p.errs = append(p.errs, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
				p.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		if errs := p.errors(); len(errs) > 0 {
			t.Errorf("the page's console had errors:\n\t%s", strings.Join(errs, "\n\t"))
		}
		t.Logf("screenshots in %s", p.dir)
	})
	p.do("open the page", chromedp.Navigate(u))
	p.waitFor("the page to load its state", `document.getElementById('live') && document.getElementById('live').textContent === 'live'`)
	return p
}

func (p *inspectPage) errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, e := range p.errs {
		// The browser logs a refused request (a test's) as an error.
		if !strings.Contains(e, "Failed to load resource") {
			out = append(out, e)
		}
	}
	return out
}

// do runs one browser action within pageWait, and fails the test with a
// screenshot when it fails.
func (p *inspectPage) do(what string, a chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, pageWait)
	defer cancel()
	if err := chromedp.Do(ctx, a); err != nil {
		p.screenshot("failed-" + what)
		p.t.Fatalf("%s: %v\npage text: %.2000s", what, err, p.text("body"))
	}
}

// click clicks the element sel (a CSS selector) once it is visible. A
// list the page redraws (a load answered twice, a status that came) may
// replace the node between finding and clicking it: the click is then
// tried again on the new one, a few times, within pageWait.
func (p *inspectPage) click(sel string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, pageWait)
	defer cancel()
	var err error
	for range 5 {
		err = chromedp.Do(ctx, chromedp.Steps(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel))))
		if err == nil || !strings.Contains(err.Error(), "node with given id") {
			break
		}
	}
	if err != nil {
		p.screenshot("failed-click " + sel)
		p.t.Fatalf("click %s: %v\npage text: %.2000s", sel, err, p.text("body"))
	}
}

// typeIn types text into the field sel, as keystrokes.
func (p *inspectPage) typeIn(sel, text string) {
	p.t.Helper()
	// What the field holds goes first, as a person would delete it.
	clear := fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.focus(); e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); })()`, sel)
	steps := []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Evaluate[chromedp.Void](clear)}
	if text != "" {
		steps = append(steps, chromedp.SendKeys(chromedp.CSS(sel), text))
	}
	p.do("type into "+sel, chromedp.Steps(steps...))
}

// waitFor waits until the JavaScript expression is true.
func (p *inspectPage) waitFor(what, expr string) {
	p.t.Helper()
	p.waitWithin(pageWait, what, expr)
}

// waitWithin is waitFor with a deadline of its own, for work that grows
// with its size rather than with a person's pace.
func (p *inspectPage) waitWithin(d time.Duration, what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, d)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(d))); err != nil {
		p.screenshot("failed-wait")
		p.t.Fatalf("waiting for %s: %v\npage text: %.3000s", what, err, p.text("body"))
	}
}

// eval evaluates expr on the page.
func eval[T any](p *inspectPage, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, pageWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// text is the text a person reads in sel (all that match, joined).
func (p *inspectPage) text(sel string) string {
	ctx, cancel := context.WithTimeout(p.tab, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map((e) => e.innerText).join("\n")`, sel)))
	return s
}

// screenshot saves the page as NN-name.png in the artifacts and returns
// the file's path.
func (p *inspectPage) screenshot(name string) string {
	ctx, cancel := context.WithTimeout(p.tab, pageWait)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return ""
	}
	p.shot++
	file := filepath.Join(p.dir, fmt.Sprintf("%02d-%s.png", p.shot, regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(name), "-")))
	os.WriteFile(file, b, 0o644)
	return file
}

// readmeShot writes the page's viewport, cropped to its top h pixels, as a
// small PNG (256 colours, best compression): the README's picture, made
// with TAKO_README_SCREENSHOT=FILE.
func (p *inspectPage) readmeShot(file string, h int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, pageWait)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatal(err)
	}
	src, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		p.t.Fatal(err)
	}
	r := src.Bounds()
	if r.Dy() > h {
		r.Max.Y = r.Min.Y + h
	}
	dst := image.NewPaletted(image.Rect(0, 0, r.Dx(), r.Dy()), palette.Plan9)
	draw.FloydSteinberg.Draw(dst, dst.Bounds(), src, r.Min)
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, dst); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("wrote %s (%d bytes)", file, out.Len())
}

// panel is the CSS selector of the panel of the server called name.
func panel(name string) string { return fmt.Sprintf(`section.panel[aria-label=%q]`, name) }

// waitConnected waits, as what, until the panel of the server called name
// says it is connected.
func (p *inspectPage) waitConnected(what, name string) {
	p.t.Helper()
	p.waitFor(what, fmt.Sprintf(`(document.querySelector(%q) || {}).dataset?.state === 'connected'`, panel(name)+" .pstate"))
}

// runTool chooses tool on the Tools page of the server called name, types
// args into its form and runs it.
func (p *inspectPage) runTool(name, tool string, args map[string]string) {
	p.t.Helper()
	pn := panel(name)
	p.openTab(name, "tools")
	p.click(pn + fmt.Sprintf(` [data-tool=%q]`, tool))
	for k, v := range args {
		p.typeIn(pn+fmt.Sprintf(` [data-path=%q]`, k), v)
	}
	p.click(pn + ` button.run`)
}

// hasText is a JavaScript test that some element sel of the panel of the
// server called name holds text.
func hasText(name, sel, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%q)].some((e) => e.innerText.includes(%q))`, panel(name)+" "+sel, text)
}

// tab opens the page (tools, history, ...) of the server's panel.
func (p *inspectPage) openTab(name, tab string) {
	p.t.Helper()
	p.click(panel(name) + fmt.Sprintf(` [role=tab][data-tab=%q]`, tab))
	p.waitFor("the "+tab+" page", fmt.Sprintf(`!!document.querySelector(%q)`, panel(name)+fmt.Sprintf(` [role=tabpanel][data-page=%q]`, tab)))
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestInspectArtifactDir: the screenshots of the browser tests go where a
// person finds them after the run, CI's included: artifacts/<test> in the
// interop module when TAKO_ARTIFACTS is unset (they went to the test's
// temporary directory, removed as the test ended), and
// $TAKO_ARTIFACTS/<test> when it is set.
func TestInspectArtifactDir(t *testing.T) {
	t.Setenv("TAKO_ARTIFACTS", "")
	cwd, _ := os.Getwd()
	dir := artifactDir(t)
	if want := filepath.Join(cwd, "artifacts", "TestInspectArtifactDir"); dir != want {
		t.Errorf("artifactDir without TAKO_ARTIFACTS = %s, want %s", dir, want)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("%s is no directory: %v", dir, err)
	}
	root := t.TempDir()
	t.Setenv("TAKO_ARTIFACTS", root)
	if got, want := artifactDir(t), filepath.Join(root, "TestInspectArtifactDir"); got != want {
		t.Errorf("artifactDir with TAKO_ARTIFACTS = %s, want %s", got, want)
	}
}
