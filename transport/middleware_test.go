package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// seen records what a middleware saw of each request.
type seen struct {
	mu   sync.Mutex
	reqs []string // "name method id"
	errs []error
}

func (s *seen) middleware(name string) transport.Middleware {
	return func(next transport.Handler) transport.Handler {
		return func(ctx context.Context, req *transport.Request) (json.RawMessage, error) {
			if err := req.SetMeta("traceparent", "00-"+name); err != nil {
				return nil, err
			}
			if err := req.SetMeta("example.com/"+name, json.RawMessage(`{"n":1}`)); err != nil {
				return nil, err
			}
			res, err := next(ctx, req)
			s.mu.Lock()
			s.reqs = append(s.reqs, name+" "+req.Method+" "+req.ID.String())
			s.errs = append(s.errs, err)
			s.mu.Unlock()
			return res, err
		}
	}
}

func TestMiddlewareSeesEveryRequestAndAddsMeta(t *testing.T) {
	for _, version := range []string{mcp.Version20260728, mcp.Version20251125} {
		t.Run(version, func(t *testing.T) {
			srv := mcptest.New(mcptest.Options{})
			if err := srv.AddTool(mcp.Tool{Name: "echo"}, func(_ context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			conn, wait := srv.Pipe(ctx)
			var log seen
			s := connect(t, conn, &transport.Options{ProtocolVersion: version,
				Middleware: []transport.Middleware{log.middleware("outer"), log.middleware("inner")}})
			t.Cleanup(func() { s.Close(); cancel(); wait() })

			// The caller's own _meta is kept next to the middleware's.
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`),
				Meta: mcp.Meta{"caller": json.RawMessage(`true`)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "missing"}); err == nil {
				// mcptest answers an unknown tool with a JSON-RPC error.
				t.Fatal("no error for an unknown tool")
			}
			var call mcptest.Record
			for _, r := range srv.Received() {
				if r.Msg.Method == mcp.MethodToolsCall {
					call = r
					break
				}
			}
			meta := call.Meta()
			// The inner middleware ran last, so its traceparent won.
			if string(meta["traceparent"]) != `"00-inner"` || string(meta["example.com/outer"]) != `{"n":1}` ||
				string(meta["example.com/inner"]) != `{"n":1}` || string(meta["caller"]) != "true" {
				t.Errorf("_meta the server received: %s", call.Msg.Params)
			}
			if version == mcp.Version20260728 && meta[mcp.MetaProtocolVersion] == nil {
				t.Errorf("the engine's _meta is missing: %s", call.Msg.Params)
			}

			log.mu.Lock()
			defer log.mu.Unlock()
			var calls []string
			for i, r := range log.reqs {
				if strings.Contains(r, mcp.MethodToolsCall) {
					calls = append(calls, r)
					if strings.HasPrefix(r, "outer") && len(calls) == 4 {
						var rpc *mcp.Error
						if !errors.As(log.errs[i], &rpc) {
							t.Errorf("the middleware saw %v, want an *mcp.Error", log.errs[i])
						}
					}
				}
			}
			// Inner returns first; ids match the wire's.
			if len(calls) != 4 || !strings.HasPrefix(calls[0], "inner") || !strings.HasPrefix(calls[1], "outer") ||
				strings.TrimPrefix(calls[0], "inner") != strings.TrimPrefix(calls[1], "outer") ||
				!strings.HasSuffix(calls[0], " "+call.Msg.ID.String()) {
				t.Errorf("middleware saw %v; the server saw id %s", calls, call.Msg.ID.String())
			}
			// The handshake went through the chain too.
			handshake := mcp.MethodInitialize
			if version == mcp.Version20260728 {
				handshake = mcp.MethodDiscover
			}
			if !slicesContainsPrefix(log.reqs, "inner "+handshake) {
				t.Errorf("the handshake did not pass the middleware: %v", log.reqs)
			}
		})
	}
}

func slicesContainsPrefix(xs []string, p string) bool {
	for _, x := range xs {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}

func TestSetMetaRefusesReservedKeys(t *testing.T) {
	var req transport.Request
	for _, k := range []string{"progressToken", "io.modelcontextprotocol/protocolVersion", "dev.mcp/x", ""} {
		err := req.SetMeta(k, "v")
		if err == nil || (k != "" && !errors.Is(err, transport.ErrReservedMeta)) {
			t.Errorf("SetMeta(%q) = %v", k, err)
		}
	}
	if err := req.SetMeta("bad", json.RawMessage(`{`)); err == nil {
		t.Error("invalid JSON accepted")
	}
	for _, k := range []string{"traceparent", "tracestate", "baggage", "example.com/x"} {
		if err := req.SetMeta(k, "v"); err != nil {
			t.Errorf("SetMeta(%q) = %v", k, err)
		}
	}
	_ = req.SetMeta("traceparent", "w")
	if got := string(req.Meta("traceparent")); got != `"w"` {
		t.Errorf("Meta(traceparent) = %s after a second SetMeta", got)
	}
}

func TestCacheHitSkipsMiddleware(t *testing.T) {
	var log seen
	c := &cacheServer{ttl: 60000, scope: "public"}
	f, s := startCacheServer(t, c, &transport.Options{Middleware: []transport.Middleware{log.middleware("m")}})
	listTools(t, s)
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 2)
	log.mu.Lock()
	defer log.mu.Unlock()
	n := 0
	for _, r := range log.reqs {
		if strings.Contains(r, mcp.MethodToolsList) {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("middleware saw %d tools/list, want the 2 pages sent", n)
	}
}
