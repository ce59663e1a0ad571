package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostileAS is an authorization server and a protected MCP endpoint on
// loopback whose every answer a test can replace: the defaults are those
// of a well-behaved server (resource metadata, RFC 8414 metadata, dynamic
// registration, an authorization endpoint that redirects at once, a token
// endpoint for every grant, an MCP endpoint that answers "ok" to a live
// token), and the test sets a handler for a path to make that path
// hostile. It counts the requests to every path.
type hostileAS struct {
	t   *testing.T
	srv *httptest.Server
	URL string

	mu       sync.Mutex
	hits     map[string]int
	handlers map[string]http.HandlerFunc
	prm      ResourceMetadata
	md       ServerMetadata
	live     map[string]bool // access tokens the MCP endpoint takes
	issued   int
	forms    []url.Values // the form of every token request
}

func newHostileAS(t *testing.T) *hostileAS {
	h := &hostileAS{t: t, hits: map[string]int{}, handlers: map[string]http.HandlerFunc{}, live: map[string]bool{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	h.URL = h.srv.URL
	u := h.URL
	h.prm = ResourceMetadata{Resource: u + "/mcp", AuthorizationServers: []string{u}}
	h.md = ServerMetadata{
		Issuer: u, AuthorizationEndpoint: u + "/authorize", TokenEndpoint: u + "/token", RegistrationEndpoint: u + "/register",
		CodeChallengeMethodsSupported: []string{"S256"},
		GrantTypesSupported:           []string{"authorization_code", "refresh_token", "client_credentials", grantJWTBearer},
	}
	return h
}

// handle makes path answer with fn.
func (h *hostileAS) handle(path string, fn http.HandlerFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handlers[path] = fn
}

// metadata changes the authorization server metadata served.
func (h *hostileAS) metadata(fn func(md *ServerMetadata)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(&h.md)
}

// resource changes the protected resource metadata served.
func (h *hostileAS) resource(fn func(prm *ResourceMetadata)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(&h.prm)
}

func (h *hostileAS) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

// metadataFetches counts the requests for well-known documents.
func (h *hostileAS) metadataFetches() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for p, c := range h.hits {
		if strings.Contains(p, "/.well-known/") {
			n += c
		}
	}
	return n
}

func (h *hostileAS) tokenForms() []url.Values {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]url.Values(nil), h.forms...)
}

func (h *hostileAS) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.hits[r.URL.Path]++
	fn := h.handlers[r.URL.Path]
	prm, md := h.prm, h.md
	h.mu.Unlock()
	if fn != nil {
		fn(w, r)
		return
	}
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		jsonDoc(prm)(w, r)
	case "/.well-known/oauth-authorization-server":
		jsonDoc(md)(w, r)
	case "/register":
		var reg registration
		_ = json.NewDecoder(r.Body).Decode(&reg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "c1", "redirect_uris": reg.RedirectURIs, "token_endpoint_auth_method": "none", "scope": reg.Scope})
	case "/authorize":
		q := r.URL.Query()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=the-code&state="+url.QueryEscape(q.Get("state"))+"&iss="+url.QueryEscape(h.URL), http.StatusFound)
	case "/token":
		_ = r.ParseForm()
		h.recordForm(r)
		h.issue(w, 3600, r.Form.Get("scope"))
	case "/mcp":
		h.mcp(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *hostileAS) recordForm(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forms = append(h.forms, cloneValues(r.Form))
}

// issue answers a token request with a new live token.
func (h *hostileAS) issue(w http.ResponseWriter, expiresIn int, scope string) {
	h.mu.Lock()
	h.issued++
	at := fmt.Sprintf("at-%d", h.issued)
	h.live[at] = true
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": expiresIn, "refresh_token": "rt-" + at, "scope": scope})
}

// mcp answers "ok" to a live token and 401 with the challenge otherwise.
func (h *hostileAS) mcp(w http.ResponseWriter, r *http.Request) {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	h.mu.Lock()
	ok := h.live[tok]
	h.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+h.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	_, _ = w.Write([]byte("ok"))
}

// oauthError writes an RFC 6749 §5.2 error answer.
func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q}`, code)
}

// netRecorder is an http.RoundTripper that sends requests to loopback and
// refuses, recording them, requests to any other host: nothing here can
// reach one, and a request that tries is the test's failure.
type netRecorder struct {
	mu      sync.Mutex
	foreign []string
}

func (n *netRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isLoopbackHost(req.URL.Hostname()) {
		n.mu.Lock()
		n.foreign = append(n.foreign, req.Method+" "+req.URL.String())
		n.mu.Unlock()
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errors.New("test: no network beyond loopback")
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (n *netRecorder) client() *http.Client { return &http.Client{Transport: n} }

func (n *netRecorder) requests() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.foreign...)
}

// countingStep is a UserStep that counts its starts and the browsers it
// would open (Wait), and completes the authorization headlessly.
type countingStep struct {
	mu     sync.Mutex
	starts int
	waits  int
	h      *Headless
}

func (s *countingStep) Start(ctx context.Context) (Redirect, error) {
	s.mu.Lock()
	s.starts++
	s.mu.Unlock()
	rd, err := s.h.Start(ctx)
	return countingRedirect{rd, s}, err
}

type countingRedirect struct {
	Redirect
	s *countingStep
}

func (r countingRedirect) Wait(ctx context.Context, authURL string) (url.Values, error) {
	r.s.mu.Lock()
	r.s.waits++
	r.s.mu.Unlock()
	return r.Redirect.Wait(ctx, authURL)
}

func (s *countingStep) browsers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waits
}

func (s *countingStep) started() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// storedRecord saves, for a new Client of h's MCP endpoint, a record with
// the given token, as a previous run would have left it.
func storedRecord(t *testing.T, store TokenStore, h *hostileAS, tok *Token) {
	t.Helper()
	canon, _ := CanonicalResource(h.URL + "/mcp")
	err := store.Save(context.Background(), &Record{Resource: canon, Issuer: h.URL, Indicator: canon, Saved: time.Now(),
		Client: ClientInfo{ClientID: "c1", AuthMethod: methodNone, Registered: true}, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
}
