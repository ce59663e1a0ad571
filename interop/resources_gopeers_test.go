package interop

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// TestGoSDKResourceSubscriptions subscribes to two resources of the server
// built with the official Go SDK, has it announce updates (its touch tool),
// and unsubscribes from one: on 2026-07-28 through one subscriptions/listen
// stream per URI, whose notifications carry the stream's subscriptionId; on
// 2025-11-25 through resources/subscribe. Over stdio and Streamable HTTP.
func TestGoSDKResourceSubscriptions(t *testing.T) {
	for _, version := range []string{mcp.Version20260728, mcp.Version20251125} {
		for _, wire := range []string{"stdio", "streamableHttp"} {
			t.Run(version+"/"+wire, func(t *testing.T) {
				ctx := testContext(t)
				opts := &transport.Options{ProtocolVersion: version}
				var s *transport.Session
				if wire == "stdio" {
					s = connect(t, ctx, filepath.Join(peerBin, "gosdk"), nil, opts)
				} else {
					// The go-sdk serves 2026-07-28 over HTTP only without
					// sessions.
					var flags []string
					if version == mcp.Version20260728 {
						flags = append(flags, "-stateless")
					}
					s = connectHTTP(t, ctx, goPeerHTTP(t, "gosdk", flags...), opts)
				}
				testResourceSubscriptions(t, ctx, s, version == mcp.Version20260728)
			})
		}
	}
}

func testResourceSubscriptions(t *testing.T, ctx context.Context, s *transport.Session, modern bool) {
	if c := s.ServerInfo().Capabilities.Resources; c == nil || !c.Subscribe {
		t.Fatalf("resources capability %+v, want subscribe", c)
	}
	read, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://a"})
	if err != nil {
		t.Fatal(err)
	}
	if text, ok := read.Contents[0].AsText(); !ok || text != "contents of mem://a" {
		t.Fatalf("read mem://a: %q %v", text, ok)
	}

	// Every resources/updated as the session received it, to see the
	// subscriptionId the 2026 wire adds.
	raw := make(chan mcp.Notification, 16)
	defer s.Subscribe(func(n mcp.Notification) {
		if n.Method == mcp.NotificationResourceUpdated {
			raw <- n
		}
	})()
	updates := map[string]chan string{"mem://a": make(chan string, 16), "mem://b": make(chan string, 16)}
	for uri, ch := range updates {
		if err := s.SubscribeResource(ctx, &mcp.SubscribeParams{URI: uri}, func(p *mcp.ResourceUpdatedParams) { ch <- p.URI }); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	expect := func(uri string) {
		t.Helper()
		select {
		case got := <-updates[uri]:
			if got != uri {
				t.Fatalf("the callback of %s got an update for %s", uri, got)
			}
		case <-ctx.Done():
			t.Fatalf("no update for %s", uri)
		}
	}
	call(t, ctx, s, "touch", `{"uri":"mem://a"}`)
	expect("mem://a")
	call(t, ctx, s, "touch", `{"uri":"mem://b"}`)
	expect("mem://b")
	for range 2 {
		n := <-raw
		var p struct {
			Meta mcp.Meta `json:"_meta"`
		}
		_ = json.Unmarshal(n.Params, &p)
		if _, ok := p.Meta.SubscriptionID(); ok != modern {
			t.Errorf("resources/updated %s: subscriptionId present %v, want %v", n.Params, ok, modern)
		}
	}

	if err := s.UnsubscribeResource(ctx, &mcp.SubscribeParams{URI: "mem://a"}); err != nil {
		t.Fatal(err)
	}
	call(t, ctx, s, "touch", `{"uri":"mem://a"}`)
	call(t, ctx, s, "touch", `{"uri":"mem://b"}`)
	expect("mem://b")
	select {
	case got := <-updates["mem://a"]:
		t.Fatalf("an update for %s after unsubscribing", got)
	default:
	}
	if err := s.UnsubscribeResource(ctx, &mcp.SubscribeParams{URI: "mem://b"}); err != nil {
		t.Fatal(err)
	}
}
