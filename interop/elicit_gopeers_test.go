package interop

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Elicitation against the server built with the official Go SDK
// (servers/gosdk): its form tool asks through input_required on 2026-07-28
// (a server-to-client elicitation/create on 2025-11-25, bridged by that
// SDK), and its login tool fails with -32042 until the URL elicitation has
// been completed, which the server announces with
// notifications/elicitation/complete.

// TestGoSDKElicitationForm: a handler that only types a name; the SDK adds
// the schema's defaults (which the server requires), and the call completes
// on the retry. An answer that breaks the schema never reaches the server.
func TestGoSDKElicitationForm(t *testing.T) {
	for _, version := range []string{mcp.Version20260728, mcp.Version20251125} {
		t.Run(version, func(t *testing.T) {
			ctx := testContext(t)
			name := "Ada"
			s := connect(t, ctx, filepath.Join(peerBin, "gosdk"), nil, &transport.Options{
				ProtocolVersion: version,
				Handlers: transport.Handlers{Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": name}}, nil
				}},
			})
			var got map[string]any
			res := call(t, ctx, s, "form", `{}`)
			if err := json.Unmarshal([]byte(res.Text()), &got); err != nil {
				t.Fatalf("form: %q: %v", res.Text(), err)
			}
			if got["name"] != "Ada" || got["color"] != "green" || got["count"] != float64(3) {
				t.Fatalf("the server received %v; want the name and both defaults", got)
			}

			// minLength 1: the empty name is refused before it is sent.
			name = ""
			res2, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "form", Arguments: json.RawMessage(`{}`)})
			if version == mcp.Version20260728 {
				var ce *transport.ElicitationContentError
				if !errors.As(err, &ce) {
					t.Fatalf("form with an empty name: %v %+v, want an ElicitationContentError", err, res2)
				}
			} else if err == nil && !res2.IsError {
				// The legacy server got an error answer instead of the accept.
				t.Fatalf("form with an empty name succeeded: %q", res2.Text())
			}
		})
	}
}

// TestGoSDKURLElicitationRequired: login fails with -32042; the SDK hands
// the URL to the handler, which plays the browser (visit, on a goroutine of
// its own, as a real browser is outside the client) and waits for the
// server's notifications/elicitation/complete; then the SDK retries login
// once, and it succeeds. Over stdio and over Streamable HTTP (where the
// notification comes on the GET stream).
func TestGoSDKURLElicitationRequired(t *testing.T) {
	for _, wire := range []string{"stdio", "streamableHttp"} {
		t.Run(wire, func(t *testing.T) {
			ctx := testContext(t)
			var s *transport.Session
			browser := make(chan error, 1)
			var seen []mcp.ElicitParams
			var cause error
			opts := &transport.Options{
				ProtocolVersion: mcp.Version20251125,
				Handlers: transport.Handlers{
					ElicitationURL: true,
					Elicitation: func(hctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
						seen = append(seen, *p)
						args, _ := json.Marshal(map[string]string{"elicitationId": p.ElicitationID})
						go func() {
							_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "visit", Arguments: args})
							browser <- err
						}()
						<-hctx.Done()
						cause = context.Cause(hctx)
						return nil, hctx.Err()
					},
				},
			}
			if wire == "stdio" {
				s = connect(t, ctx, filepath.Join(peerBin, "gosdk"), nil, opts)
			} else {
				s = connectHTTP(t, ctx, goPeerHTTP(t, "gosdk"), opts)
			}
			res := call(t, ctx, s, "login", `{}`)
			if res.Text() != "logged in" {
				t.Fatalf("login: %q", res.Text())
			}
			if err := <-browser; err != nil {
				t.Fatalf("visit: %v", err)
			}
			if len(seen) != 1 || !seen[0].IsURL() || seen[0].ElicitationID == "" || seen[0].URL == "" {
				t.Fatalf("the handler saw %+v", seen)
			}
			if !errors.Is(cause, transport.ErrElicitationComplete) {
				t.Fatalf("the handler's context ended with %v, want ErrElicitationComplete", cause)
			}
			if err := s.WaitElicitationComplete(ctx, seen[0].ElicitationID); err != nil {
				t.Fatal(err)
			}
		})
	}
}
