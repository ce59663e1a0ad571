package auth

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"
)

// TestDiscoveryFanOutBounded: one 401 whose resource metadata lists 5,000
// authorization servers (URLs the server chose, none with metadata)
// makes at most maxDiscoveryFetches fetches, of at most
// maxAuthorizationServers of them, and fails with ErrNoMetadata; the
// engine's immediate retry of the same refusal fetches nothing more.
// Before the fix it made 15,000 fetches.
func TestDiscoveryFanOutBounded(t *testing.T) {
	h := newHostileAS(t)
	var servers []string
	for i := range 5000 {
		servers = append(servers, fmt.Sprintf("%s/as/%d", h.URL, i))
	}
	h.resource(func(prm *ResourceMetadata) { prm.AuthorizationServers = servers })
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
	ctx := testCtx(t, 30*time.Second)
	if err := call(ctx, ac, h.URL+"/mcp"); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("err = %v, want ErrNoMetadata", err)
	}
	if err := call(ctx, ac, h.URL+"/mcp"); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("the retry: %v, want ErrNoMetadata", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	fetches, tried := 0, map[string]bool{}
	asPath := regexp.MustCompile(`/as/(\d+)`)
	for p, n := range h.hits {
		if m := asPath.FindStringSubmatch(p); m != nil {
			fetches += n
			tried[m[1]] = true
		} else if p != "/mcp" {
			fetches += n
		}
	}
	if fetches > maxDiscoveryFetches || len(tried) > maxAuthorizationServers {
		t.Errorf("%d fetches of %d authorization servers' metadata, want at most %d of %d", fetches, len(tried), maxDiscoveryFetches, maxAuthorizationServers)
	}
	if len(tried) == 0 {
		t.Error("no authorization server was tried")
	}
}

// TestDiscoveryFetchBudget: the budget holds on its own, whatever the
// loop over servers does: each server's metadata found at its third
// place, with the wrong issuer, costs three fetches, and the fetches stop
// at maxDiscoveryFetches.
func TestDiscoveryFetchBudget(t *testing.T) {
	var (
		mu      sync.Mutex
		fetches int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetches++
		mu.Unlock()
		jsonDoc(ServerMetadata{Issuer: "https://elsewhere.example", TokenEndpoint: "https://elsewhere.example/token"})(w, r)
	}))
	defer srv.Close()
	f := newFetcher(nil, 0).budgeted(maxDiscoveryFetches)
	ctx := testCtx(t, 10*time.Second)
	for i := range 100 {
		if _, err := f.discoverServer(ctx, fmt.Sprintf("%s/as/%d", srv.URL, i), nil); err == nil {
			t.Fatal("metadata with the wrong issuer was taken")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if fetches != maxDiscoveryFetches {
		t.Errorf("%d fetches through a budget of %d", fetches, maxDiscoveryFetches)
	}
}
