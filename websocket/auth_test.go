package websocket_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/httpauth"
	"github.com/tako-mcp/tako/websocket"
)

// upgradeAuth is an httpauth.Authorizer of a token it renews when it is
// refused, as an OAuth client refreshes.
var _ httpauth.Authorizer = (*upgradeAuth)(nil)

type upgradeAuth struct {
	token   atomic.Value // string
	refused atomic.Int32
	cause   error // what HandleUnauthorized says instead of renewing
}

func (a *upgradeAuth) AuthorizeRequest(req *http.Request) error {
	req.Header.Set("Authorization", "Bearer "+a.token.Load().(string))
	return nil
}

func (a *upgradeAuth) HandleUnauthorized(_ context.Context, resp *http.Response) error {
	a.refused.Add(1)
	if a.cause != nil {
		return a.cause
	}
	if got := resp.Request.Header.Get("Authorization"); got != "Bearer stale" {
		return errors.New("refused a token it was not sent: " + got)
	}
	a.token.Store("fresh")
	return nil
}

// TestUpgradeRefusalStartsARefresh: a 401 on the opening handshake goes
// to Options.Auth, as it does over Streamable HTTP, and the handshake is
// tried again with the renewed token; an Authorizer that cannot renew
// gives a HandshakeError that reaches both ErrAuthRequired and its reason.
// Before, the upgrade took a static header, and a stale token was the end.
func TestUpgradeRefusalStartsARefresh(t *testing.T) {
	var upgrades atomic.Int32
	ts := serveHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fresh" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "stale token", http.StatusUnauthorized)
			return
		}
		upgrades.Add(1)
		up := gorilla.Upgrader{Subprotocols: []string{websocket.Subprotocol}}
		ws, err := up.Upgrade(w, r, nil)
		if err == nil {
			ws.ReadMessage() // until the client goes
			ws.Close()
		}
	})
	u := "ws" + strings.TrimPrefix(ts.URL, "http")

	a := &upgradeAuth{}
	a.token.Store("stale")
	c, err := websocket.Dial(limit(t), u, &websocket.Options{Auth: a})
	if err != nil {
		t.Fatalf("Dial with a token renewed on the 401: %v", err)
	}
	c.Close()
	if a.refused.Load() != 1 || upgrades.Load() != 1 {
		t.Errorf("%d refusals and %d upgrades, want 1 each", a.refused.Load(), upgrades.Load())
	}

	reason := errors.New("no login")
	b := &upgradeAuth{cause: reason}
	b.token.Store("stale")
	_, err = websocket.Dial(limit(t), u, &websocket.Options{Auth: b})
	var he *websocket.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized || !errors.Is(err, transport.ErrAuthRequired) || !errors.Is(err, reason) {
		t.Fatalf("Dial whose Authorizer cannot renew: %v, want a 401 HandshakeError wrapping ErrAuthRequired and the reason", err)
	}
}

// renewingAuth is an httpauth.Authorizer that always reports new
// credentials on a refusal, as a token refresh that succeeds at the
// authorization server but is still refused by the MCP server (a token
// for the wrong audience, a server that has revoked the client) does.
type renewingAuth struct {
	refreshes atomic.Int32
}

func (a *renewingAuth) AuthorizeRequest(req *http.Request) error {
	req.Header.Set("Authorization", "Bearer at-"+strconv.Itoa(int(a.refreshes.Load())))
	return nil
}

func (a *renewingAuth) HandleUnauthorized(context.Context, *http.Response) error {
	a.refreshes.Add(1)
	return nil
}

// TestUpgradeRefusedForeverEndsAfterMaxAuthRetries pins the bound on
// handshake retries: an Authorizer that renews its token on every 401,
// against a server that refuses every token, gets the handshake tried
// MaxAuthRetries times more and then a 401 HandshakeError. Without the
// bound Dial would retry for as long as its context lives, hammering the
// server, and a Dial without a deadline would never return.
func TestUpgradeRefusedForeverEndsAfterMaxAuthRetries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var handshakes atomic.Int32
	ts := serveHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		if handshakes.Add(1) > websocket.MaxAuthRetries+1 {
			// One too many: end the Dial now rather than at the
			// deadline; the count below reports it.
			cancel()
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="The access token is not valid for this resource"`)
		http.Error(w, "invalid_token", http.StatusUnauthorized)
	})
	u := "ws" + strings.TrimPrefix(ts.URL, "http") + "/mcp"

	a := &renewingAuth{}
	c, err := websocket.Dial(ctx, u, &websocket.Options{Auth: a})
	if err == nil {
		c.Close()
		t.Fatal("Dial succeeded against a server that refuses every token")
	}
	if n := handshakes.Load(); n != websocket.MaxAuthRetries+1 {
		t.Errorf("%d handshakes, want %d (the first and MaxAuthRetries more): %v", n, websocket.MaxAuthRetries+1, err)
	}
	if n := a.refreshes.Load(); n != websocket.MaxAuthRetries {
		t.Errorf("the Authorizer was asked %d times, want %d", n, websocket.MaxAuthRetries)
	}
	var he *websocket.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized || !errors.Is(err, transport.ErrAuthRequired) {
		t.Fatalf("Dial: %v, want a 401 HandshakeError wrapping ErrAuthRequired", err)
	}
	if he.AuthCause != nil {
		t.Errorf("AuthCause %v, want none: the Authorizer never failed", he.AuthCause)
	}
}
