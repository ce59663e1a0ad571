package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// recorder serves JSON documents by path and records the paths asked for.
type recorder struct {
	mu    sync.Mutex
	paths []string
	docs  map[string]func(w http.ResponseWriter, r *http.Request)
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.paths = append(rc.paths, r.URL.Path)
	h := rc.docs[r.URL.Path]
	rc.mu.Unlock()
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h(w, r)
}

func jsonDoc(v any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

func (rc *recorder) asked() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.paths...)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestDiscoverResourceOrder(t *testing.T) {
	rc := &recorder{docs: map[string]func(http.ResponseWriter, *http.Request){}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	rc.docs["/.well-known/oauth-protected-resource"] = jsonDoc(ResourceMetadata{Resource: srv.URL, AuthorizationServers: []string{srv.URL}})
	f := newFetcher(srv.Client(), 0)
	md, err := f.discoverResource(context.Background(), mustURL(t, srv.URL+"/mcp"), "")
	if err != nil || md == nil {
		t.Fatalf("discover: %v, %v", md, err)
	}
	want := []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}
	if got := rc.asked(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("asked %v, want %v", got, want)
	}
}

func TestDiscoverResourceHostile(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonDoc(ResourceMetadata{Resource: "http://" + r.Host + "/mcp"})(w, r)
	}))
	defer other.Close()
	rc := &recorder{docs: map[string]func(http.ResponseWriter, *http.Request){}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	server := mustURL(t, srv.URL+"/mcp")
	ctx := context.Background()
	f := newFetcher(srv.Client(), 1024)

	// The resource is another server.
	rc.docs["/mismatch"] = jsonDoc(ResourceMetadata{Resource: "https://evil.example.com/mcp"})
	if _, err := f.discoverResource(ctx, server, srv.URL+"/mismatch"); !errors.Is(err, ErrResourceMismatch) {
		t.Errorf("mismatch: %v", err)
	}
	// A sibling path is not the server.
	rc.docs["/sibling"] = jsonDoc(ResourceMetadata{Resource: srv.URL + "/mc"})
	if _, err := f.discoverResource(ctx, server, srv.URL+"/sibling"); !errors.Is(err, ErrResourceMismatch) {
		t.Errorf("sibling path: %v", err)
	}
	// Metadata that redirects to another host.
	rc.docs["/redirect"] = func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/prm", http.StatusFound)
	}
	if _, err := f.discoverResource(ctx, server, srv.URL+"/redirect"); !errors.Is(err, ErrUnsafeRedirect) {
		t.Errorf("cross-origin redirect: %v", err)
	}
	// An oversized document.
	rc.docs["/big"] = func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"resource":"` + strings.Repeat("a", 4096) + `"}`))
	}
	if _, err := f.discoverResource(ctx, server, srv.URL+"/big"); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("oversized: %v", err)
	}
	// Not JSON.
	rc.docs["/junk"] = func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }
	if _, err := f.discoverResource(ctx, server, srv.URL+"/junk"); err == nil {
		t.Error("junk: no error")
	}
	// A resource_metadata that is not an http URL.
	if _, err := f.discoverResource(ctx, server, "file:///etc/passwd"); !errors.Is(err, ErrMalformedChallenge) {
		t.Errorf("file URL: %v", err)
	}
}

func TestDiscoverServerOrder(t *testing.T) {
	rc := &recorder{docs: map[string]func(http.ResponseWriter, *http.Request){}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	issuer := srv.URL + "/tenant1"
	rc.docs["/tenant1/.well-known/openid-configuration"] = jsonDoc(ServerMetadata{Issuer: issuer, TokenEndpoint: issuer + "/token"})
	f := newFetcher(srv.Client(), 0)
	md, err := f.discoverServer(context.Background(), issuer, nil)
	if err != nil || md.Issuer != issuer {
		t.Fatalf("discover: %+v, %v", md, err)
	}
	want := []string{
		"/.well-known/oauth-authorization-server/tenant1",
		"/.well-known/openid-configuration/tenant1",
		"/tenant1/.well-known/openid-configuration",
	}
	if got := rc.asked(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("asked %v, want %v (never the root for an issuer with a path)", got, want)
	}
}

func TestDiscoverServerHostile(t *testing.T) {
	rc := &recorder{docs: map[string]func(http.ResponseWriter, *http.Request){}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	f := newFetcher(srv.Client(), 0)
	ctx := context.Background()
	// Wrong issuer: discarded, and the error says why.
	rc.docs["/.well-known/oauth-authorization-server"] = jsonDoc(ServerMetadata{Issuer: "https://attacker.example.com", TokenEndpoint: srv.URL + "/token"})
	if _, err := f.discoverServer(ctx, srv.URL, nil); !errors.Is(err, ErrIssuerMismatch) {
		t.Errorf("wrong issuer: %v", err)
	}
	// A trailing slash is a different issuer (simple string comparison).
	rc.docs["/.well-known/oauth-authorization-server"] = jsonDoc(ServerMetadata{Issuer: srv.URL + "/", TokenEndpoint: srv.URL + "/token"})
	if _, err := f.discoverServer(ctx, srv.URL, nil); !errors.Is(err, ErrIssuerMismatch) {
		t.Errorf("trailing slash: %v", err)
	}
	// A token endpoint that is not http(s).
	rc.docs["/.well-known/oauth-authorization-server"] = jsonDoc(ServerMetadata{Issuer: srv.URL, TokenEndpoint: "javascript:alert(1)"})
	if _, err := f.discoverServer(ctx, srv.URL, nil); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("bad endpoint: %v", err)
	}
	// Nothing there.
	delete(rc.docs, "/.well-known/oauth-authorization-server")
	if _, err := f.discoverServer(ctx, srv.URL, nil); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("none: %v", err)
	}
}

func TestCanonicalResource(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://MCP.Example.com/mcp/": "https://mcp.example.com/mcp",
		"https://a/mcp#frag":           "https://a/mcp",
		"http://a:8080":                "http://a:8080",
	} {
		if got, err := CanonicalResource(in); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
}
