package inspect

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/dial"
)

// The OAuth view. An http or ws server gets an auth.Client of the
// inspector's own: its metadata, registration and token requests go
// through a recording http.Client (authRecorder), which turns each into a
// step with its secrets masked, and its user step (auth.Loopback with
// Open) hands the authorization URL to the page, where the person opens
// it. The challenge that starts it all is seen by the network recorder
// (a 401 or 403 with WWW-Authenticate). Nothing else of auth is touched:
// what the page shows is what went over the wire.

// step is one step of a login, as the page shows it.
type step struct {
	N      int64     `json:"n"`
	Server string    `json:"server"`
	Time   time.Time `json:"time"`
	// Kind: challenge, resource-metadata, server-metadata, registration,
	// authorization, token, refresh, revocation, request.
	Kind   string            `json:"kind"`
	Method string            `json:"method,omitempty"`
	URL    string            `json:"url"`
	Status int               `json:"status,omitempty"`
	Ms     float64           `json:"ms,omitempty"`
	Req    map[string]string `json:"reqHeaders,omitempty"`
	Resp   map[string]string `json:"respHeaders,omitempty"`
	// Sent and Got are the request's and the answer's bodies, secrets
	// masked: a form's fields or a JSON document.
	Sent any `json:"sent,omitempty"`
	Got  any `json:"got,omitempty"`
	// Params are an authorization request's query parameters.
	Params map[string]string `json:"params,omitempty"`
	// Claims are the claims of each JWT in the answer (access_token,
	// id_token), decoded without verification.
	Claims map[string]any `json:"claims,omitempty"`
	Err    string         `json:"error,omitempty"`
}

// authLog keeps the steps, oldest dropped first.
type authLog struct {
	mu    sync.Mutex
	max   int
	n     int64
	steps []step
}

func newAuthLog(max int) *authLog { return &authLog{max: max} }

func (l *authLog) add(s step) step {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	s.N = l.n
	l.steps = append(l.steps, s)
	if len(l.steps) > l.max {
		l.steps = append(l.steps[:0:0], l.steps[len(l.steps)-l.max:]...)
	}
	return s
}

func (l *authLog) list(server string) []step {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []step
	for _, s := range l.steps {
		if server == "" || s.Server == server {
			out = append(out, s)
		}
	}
	return out
}

func (ins *Inspector) addStep(s step) {
	s = ins.steps.add(s)
	ins.events.publish("auth", s)
}

// authClient returns the auth.Client of an http or ws server: the stored
// logins (Config.AuthStore), the steps recorded, the browser step in the
// page.
func (s *server) authClient() (*auth.Client, error) {
	ins := s.ins
	hc := &http.Client{Transport: &authRecorder{next: http.DefaultTransport, ins: ins, server: s.id}}
	cfg := &auth.Config{
		Store:      ins.cfg.AuthStore,
		HTTPClient: hc,
		ClientName: "tako inspect",
		Logger:     ins.log,
		User: &auth.Loopback{Out: io.Discard, Open: func(authURL string) error {
			s.loginURL(authURL)
			return nil
		}},
	}
	if cfg.Store != nil {
		if probe, err := auth.New(s.spec.URL, &auth.Config{Store: cfg.Store}); err == nil {
			if rec, err := cfg.Store.Load(context.Background(), probe.Resource(), ""); err == nil {
				cfg.DPoP = rec.DPoPKey != ""
			}
		}
	}
	return auth.New(s.spec.URL, cfg)
}

// loginURL hands the page the authorization URL of a login under way.
func (s *server) loginURL(authURL string) {
	st := step{Server: s.id, Time: time.Now(), Kind: "authorization", Method: http.MethodGet, URL: stripQuery(authURL), Params: map[string]string{}}
	if u, err := url.Parse(authURL); err == nil {
		for k, v := range u.Query() {
			st.Params[k] = maskField(k, strings.Join(v, " "))
		}
	}
	s.ins.addStep(st)
	s.mu.Lock()
	s.authURL = authURL
	s.mu.Unlock()
	s.ins.events.publish("login", map[string]string{"server": s.id, "url": authURL})
	s.publish()
}

// challenge records the MCP server's 401 or 403 that asks for a login.
func (s *server) challenge(resp *http.Response) {
	s.ins.addStep(step{Server: s.id, Time: time.Now(), Kind: "challenge", Method: resp.Request.Method, URL: stripQuery(resp.Request.URL.String()),
		Status: resp.StatusCode, Resp: map[string]string{"Www-Authenticate": strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")}})
}

// authRecorder records each request of a login as a step.
type authRecorder struct {
	next   http.RoundTripper
	ins    *Inspector
	server string
}

func (a *authRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	st := step{Server: a.server, Time: time.Now(), Method: req.Method, URL: stripQuery(req.URL.String()), Req: map[string]string{}}
	for k, v := range req.Header {
		st.Req[k] = maskHeader(k, strings.Join(v, ", "))
	}
	var sent []byte
	if req.Body != nil && req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			sent, _ = io.ReadAll(io.LimitReader(b, maxAuthBody))
			b.Close()
		}
	}
	st.Kind = stepKind(req, sent)
	st.Sent = maskBody(req.Header.Get("Content-Type"), sent)
	resp, err := a.next.RoundTrip(req)
	st.Ms = ms(time.Since(st.Time))
	if err != nil {
		st.Err = err.Error()
		a.ins.addStep(st)
		return nil, err
	}
	st.Status = resp.StatusCode
	st.Resp = map[string]string{}
	for k, v := range resp.Header {
		st.Resp[k] = maskHeader(k, strings.Join(v, ", "))
	}
	// The body is read here, bounded one byte past the step's limit, and
	// handed on whole: auth applies its own, smaller limits.
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAuthBody+1))
	rest := resp.Body
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), rest), rest}
	if rerr != nil {
		st.Err = rerr.Error()
	}
	if len(body) > maxAuthBody {
		st.Got = fmt.Sprintf("(%d bytes or more, not shown)", maxAuthBody)
	} else {
		st.Got, st.Claims = maskAnswer(resp.Header.Get("Content-Type"), body)
	}
	a.ins.addStep(st)
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// stepKind names a login's request by what it is.
func stepKind(req *http.Request, body []byte) string {
	p := req.URL.Path
	switch {
	case strings.Contains(p, "/.well-known/oauth-protected-resource"):
		return "resource-metadata"
	case strings.Contains(p, "/.well-known/oauth-authorization-server"), strings.Contains(p, "/.well-known/openid-configuration"):
		return "server-metadata"
	case req.Method != http.MethodPost:
		return "request"
	case bytes.Contains(body, []byte(`"redirect_uris"`)) || bytes.Contains(body, []byte(`"grant_types"`)):
		return "registration"
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return "request"
	}
	switch g := form.Get("grant_type"); {
	case g == "refresh_token":
		return "refresh"
	case g != "":
		return "token"
	case form.Has("token"):
		return "revocation"
	}
	return "request"
}

// secretFields are the names whose values a step never shows.
var secretFields = map[string]bool{
	"access_token": true, "refresh_token": true, "id_token": true, "client_secret": true,
	"registration_access_token": true, "code": true, "code_verifier": true, "client_assertion": true,
	"assertion": true, "subject_token": true, "actor_token": true, "token": true, "password": true,
	"device_code": true, "state": true,
}

// mask shows that a secret was there, and its length, but not the secret.
func mask(v string) string {
	if v == "" {
		return ""
	}
	return fmt.Sprintf("•••• (%d characters)", len(v))
}

func maskField(k, v string) string {
	if secretFields[strings.ToLower(k)] {
		return mask(v)
	}
	return v
}

// maskHeader masks the headers that carry credentials.
func maskHeader(k, v string) string {
	switch strings.ToLower(k) {
	case "authorization":
		scheme, cred, ok := strings.Cut(v, " ")
		if !ok {
			return mask(v)
		}
		return scheme + " " + mask(cred)
	case "dpop", "cookie", "set-cookie", "x-api-key", "api-key":
		return mask(v)
	}
	return v
}

// maskBody is a request body for a step: a form's fields or a JSON
// document, secrets masked.
func maskBody(contentType string, body []byte) any {
	if len(body) == 0 {
		return nil
	}
	if strings.Contains(contentType, "json") {
		var v any
		if json.Unmarshal(body, &v) == nil {
			return maskJSON(v)
		}
		return "(not JSON)"
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return "(not a form)"
	}
	out := map[string]string{}
	for k, v := range form {
		out[k] = maskField(k, strings.Join(v, " "))
	}
	return out
}

// maskAnswer is an answer's body for a step, secrets masked, and the
// claims of the JWTs it carries.
func maskAnswer(contentType string, body []byte) (any, map[string]any) {
	if len(body) == 0 {
		return nil, nil
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		text := string(body)
		if len(text) > maxPreview {
			text = text[:maxPreview] + "…"
		}
		return text, nil
	}
	var claims map[string]any
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"access_token", "id_token"} {
			if s, ok := m[k].(string); ok {
				if c := jwtClaims(s); c != nil {
					if claims == nil {
						claims = map[string]any{}
					}
					claims[k] = c
				}
			}
		}
	}
	return maskJSON(v), claims
}

func maskJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok && secretFields[strings.ToLower(k)] {
				t[k] = mask(s)
			} else {
				t[k] = maskJSON(x)
			}
		}
	case []any:
		for i := range t {
			t[i] = maskJSON(t[i])
		}
	}
	return v
}

// jwtClaims decodes a JWT's claims, without verifying it (the page says
// so), or returns nil for a token that is not a JWT.
func jwtClaims(tok string) map[string]any {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var c map[string]any
	if json.Unmarshal(b, &c) != nil {
		return nil
	}
	return c
}

// withAuth gives an http or ws server the inspector's auth.Client, unless
// it has an Authorizer of its own.
func (s *server) withAuth(spec *dial.Server) error {
	if spec.Kind != dial.HTTP && spec.Kind != dial.SSE && spec.Kind != dial.WebSocket {
		return nil
	}
	if spec.Auth != nil {
		return nil
	}
	ac, err := s.authClient()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.authc = ac
	s.mu.Unlock()
	spec.Auth, spec.AuthFunc = ac, nil
	return nil
}
