package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newServer returns an mcptest server with the given tools, each answering
// "<server>:<tool> <arguments>".
func newServer(name string, tools ...string) *mcptest.Server {
	srv := mcptest.New(mcptest.Options{ServerInfo: mcp.Implementation{Name: name, Version: "1"}})
	for _, tool := range tools {
		addTool(srv, name, tool)
	}
	return srv
}

func addTool(srv *mcptest.Server, server, tool string) {
	srv.AddTool(mcp.Tool{
		Name:        tool,
		Description: "tool " + tool,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
	}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		req.BindArguments(&args)
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(server + ":" + tool + " " + string(args))}}, nil
	})
}

// legacy pins 2025-11-25, where notifications/tools/list_changed is a
// plain notification. In 2026-07-28 it travels only on a
// subscriptions/listen stream, which the Session opens asynchronously
// after the handshake, so a change announced right after connecting can
// precede the stream and never reach the client: tests that trigger a
// change at a moment of their choosing use the legacy era.
var legacy = &transport.Options{ProtocolVersion: mcp.Version20251125}

// connect serves srv over an in-memory pipe and returns the client
// Session, plus a function that kills the server side.
func connect(t *testing.T, srv *mcptest.Server, opts *transport.Options) (*transport.Session, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(ctx)
	s, err := transport.Connect(testContext(t), conn, opts)
	if err != nil {
		cancel()
		wait()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		cancel()
		wait()
	})
	return s, func() { cancel(); wait() }
}

func dispatch(t *testing.T, r *registry.Registry, name, args string) registry.Result {
	t.Helper()
	return r.Dispatch(testContext(t), registry.Call{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

func TestServerToolsDispatch(t *testing.T) {
	r := registry.New(registry.Options{})
	defer r.Close()
	s, _ := connect(t, newServer("a", "echo", "add"), nil)
	if err := r.AddServer(testContext(t), "a", s, nil); err != nil {
		t.Fatal(err)
	}
	defs := r.Tools()
	if len(defs) != 2 || defs[0].Name != "add" || defs[1].Name != "echo" || defs[1].Server != "a" {
		t.Fatalf("tools: %+v", defs)
	}
	res := dispatch(t, r, "echo", `{"n":1}`)
	if res.IsError || res.Text() != `a:echo {"n":1}` || res.ID != "c1" || res.Name != "echo" {
		t.Fatalf("result: %+v", res)
	}
}

func TestClashIsAnError(t *testing.T) {
	r := registry.New(registry.Options{})
	defer r.Close()
	sa, _ := connect(t, newServer("a", "echo"), nil)
	sb, _ := connect(t, newServer("b", "echo", "other"), nil)
	if err := r.AddServer(testContext(t), "a", sa, nil); err != nil {
		t.Fatal(err)
	}
	err := r.AddServer(testContext(t), "b", sb, nil)
	if !errors.Is(err, registry.ErrClash) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("second server with the same tool: err = %v, want ErrClash naming b", err)
	}
	if got := r.Servers(); len(got) != 1 {
		t.Errorf("servers after a failed add: %v", got)
	}
	if res := dispatch(t, r, "other", `{}`); !res.IsError {
		t.Errorf("a tool of the refused server is callable: %+v", res)
	}
	// A local tool clashes the same way.
	err = r.AddTool(registry.Tool{Name: "echo", Handler: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil }})
	if !errors.Is(err, registry.ErrClash) {
		t.Fatalf("local tool with a server's name: %v", err)
	}
}

func TestNamingPolicyResolvesClash(t *testing.T) {
	r := registry.New(registry.Options{Naming: registry.Prefix("__")})
	defer r.Close()
	sa, _ := connect(t, newServer("a", "echo"), nil)
	sb, _ := connect(t, newServer("b", "echo"), nil)
	for name, s := range map[string]*transport.Session{"a": sa, "b": sb} {
		if err := r.AddServer(testContext(t), name, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, srv := range []string{"a", "b"} {
		res := dispatch(t, r, srv+"__echo", `{}`)
		if res.IsError || res.Text() != srv+":echo {}" {
			t.Errorf("%s__echo: %+v (the server must get its own name)", srv, res)
		}
	}
	defs := r.Tools()
	if len(defs) != 2 || defs[0].Original != "echo" {
		t.Errorf("tools: %+v", defs)
	}
}

func TestAllowDeny(t *testing.T) {
	r := registry.New(registry.Options{})
	defer r.Close()
	s, _ := connect(t, newServer("a", "read_file", "read_dir", "write_file"), nil)
	err := r.AddServer(testContext(t), "a", s, &registry.ServerOptions{Allow: []string{"read_*"}, Deny: []string{"read_dir"}})
	if err != nil {
		t.Fatal(err)
	}
	defs := r.Tools()
	if len(defs) != 1 || defs[0].Name != "read_file" {
		t.Fatalf("tools: %+v", defs)
	}
	if res := dispatch(t, r, "write_file", `{}`); !res.IsError {
		t.Errorf("denied tool callable: %+v", res)
	}
}

// notifyAndWait has srv announce list_changed and waits for the
// registry's refresh, which OnRefresh sends on refreshed.
func notifyAndWait(t *testing.T, srv *mcptest.Server, refreshed <-chan error) {
	t.Helper()
	if err := srv.NotifyToolsListChanged(testContext(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-refreshed:
		if err != nil {
			t.Fatal(err)
		}
	case <-testContext(t).Done():
		t.Fatal("no refresh after list_changed")
	}
}

func TestListChangedRefreshes(t *testing.T) {
	refreshed := make(chan error, 10)
	r := registry.New(registry.Options{OnRefresh: func(_ string, err error) { refreshed <- err }})
	defer r.Close()
	srv := newServer("a", "one")
	s, _ := connect(t, srv, legacy)
	if err := r.AddServer(testContext(t), "a", s, nil); err != nil {
		t.Fatal(err)
	}
	addTool(srv, "a", "two")
	srv.RemoveTool("one")
	notifyAndWait(t, srv, refreshed)
	defs := r.Tools()
	if len(defs) != 1 || defs[0].Name != "two" {
		t.Fatalf("tools after list_changed: %+v", defs)
	}
	if res := dispatch(t, r, "two", `{}`); res.IsError {
		t.Errorf("new tool: %+v", res)
	}
}

// pollingTransport hides a Session's notifications, as a gRPC transport
// without them would.
type pollingTransport struct {
	*transport.Session
}

func (p pollingTransport) ServerInfo() transport.ServerInfo {
	info := p.Session.ServerInfo()
	info.Notifications = false
	return info
}

func (p pollingTransport) Subscribe(func(mcp.Notification)) func() { return func() {} }

func TestCacheTTLWithoutNotifications(t *testing.T) {
	r := registry.New(registry.Options{CacheTTL: time.Nanosecond})
	defer r.Close()
	srv := newServer("a", "one")
	s, _ := connect(t, srv, nil)
	if err := r.AddServer(testContext(t), "a", pollingTransport{s}, nil); err != nil {
		t.Fatal(err)
	}
	addTool(srv, "a", "two")
	if err := r.Refresh(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if defs := r.Tools(); len(defs) != 2 {
		t.Fatalf("tools after the cache ran out: %+v", defs)
	}
}

// ttlTransport is a polling transport whose server gives its list a
// time-to-live, as a 2026-07-28 server (ttlMs) or the gRPC service does.
type ttlTransport struct {
	pollingTransport
	ttl time.Duration
}

func (p ttlTransport) TTL(method string) (time.Duration, bool) {
	return p.ttl, method == mcp.MethodToolsList
}

// CachesResults is false, as for the gRPC client: a TTL but no cache of its
// own, so the registry keeps the clock. (The Session inside would say true,
// but its cache never saw this TTL.)
func (p ttlTransport) CachesResults() bool { return false }

func TestServerTTLOverridesCacheTTL(t *testing.T) {
	// The registry's own cache time would refresh at once; the server says
	// its list stays fresh for an hour, and the server wins.
	r := registry.New(registry.Options{CacheTTL: time.Nanosecond})
	defer r.Close()
	srv := newServer("a", "one")
	s, _ := connect(t, srv, nil)
	if err := r.AddServer(testContext(t), "a", ttlTransport{pollingTransport{s}, time.Hour}, nil); err != nil {
		t.Fatal(err)
	}
	addTool(srv, "a", "two")
	if err := r.Refresh(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if defs := r.Tools(); len(defs) != 1 {
		t.Fatalf("refreshed before the server's TTL ran out: %+v", defs)
	}
}

func TestKilledServerGivesErrorResults(t *testing.T) {
	r := registry.New(registry.Options{})
	defer r.Close()
	s, kill := connect(t, newServer("a", "echo"), nil)
	if err := r.AddServer(testContext(t), "a", s, nil); err != nil {
		t.Fatal(err)
	}
	kill()
	<-s.Done()
	res := dispatch(t, r, "echo", `{}`)
	if !res.IsError || !strings.Contains(res.Text(), "not running") {
		t.Fatalf("call to a dead server: %+v", res)
	}
}

func TestRestartPolicy(t *testing.T) {
	srv := newServer("a", "echo")
	r := registry.New(registry.Options{})
	defer r.Close()
	var (
		mu    sync.Mutex
		kills []func()
	)
	dial := func(ctx context.Context) (transport.Transport, error) {
		s, kill := connect(t, srv, nil)
		mu.Lock()
		kills = append(kills, kill)
		mu.Unlock()
		return s, nil
	}
	first, err := dial(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	err = r.AddServer(testContext(t), "a", first, &registry.ServerOptions{Restart: &registry.RestartPolicy{Connect: dial, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		mu.Lock()
		kill := kills[len(kills)-1]
		mu.Unlock()
		tr := r.Transport("a").(*transport.Session)
		kill()
		<-tr.Done()
		res := dispatch(t, r, "echo", `{}`)
		if round == 0 && (res.IsError || res.Text() != "a:echo {}") {
			t.Fatalf("call after the first death: %+v (the server should have been restarted)", res)
		}
		if round == 1 && (!res.IsError || !strings.Contains(res.Text(), "restarted 1 times")) {
			t.Fatalf("call after the second death: %+v (MaxAttempts is 1)", res)
		}
	}
}

func TestLocalTools(t *testing.T) {
	type addArgs struct {
		A int `json:"a" description:"first"`
		B int `json:"b"`
	}
	add, err := registry.Func("add", "adds", func(ctx context.Context, in addArgs) (string, error) {
		return fmt.Sprint(in.A + in.B), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := registry.New(registry.Options{})
	defer r.Close()
	if err := r.AddTool(add); err != nil {
		t.Fatal(err)
	}
	if err := r.AddTool(registry.Tool{Name: "boom", Handler: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		panic("kaboom")
	}}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddTool(registry.Tool{Name: "fail", Handler: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, errors.New("disk full")
	}}); err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	json.Unmarshal(r.Tools()[0].InputSchema, &schema)
	if req, _ := schema["required"].([]any); len(req) != 2 {
		t.Errorf("derived schema: %s", r.Tools()[0].InputSchema)
	}
	cases := []struct {
		name, args string
		isError    bool
		text       string
	}{
		{"add", `{"a":2,"b":3}`, false, "5"},
		{"add", `{"a":2}`, true, "invalid arguments"},
		{"add", `{"a":"two","b":3}`, true, "invalid arguments"},
		{"add", `[1,2]`, true, "must be a JSON object"},
		{"add", `{not json`, true, "not valid JSON"},
		{"boom", ``, true, "panicked: kaboom"},
		{"fail", `{}`, true, "disk full"},
		{"missing", `{}`, true, "unknown tool"},
	}
	for _, c := range cases {
		res := dispatch(t, r, c.name, c.args)
		if res.IsError != c.isError || !strings.Contains(res.Text(), c.text) {
			t.Errorf("%s %s: %+v, want isError=%v and text containing %q", c.name, c.args, res, c.isError, c.text)
		}
	}
}

func TestRemoteRefNotFollowed(t *testing.T) {
	r := registry.New(registry.Options{})
	defer r.Close()
	err := r.AddTool(registry.Tool{
		Name:        "evil",
		InputSchema: json.RawMessage(`{"$ref":"http://127.0.0.1:1/schema.json"}`),
		Handler:     func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil },
	})
	if err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("a schema with a remote $ref: %v", err)
	}
}

func TestConcurrentDispatch(t *testing.T) {
	refreshed := make(chan error, 100)
	r := registry.New(registry.Options{OnRefresh: func(_ string, err error) { refreshed <- err }})
	defer r.Close()
	srv := newServer("a", "echo")
	s, _ := connect(t, srv, legacy)
	if err := r.AddServer(testContext(t), "a", s, nil); err != nil {
		t.Fatal(err)
	}
	echo, _ := registry.Func("local", "", func(ctx context.Context, in struct{ N int }) (string, error) { return fmt.Sprint(in.N), nil })
	r.AddTool(echo)
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name, want := "echo", fmt.Sprintf(`a:echo {"n":%d}`, i)
			if i%2 == 1 {
				name, want = "local", fmt.Sprint(i)
			}
			args := fmt.Sprintf(`{"n":%d}`, i)
			if name == "local" {
				args = fmt.Sprintf(`{"N":%d}`, i)
			}
			res := r.Dispatch(testContext(t), registry.Call{ID: fmt.Sprint(i), Name: name, Arguments: json.RawMessage(args)})
			if res.IsError || res.Text() != want || res.ID != fmt.Sprint(i) {
				errs <- fmt.Sprintf("call %d: %+v", i, res)
			}
			if i%10 == 0 {
				_ = r.Tools()
			}
		}()
		if i == 50 {
			// A refresh in the middle of the calls.
			srv.NotifyToolsListChanged(testContext(t))
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	<-refreshed
}

// TestSchemaDialects: the metaschemas of the drafts servers use are built
// in, so a $schema naming one needs no loading (which noLoader refuses).
func TestSchemaDialects(t *testing.T) {
	r := registry.New(registry.Options{})
	defer r.Close()
	for i, dialect := range []string{
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2020-12/schema",
		"http://json-schema.org/draft-04/schema#",
	} {
		name := fmt.Sprint("t", i)
		err := r.AddTool(registry.Tool{
			Name:        name,
			InputSchema: json.RawMessage(`{"$schema":"` + dialect + `","type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
			Handler: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}}, nil
			},
		})
		if err != nil {
			t.Fatalf("%s: %v", dialect, err)
		}
		if res := dispatch(t, r, name, `{}`); !res.IsError {
			t.Errorf("%s: missing required n accepted", dialect)
		}
		if res := dispatch(t, r, name, `{"n":1}`); res.IsError {
			t.Errorf("%s: %s", dialect, res.Text())
		}
	}
}

// TestRequiredDefaultFilledBeforeValidation: a required argument whose
// schema has a default (Playwright MCP's browser_take_screenshot lists
// scale so) is filled in, so that a model's {} that the server would
// accept is not refused, for a server tool and a local tool alike.
func TestRequiredDefaultFilledBeforeValidation(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"scale":{"type":"string","enum":["css","device"],"default":"css"},"type":{"type":"string"}},"required":["scale"]}`)
	srv := mcptest.New(mcptest.Options{ServerInfo: mcp.Implementation{Name: "shots", Version: "1"}})
	srv.AddTool(mcp.Tool{Name: "screenshot", InputSchema: schema}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		req.BindArguments(&args)
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(args))}}, nil
	})
	r := registry.New(registry.Options{})
	defer r.Close()
	s, _ := connect(t, srv, nil)
	if err := r.AddServer(testContext(t), "shots", s, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.AddTool(registry.Tool{Name: "local", InputSchema: schema, Handler: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(args))}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"screenshot", "local"} {
		for args, want := range map[string]string{
			`{}`:                              `{"scale":"css"}`,
			``:                                `{"scale":"css"}`,
			`{"type":"png"}`:                  `{"scale":"css","type":"png"}`,
			`{"scale":"device"}`:              `{"scale":"device"}`,
			`{"type":"png","scale":"device"}`: `{"type":"png","scale":"device"}`, // complete: sent as it came
		} {
			res := dispatch(t, r, tool, args)
			if res.IsError || res.Text() != want {
				t.Errorf("%s %s: %+v, want the arguments %s", tool, args, res, want)
			}
		}
		if res := dispatch(t, r, tool, `{"scale":"huge"}`); !res.IsError {
			t.Errorf("%s: a value the schema forbids went through: %+v", tool, res)
		}
	}
}

// TestMissingArgumentsNamedAtOnce: every required argument left out is
// named in the one error result, not the first alone.
func TestMissingArgumentsNamedAtOnce(t *testing.T) {
	r := registry.New(registry.Options{})
	defer r.Close()
	if err := r.AddTool(registry.Tool{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		Handler: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	res := dispatch(t, r, "add", `{}`)
	if !res.IsError || !strings.Contains(res.Text(), `"a"`) || !strings.Contains(res.Text(), `"b"`) {
		t.Errorf("result %q does not name both a and b", res.Text())
	}
}

// TestClashErrorIsShort: a server whose every tool clashes (the same
// server twice) gets one short error naming a few of them and the cure,
// not one paragraph per tool.
func TestClashErrorIsShort(t *testing.T) {
	var tools []string
	for i := range 30 {
		tools = append(tools, fmt.Sprintf("tool-%02d", i))
	}
	r := registry.New(registry.Options{})
	defer r.Close()
	sa, _ := connect(t, newServer("a", tools...), nil)
	sb, _ := connect(t, newServer("b", tools...), nil)
	if err := r.AddServer(testContext(t), "a", sa, nil); err != nil {
		t.Fatal(err)
	}
	err := r.AddServer(testContext(t), "b", sb, nil)
	if !errors.Is(err, registry.ErrClash) {
		t.Fatalf("err = %v, want ErrClash", err)
	}
	var ce *registry.ClashError
	if !errors.As(err, &ce) || ce.Server != "b" || len(ce.Names) != 30 || len(ce.Owners) != 1 || ce.Owners[0] != `server "a"` {
		t.Errorf("ClashError %+v", ce)
	}
	msg := err.Error()
	if len(msg) > 250 || !strings.Contains(msg, `30 tool names are taken by server "a"`) || !strings.Contains(msg, "and 26 more") || !strings.Contains(msg, "registry.Prefix") {
		t.Errorf("message (%d bytes): %s", len(msg), msg)
	}
}

// TestToolsFollowEveryChange: Tools, which sorts once per change and
// copies since, and Generation see every change: a local tool, a server
// added, listed again after list_changed, and removed. What Tools returns
// is the caller's own.
func TestToolsFollowEveryChange(t *testing.T) {
	refreshed := make(chan error, 10)
	r := registry.New(registry.Options{OnRefresh: func(_ string, err error) { refreshed <- err }})
	defer r.Close()
	names := func() []string {
		var out []string
		for _, d := range r.Tools() {
			out = append(out, d.Name)
		}
		return out
	}
	step := func(what string, want ...string) {
		t.Helper()
		if got := names(); !slices.Equal(got, want) {
			t.Fatalf("after %s: tools %q, want %q", what, got, want)
		}
	}
	gen := r.Generation()
	moved := func(what string) {
		t.Helper()
		if g := r.Generation(); g == gen {
			t.Errorf("Generation did not move with %s", what)
		} else {
			gen = g
		}
	}
	step("New")
	local, err := registry.Func("zeta", "a local tool", func(context.Context, struct{}) (string, error) { return "z", nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddTool(local); err != nil {
		t.Fatal(err)
	}
	moved("AddTool")
	step("AddTool", "zeta")
	srv := newServer("a", "one")
	s, _ := connect(t, srv, legacy)
	if err := r.AddServer(testContext(t), "a", s, nil); err != nil {
		t.Fatal(err)
	}
	moved("AddServer")
	step("AddServer", "one", "zeta")
	defs := r.Tools()
	defs[0].Name = "mangled"
	step("changing what Tools returned", "one", "zeta")
	if r.Generation() != gen {
		t.Error("Generation moved with nothing changed")
	}

	addTool(srv, "a", "two")
	notifyAndWait(t, srv, refreshed)
	moved("list_changed")
	step("list_changed", "one", "two", "zeta")
	if err := r.RemoveServer("a"); err != nil {
		t.Fatal(err)
	}
	moved("RemoveServer")
	step("RemoveServer", "zeta")
}
