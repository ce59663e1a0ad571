package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// resourceServer is a legacy server with subscribable resources: it
// announces an update of a URI as soon as a client subscribes to it.
func resourceServer(t *testing.T) (*fakeServer, transport.Conn) {
	return startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		switch m.Method {
		case mcp.MethodDiscover:
			return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
		case mcp.MethodInitialize:
			return result(m.ID, map[string]any{
				"protocolVersion": mcp.Version20251125,
				"capabilities":    map[string]any{"resources": map[string]any{"subscribe": true}},
				"serverInfo":      map[string]any{"name": "fake", "version": "1"},
			})
		case mcp.MethodResourcesSubscribe:
			var p mcp.SubscribeParams
			_ = decodeParams(m, &p)
			// The update races the answer: it is written first.
			n := &mcp.Message{Method: mcp.NotificationResourceUpdated, Params: mustJSON(map[string]any{"uri": p.URI})}
			other := &mcp.Message{Method: mcp.NotificationResourceUpdated, Params: mustJSON(map[string]any{"uri": "mem://other"})}
			_ = f.conn.Write(context.Background(), other)
			_ = f.conn.Write(context.Background(), n)
			return result(m.ID, map[string]any{})
		case mcp.MethodResourcesUnsubscribe:
			return result(m.ID, map[string]any{})
		}
		if m.IsNotification() {
			return nil
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	})
}

func TestSubscribeResource(t *testing.T) {
	f, conn := resourceServer(t)
	s := connect(t, conn, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	updates := make(chan string, 4)
	if err := s.SubscribeResource(ctx, &mcp.SubscribeParams{URI: "mem://a"}, func(p *mcp.ResourceUpdatedParams) { updates <- p.URI }); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updates:
		if uri != "mem://a" {
			t.Fatalf("update for %q reached the callback of mem://a", uri)
		}
	case <-ctx.Done():
		t.Fatal("no update")
	}
	if err := s.UnsubscribeResource(ctx, &mcp.SubscribeParams{URI: "mem://a"}); err != nil {
		t.Fatal(err)
	}
	if len(f.messages(mcp.MethodResourcesUnsubscribe)) != 1 {
		t.Fatal("no resources/unsubscribe")
	}
}

func TestSubscribeResourceNeedsCapability(t *testing.T) {
	for _, v := range []string{mcp.Version20251125, mcp.Version20260728} {
		srv := mcptest.New(mcptest.Options{})
		conn, wait := srv.Pipe(context.Background())
		s := connect(t, conn, &transport.Options{ProtocolVersion: v})
		err := s.SubscribeResource(context.Background(), &mcp.SubscribeParams{URI: "mem://a"}, func(*mcp.ResourceUpdatedParams) {})
		if !errors.Is(err, transport.ErrCapability) {
			t.Errorf("%s: err = %v", v, err)
		}
		for _, r := range srv.Received() {
			if r.Msg.Method == mcp.MethodResourcesSubscribe {
				t.Errorf("%s: resources/subscribe sent without the capability", v)
			}
		}
		s.Close()
		wait()
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func decodeParams(m *mcp.Message, v any) error { return json.Unmarshal(m.Params, v) }
