package inspect

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/tako-mcp/tako/internal/localguard"
	"github.com/tako-mcp/tako/mcp"
)

//go:embed assets
var assets embed.FS

// pageCSP is the page's Content-Security-Policy: its own scripts and
// styles only, no inline script, nothing from the network; images, audio
// and PDFs of results from data: and blob: URLs; frames from /frame/
// (frames.go) and from the page's own blob: URLs, which it makes for a PDF
// only, with the type application/pdf (content.js).
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' data: blob:; " +
	"connect-src 'self'; frame-src 'self' blob:; object-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// handler is every route, behind the gate.
func (ins *Inspector) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", ins.servePage)
	mux.HandleFunc("GET /assets/", ins.serveAsset)
	mux.HandleFunc("GET /frame/{id}", ins.serveFrame)
	mux.HandleFunc("GET /api/events", ins.serveEvents)
	ins.routes(mux)
	return ins.gate(mux)
}

// gate is the one door (SECURITY.md): Host and Origin must be this
// machine's and the page's own (localguard), and the session token must
// come with every request but a frame's document, which carries a
// single-use capability instead. A state change needs a POST (or PUT,
// DELETE) with a JSON body, which a form of another site cannot send
// without a preflight the gate would refuse anyway.
func (ins *Inspector) gate(next http.Handler) http.Handler {
	hostOnly := &localguard.Guard{Logger: ins.log}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		guard := ins.guard
		if strings.HasPrefix(r.URL.Path, "/frame/") {
			guard = hostOnly
		} else {
			h.Set("Content-Security-Policy", pageCSP)
			h.Set("X-Frame-Options", "DENY")
		}
		if err := guard.Check(r); err != nil {
			ins.log.Warn("inspect: refused a request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
			localguard.Refuse(w, err)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodPost, http.MethodPut, http.MethodDelete:
			if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
				http.Error(w, "a request that changes something sends JSON", http.StatusUnsupportedMediaType)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// servePage is the page, with the token in it for its requests.
func (ins *Inspector) servePage(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = bytes.ReplaceAll(b, []byte("{{TOKEN}}"), []byte(ins.token))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}

// serveAsset is a script, a style sheet or an image of the page.
func (ins *Inspector) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := path.Clean(strings.TrimPrefix(r.URL.Path, "/"))
	if !strings.HasPrefix(name, "assets/") || name == "assets/index.html" {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(assets, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) {
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".css":
		ct = "text/css; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Write(b)
}

// apiError is an error with the HTTP status the page gets for it.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// writeJSON answers with v.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeError answers with err as {"error": "..."}.
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusBadGateway // the server failed
	var ae *apiError
	if errors.As(err, &ae) {
		status = ae.status
	}
	body := map[string]any{"error": err.Error()}
	var rpc *mcp.Error
	if errors.As(err, &rpc) {
		body["code"] = rpc.Code
	}
	writeJSON(w, status, body)
}

// readJSON decodes the request's body into v.
func readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return &apiError{status: http.StatusRequestEntityTooLarge, msg: "the request is too large or broken: " + err.Error()}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &apiError{status: http.StatusBadRequest, msg: "the request is not the JSON expected: " + err.Error()}
	}
	return nil
}

// handle adapts a handler that returns a value or an error.
func handle(f func(r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := f(r)
		if err != nil {
			writeError(w, err)
			return
		}
		if v == nil {
			v = map[string]bool{"ok": true}
		}
		writeJSON(w, http.StatusOK, v)
	}
}
