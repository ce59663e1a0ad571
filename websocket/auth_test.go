package websocket_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

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
