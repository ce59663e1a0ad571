package auth_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/websocket"
)

// withToken returns a Client for server whose store already holds an
// access token, as after `tako login`.
func withToken(t *testing.T, server, token string, cfg *auth.Config) *auth.Client {
	t.Helper()
	if cfg == nil {
		cfg = &auth.Config{}
	}
	store := &auth.MemoryStore{}
	cfg.Store = store
	ac, err := auth.New(server, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = store.Save(context.Background(), &auth.Record{
		Resource: ac.Resource(), Issuer: "https://as.example.com",
		Token: &auth.Token{AccessToken: auth.Secret(token), TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ac
}

// TestWebSocketHeader: the WebSocket upgrade request carries the
// Authorization header from the Client's token (Header, as tako --ws uses
// it), for a ws:// server whose tokens are stored under its http origin.
func TestWebSocketHeader(t *testing.T) {
	var (
		mu  sync.Mutex
		got string
	)
	up := gws.Upgrader{Subprotocols: []string{websocket.Subprotocol}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Get("Authorization")
		mu.Unlock()
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		// Hold the connection until the client closes it.
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				c.Close()
				return
			}
		}
	}))
	defer srv.Close()
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/mcp"
	ac := withToken(t, wsURL, "ws-token", nil)
	if want := srv.URL + "/mcp"; ac.Resource() != want {
		t.Fatalf("Resource() = %q, want %q", ac.Resource(), want)
	}
	h, err := ac.Header(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := websocket.Dial(context.Background(), wsURL, &websocket.Options{Header: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got != "Bearer ws-token" {
		t.Errorf("upgrade request Authorization %q, want the stored token", got)
	}

	// Without a token there is no header, and no error: the server's
	// refusal is what starts an authorization.
	empty, _ := auth.New(wsURL, nil)
	if h, err := empty.Header(context.Background()); err != nil || len(h) != 0 {
		t.Errorf("Header without a token: %v %v", h, err)
	}
}

// TestGRPCCredentials: the Client as gRPC per-RPC credentials puts the
// token in the authorization metadata, requires transport security (gRPC
// refuses to send it on a plaintext connection), and sends it on one only
// when Config.GRPCInsecurePlaintext allows.
func TestGRPCCredentials(t *testing.T) {
	ctx := context.Background()
	ac := withToken(t, "https://mcp.example.com/mcp", "grpc-token", nil)
	md, err := ac.GetRequestMetadata(ctx, "https://mcp.example.com")
	if err != nil || md["authorization"] != "Bearer grpc-token" || len(md) != 1 {
		t.Errorf("GetRequestMetadata = %v, %v", md, err)
	}
	if !ac.RequireTransportSecurity() {
		t.Error("RequireTransportSecurity is false by default")
	}
	none, _ := auth.New("https://mcp.example.com/mcp", nil)
	if md, err := none.GetRequestMetadata(ctx); err != nil || len(md) != 0 {
		t.Errorf("GetRequestMetadata without a token = %v, %v", md, err)
	}

	// A plaintext gRPC server that records the authorization metadata.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []string
	)
	gs := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		m, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		seen = append(seen, strings.Join(m.Get("authorization"), ","))
		mu.Unlock()
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	served := make(chan struct{})
	go func() { defer close(served); _ = gs.Serve(ln) }()
	defer func() { gs.Stop(); <-served }()
	check := func(ac *auth.Client) error {
		cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(ac))
		if err != nil {
			return err
		}
		defer cc.Close()
		_, err = healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	if err := check(ac); err == nil || !strings.Contains(err.Error(), "transport") {
		t.Errorf("plaintext call with the default credentials: %v, want gRPC's transport security refusal", err)
	}
	plain := withToken(t, "http://"+ln.Addr().String()+"/mcp", "grpc-token", &auth.Config{GRPCInsecurePlaintext: true})
	if plain.RequireTransportSecurity() {
		t.Error("RequireTransportSecurity with GRPCInsecurePlaintext")
	}
	if err := check(plain); err != nil {
		t.Fatalf("plaintext call allowed: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "Bearer grpc-token" {
		t.Errorf("server saw authorization %q, want one call with the token (none without transport security)", seen)
	}
}
