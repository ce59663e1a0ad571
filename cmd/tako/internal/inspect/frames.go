package inspect

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// Frames: HTML that a server wrote (an MCP App's ui:// resource, an HTML
// content block) is shown in an iframe that the page sandboxes without
// allow-same-origin, so it runs at an opaque origin: it cannot read the
// page, its storage or its token, and the gate refuses its requests
// (their Origin is "null"). Its document comes from /frame/ID, where ID
// is a random capability that the page asked for with the token, good for
// one load within frameTTL, so that the frame's own URL holds nothing
// worth stealing. Its Content-Security-Policy lets it run its inline
// scripts (an App's) or none (HTML content) and reach no network at all:
// it talks to the page by postMessage only, and to the server only
// through the page (apps.js).

const frameTTL = time.Minute

// frameDoc is one document waiting to be loaded into a frame.
type frameDoc struct {
	html    []byte
	scripts bool // an App: inline scripts run
	expires time.Time
}

type frames struct {
	mu   sync.Mutex
	docs map[string]*frameDoc
}

func newFrames() *frames { return &frames{docs: map[string]*frameDoc{}} }

// add keeps html for one load and returns the frame's path.
func (f *frames) add(html []byte, scripts bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	for id, d := range f.docs {
		if now.After(d.expires) {
			delete(f.docs, id)
		}
	}
	id := newID()
	f.docs[id] = &frameDoc{html: html, scripts: scripts, expires: now.Add(frameTTL)}
	return "/frame/" + id
}

// take removes and returns the document id, if it is still good.
func (f *frames) take(id string) *frameDoc {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.docs[id]
	delete(f.docs, id)
	if d == nil || time.Now().After(d.expires) {
		return nil
	}
	return d
}

// frameCSP is the policy of a frame's document.
func frameCSP(scripts bool) string {
	s, sandbox := "'none'", "sandbox"
	if scripts {
		s, sandbox = "'unsafe-inline'", "sandbox allow-scripts"
	}
	return sandbox + "; default-src 'none'; script-src " + s + "; style-src 'unsafe-inline'; img-src data: blob:; media-src data: blob:; font-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"
}

// serveFrame is GET /frame/ID.
func (ins *Inspector) serveFrame(w http.ResponseWriter, r *http.Request) {
	if dest := r.Header.Get("Sec-Fetch-Dest"); dest != "" && dest != "iframe" {
		http.Error(w, "a frame's document loads in a frame", http.StatusForbidden)
		return
	}
	d := ins.frames.take(strings.TrimPrefix(r.URL.Path, "/frame/"))
	if d == nil {
		http.Error(w, "no such frame (each loads once)", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", frameCSP(d.scripts))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.Write(d.html)
}
