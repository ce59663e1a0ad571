package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// listenServer is a 2026-07-28 server with subscribable resources that
// acknowledges each subscriptions/listen with grant(asked) and keeps the
// stream open. A fake peer: it sends what no real server does on purpose
// (a partial grant, updates tagged with a stream that is not open).
func listenServer(t *testing.T, grant func(asked []string) []string) (*fakeServer, transport.Conn) {
	return startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		switch {
		case m.IsNotification():
			return nil
		case m.Method == mcp.MethodDiscover:
			return result(m.ID, map[string]any{
				"resultType": "complete", "supportedVersions": []string{mcp.Version20260728},
				"capabilities": map[string]any{"resources": map[string]any{"subscribe": true}},
			})
		case m.Method == mcp.MethodSubscriptionsListen:
			var p mcp.SubscriptionsListenParams
			_ = json.Unmarshal(m.Params, &p)
			ack := map[string]any{
				"notifications": map[string]any{"resourceSubscriptions": grant(p.Notifications.ResourceSubscriptions)},
				"_meta":         map[string]any{mcp.MetaSubscriptionID: json.RawMessage(m.ID.String())},
			}
			_ = f.conn.Write(context.Background(), &mcp.Message{Method: mcp.NotificationSubscriptionsAck, Params: mustJSON(ack)})
			return nil
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	})
}

func updated(uri, subscriptionID string) *mcp.Message {
	return &mcp.Message{Method: mcp.NotificationResourceUpdated, Params: mustJSON(map[string]any{
		"uri": uri, "_meta": map[string]any{mcp.MetaSubscriptionID: json.RawMessage(subscriptionID)},
	})}
}

func TestSubscribeResourceListenNotGranted(t *testing.T) {
	f, conn := listenServer(t, func([]string) []string { return nil })
	s := connect(t, conn, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.SubscribeResource(ctx, &mcp.SubscribeParams{URI: "mem://a"}, func(*mcp.ResourceUpdatedParams) { t.Error("callback of a refused subscription") })
	if !errors.Is(err, transport.ErrCapability) {
		t.Fatalf("err = %v, want ErrCapability", err)
	}
	// The refused stream is closed: cancelled on this wire.
	f.waitFor(mcp.NotificationCancelled, 1)
}

// TestSubscribeResourceListenDemux: updates reach the callback only when
// they carry the id of the URI's open stream.
func TestSubscribeResourceListenDemux(t *testing.T) {
	f, conn := listenServer(t, func(asked []string) []string { return asked })
	s := connect(t, conn, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	updates := make(chan string, 4)
	for _, uri := range []string{"mem://a", "mem://b"} {
		if err := s.SubscribeResource(ctx, &mcp.SubscribeParams{URI: uri}, func(p *mcp.ResourceUpdatedParams) { updates <- uri + " " + p.URI }); err != nil {
			t.Fatal(err)
		}
	}
	listens := f.waitFor(mcp.MethodSubscriptionsListen, 2)
	idOf := map[string]string{}
	for _, m := range listens {
		var p mcp.SubscriptionsListenParams
		_ = json.Unmarshal(m.Params, &p)
		idOf[p.Notifications.ResourceSubscriptions[0]] = m.ID.String()
	}
	// Tagged with no open stream, and with b's stream for a's URI: both
	// dropped. Then a proper one, which must be the first to arrive.
	for _, m := range []*mcp.Message{updated("mem://a", "9999"), updated("mem://a", idOf["mem://b"]), updated("mem://a", idOf["mem://a"])} {
		if err := f.conn.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-updates:
		if got != "mem://a mem://a" {
			t.Fatalf("first update delivered: %q", got)
		}
	case <-ctx.Done():
		t.Fatal("no update")
	}
	if err := s.UnsubscribeResource(ctx, &mcp.SubscribeParams{URI: "mem://a"}); err != nil {
		t.Fatal(err)
	}
	f.waitFor(mcp.NotificationCancelled, 1)
	// After unsubscribing, a's old stream id names nothing; b still works.
	_ = f.conn.Write(ctx, updated("mem://a", idOf["mem://a"]))
	_ = f.conn.Write(ctx, updated("mem://b", idOf["mem://b"]))
	if got := <-updates; got != "mem://b mem://b" {
		t.Fatalf("update delivered: %q", got)
	}
}
