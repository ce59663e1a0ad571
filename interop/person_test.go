package interop

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// A person at a browser: Debian's Chromium, headless, driven through the
// DevTools protocol (chromedp) at a person's pace. On each page that asks
// something of them (the authorization server's sign-in and consent
// pages) the person first reads for a while (dwell, at least 10 s in the
// tests of a person's session), then types and submits; that wait is the
// point of the test, since a login that only works when answered at once
// fails people. Every wait for a page or an element has a deadline. Each
// page is recorded (its address, title and the text a person reads) for
// failure messages, with a screenshot in the test's artifacts
// (artifactDir).

// pageWait bounds the wait for one page to load or one element to answer.
const pageWait = 30 * time.Second

// person is one browser and the person at it. The browser keeps its
// cookies across authorizations, as a person's does.
type person struct {
	t              *testing.T
	tab            context.Context
	user, password string
	dwell          time.Duration
	artifacts      string
	output         *tailBuffer

	mu    sync.Mutex
	pages []pageSeen
}

// pageSeen is what the person saw on one page.
type pageSeen struct {
	URL, Title, Text string
	Form             string        // "login", "consent" or ""
	Shot             string        // screenshot file
	Dwelt            time.Duration // how long the person read it before acting
}

func (p pageSeen) String() string {
	text := strings.Join(strings.Fields(p.Text), " ")
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	s := fmt.Sprintf("%s [%s] %q", p.URL, p.Title, text)
	if p.Dwelt > 0 {
		s += fmt.Sprintf(" (read for %s)", p.Dwelt.Round(100*time.Millisecond))
	}
	return s
}

// newPerson starts a headless Chromium with a fresh profile; it ends with
// the test. Under CI=true a missing Chromium fails the test.
func newPerson(t *testing.T, user, password string, dwell time.Duration) *person {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		requireInstalled(t, "chromium is not installed (apt-get install -y chromium)")
	}
	p := &person{t: t, user: user, password: password, dwell: dwell, output: &tailBuffer{max: 32 << 10}}
	p.artifacts = artifactDir(t)
	// chromedp's defaults are headless, --disable-background-networking
	// (without it Chromium's own connections are refused by a closed
	// network and it stalls), --disable-sync, --no-first-run and a fresh
	// profile directory of its own, which it removes when Chromium exits.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1000, 800),
		chromedp.CombinedOutput(p.output),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	// The tab's context is cancelled first, then the allocator's, which
	// waits for Chromium to exit.
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		if t.Failed() {
			t.Logf("the person's pages:%s\nscreenshots in %s", p.Journal(), p.artifacts)
		}
	})
	// The first action starts the browser; it is bounded by Chromium's own
	// start-up check (chromedp gives up when the browser does not answer).
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting chromium: %v\n%s", err, p.output)
	}
	p.tab = tab
	return p
}

// Journal lists the pages the person saw, in order.
func (p *person) Journal() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for i, pg := range p.pages {
		fmt.Fprintf(&b, "\n\t%d. %s", i+1, pg)
	}
	if b.Len() == 0 {
		return " (none)"
	}
	return b.String()
}

// Pages returns what the person saw so far.
func (p *person) Pages() []pageSeen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]pageSeen(nil), p.pages...)
}

// authorize goes to authURL and through the pages that follow as a person
// would: it signs in on a sign-in page and allows access on a consent
// page, each after reading it for the person's dwell, until a page for
// which done is true (the client's redirect), which it returns. It fails
// on a page that is neither (an error page, say) or after eight pages.
func (p *person) authorize(ctx context.Context, authURL string, done func(*url.URL) bool) (pageSeen, error) {
	if err := p.act(ctx, chromedp.Navigate(authURL)); err != nil {
		pg, _ := p.look(ctx)
		return pg, fmt.Errorf("opening the authorization URL: %w", err)
	}
	for range 8 {
		pg, err := p.look(ctx)
		if err != nil {
			return pg, err
		}
		u, _ := url.Parse(pg.URL)
		switch {
		case u != nil && done(u):
			return pg, nil
		case pg.Form == "login":
			if err := p.read(ctx); err != nil {
				return pg, err
			}
			if err := p.act(ctx, chromedp.SendKeys(chromedp.ID("username"), p.user)); err != nil {
				return pg, fmt.Errorf("typing the user name: %w", err)
			}
			if err := p.act(ctx, chromedp.SendKeys(chromedp.ID("password"), p.password)); err != nil {
				return pg, fmt.Errorf("typing the password: %w", err)
			}
			if err := p.submit(ctx, "signin"); err != nil {
				return pg, fmt.Errorf("signing in: %w", err)
			}
		case pg.Form == "consent":
			if err := p.read(ctx); err != nil {
				return pg, err
			}
			if err := p.submit(ctx, "allow"); err != nil {
				return pg, fmt.Errorf("allowing access: %w", err)
			}
		default:
			return pg, fmt.Errorf("the browser stopped on a page a person cannot go on from: %s", pg)
		}
	}
	return pageSeen{}, fmt.Errorf("still not done after eight pages:%s", p.Journal())
}

// look records the page the browser shows now, with a screenshot.
func (p *person) look(ctx context.Context) (pageSeen, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	type info struct {
		URL   string `json:"url"`
		Title string `json:"title"`
		Text  string `json:"text"`
		Form  string `json:"form"`
	}
	in, err := chromedp.Run(ctx, chromedp.Evaluate[info](`({
		url: location.href,
		title: document.title,
		text: document.body ? document.body.innerText : "",
		form: document.getElementById("username") ? "login" : document.getElementById("allow") ? "consent" : "",
	})`))
	if err != nil {
		return pageSeen{}, fmt.Errorf("reading the page: %w", err)
	}
	pg := pageSeen{URL: in.URL, Title: in.Title, Text: in.Text, Form: in.Form}
	p.mu.Lock()
	n := len(p.pages) + 1
	p.mu.Unlock()
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		name := filepath.Join(p.artifacts, fmt.Sprintf("%02d-%s.png", n, pageName(pg)))
		if err := os.WriteFile(name, shot, 0o644); err == nil {
			pg.Shot = name
		}
	}
	p.mu.Lock()
	p.pages = append(p.pages, pg)
	p.mu.Unlock()
	return pg, nil
}

// pageName is a file name for a page's screenshot.
func pageName(pg pageSeen) string {
	name := pg.Form
	if name == "" {
		name = pg.Title
	}
	name = strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(name) > 40 {
		name = name[:40]
	}
	if name == "" {
		name = "page"
	}
	return name
}

// read is the person reading the page before acting on it: the one wait
// in these tests that is the point, not synchronisation.
func (p *person) read(ctx context.Context) error {
	start := time.Now()
	timer := time.NewTimer(p.dwell)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	p.mu.Lock()
	p.pages[len(p.pages)-1].Dwelt = time.Since(start)
	p.mu.Unlock()
	return nil
}

// submit clicks the button with the id and waits for the page it leads to
// (after every redirect) to load.
func (p *person) submit(ctx context.Context, id string) error {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.ID(id))))
	return err
}

// act runs one browser action, bounded by pageWait.
func (p *person) act(ctx context.Context, a chromedp.Action[chromedp.Void]) error {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	return chromedp.Do(ctx, a)
}

// bound is the tab's context for one action: it ends after pageWait, or
// when ctx (the test's) ends.
func (p *person) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(p.tab, pageWait)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() {
		stop()
		cancel()
	}
}

// browserHandoff is what $BROWSER runs for tako in these tests: a script
// that appends the URL it is given to a file and exits, so that the test's
// person can open it.
type browserHandoff struct {
	Script string
	urls   string
}

func newBrowserHandoff(t *testing.T) *browserHandoff {
	t.Helper()
	dir := t.TempDir()
	h := &browserHandoff{Script: filepath.Join(dir, "browser"), urls: filepath.Join(dir, "urls")}
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" + h.urls + "'\n"
	if err := os.WriteFile(h.Script, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// URLs returns the URLs tako has opened so far.
func (h *browserHandoff) URLs() []string {
	b, err := os.ReadFile(h.urls)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// Wait returns the n-th URL tako opened (from 1), waiting for it until ctx
// ends. The script is another process whose only sign is the file, so the
// file is polled.
func (h *browserHandoff) Wait(ctx context.Context, n int) (string, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if urls := h.URLs(); len(urls) >= n {
			return urls[n-1], nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return "", fmt.Errorf("tako opened %d browser URLs, waited for %d: %w", len(h.URLs()), n, context.Cause(ctx))
		}
	}
}
