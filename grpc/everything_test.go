package mcpgrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/types/known/structpb"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	pb "github.com/tako-mcp/tako/proto/mcppb"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// requireInstalled skips a test whose peer is missing, and fails it under
// CI, where a skipped interop test would prove nothing.
func requireInstalled(t *testing.T, msg string) { t.Helper(); mcptest.SkipOrFail(t, msg) }

// everythingBackend starts @modelcontextprotocol/server-everything over
// stdio and connects to it with the bridge's dependent-request handlers.
func everythingBackend(t *testing.T, deps *mcpgrpc.Dependents) *transport.Session {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		requireInstalled(t, "node is not on PATH: install Node.js 20 or later, then run `npm ci` in the repository root")
	}
	script, err := filepath.Abs(filepath.Join("..", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		requireInstalled(t, script+" is missing: run `npm ci` in the repository root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := stdio.Start(ctx, &stdio.Options{Command: node, Args: []string{script, "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := transport.Connect(ctx, conn, &transport.Options{Handlers: deps.Handlers()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// TestBridgeEverything runs tako's gRPC client through tako's gRPC bridge,
// over mutual TLS, to the TypeScript reference server on stdio.
func TestBridgeEverything(t *testing.T) {
	p := newPKI(t)
	deps := mcpgrpc.NewDependents()
	backend := everythingBackend(t, deps)
	stls, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertPEM: p.Server.CertPEM, KeyPEM: p.Server.KeyPEM, CAPEM: p.CA.PEM})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{TLS: stls, Dependents: deps, ListTTL: time.Minute})

	ctls, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAPEM: p.CA.PEM, ServerName: "mcp.test"})
	if err != nil {
		t.Fatal(err)
	}
	var sampled []*mcp.CreateMessageParams
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{TLS: ctls, Handlers: transport.Handlers{
		Sampling: func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			sampled = append(sampled, req)
			return &mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"a grpc haiku"}`), Model: "tako-test-model", StopReason: mcp.StopEndTurn}, nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if c.ServerInfo().Notifications {
		t.Error("ServerInfo().Notifications is true on a wire that has none")
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(tools)
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "get-resource-reference", "get-structured-content", "trigger-sampling-request"} {
		if !slices.Contains(names, want) {
			t.Errorf("ListTools lacks %q: %v", want, names)
		}
	}
	if ttl, ok := c.TTL(mcp.MethodToolsList); !ok || ttl != time.Minute {
		t.Errorf("TTL(tools/list) = %v, %v; want 1m", ttl, ok)
	}
	direct, err := backend.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, toolNames(direct)) {
		t.Errorf("tools through the bridge %v, directly %v", names, toolNames(direct))
	}

	call := func(name, args string) *mcp.CallToolResult {
		t.Helper()
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}

	t.Run("text", func(t *testing.T) {
		if got := call("echo", `{"message":"hi over grpc"}`).Text(); got != "Echo: hi over grpc" {
			t.Errorf("echo = %q", got)
		}
	})
	t.Run("image", func(t *testing.T) {
		res := call("get-tiny-image", `{}`)
		want, err := backend.CallTool(ctx, &mcp.CallToolParams{Name: "get-tiny-image", Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		img := findBlock(res, mcp.ContentImage)
		wantImg := findBlock(want, mcp.ContentImage)
		if img == nil || wantImg == nil {
			t.Fatalf("no image block: %+v", res.Content)
		}
		if !img.Data.Equal(wantImg.Data) || img.Data.Base64() != wantImg.Data.Base64() || img.MIMEType != "image/png" {
			t.Errorf("image differs after bytes and back: %d bytes %q, want %d bytes", img.Data.Size(), img.MIMEType, wantImg.Data.Size())
		}
		raw, err := img.Data.Bytes()
		if err != nil || !bytes.HasPrefix(raw, []byte("\x89PNG")) {
			t.Errorf("image is not a PNG: %v", err)
		}
	})
	t.Run("embedded resource", func(t *testing.T) {
		res := call("get-resource-reference", `{"resourceType":"Text","resourceId":3}`)
		r := findBlock(res, mcp.ContentResource)
		if r == nil || r.Resource == nil || r.Resource.Text == nil {
			t.Fatalf("no embedded text resource: %+v", res.Content)
		}
		if r.Resource.URI != "demo://resource/dynamic/text/3" || !strings.Contains(*r.Resource.Text, "Resource 3") {
			t.Errorf("embedded resource = %s %q", r.Resource.URI, *r.Resource.Text)
		}
	})
	t.Run("isError", func(t *testing.T) {
		res := call("get-sum", `{"a":"not a number"}`)
		if !res.IsError {
			t.Errorf("isError not set: %+v", res)
		}
	})
	t.Run("structured content", func(t *testing.T) {
		res := call("get-structured-content", `{"location":"New York"}`)
		var sc struct {
			Temperature *float64 `json:"temperature"`
			Conditions  string   `json:"conditions"`
		}
		if err := json.Unmarshal(res.StructuredContent, &sc); err != nil || sc.Temperature == nil || sc.Conditions == "" {
			t.Errorf("structured content = %s (%v)", res.StructuredContent, err)
		}
	})
	t.Run("sampling as a dependent request", func(t *testing.T) {
		res := call("trigger-sampling-request", `{"prompt":"write a haiku","maxTokens":50}`)
		if res.IsError || !strings.Contains(res.Text(), "a grpc haiku") || !strings.Contains(res.Text(), "tako-test-model") {
			t.Fatalf("result does not carry the sampled answer: %q", res.Text())
		}
		if len(sampled) != 1 {
			t.Fatalf("sampling handler ran %d times", len(sampled))
		}
		s := sampled[0]
		if s.MaxTokens != 50 || s.SystemPrompt != "You are a helpful test server." || len(s.Messages) != 1 || !strings.Contains(string(s.Messages[0].Content), "write a haiku") {
			t.Errorf("sampling request arrived as %+v", s)
		}
	})
	t.Run("resources and prompts", func(t *testing.T) {
		rs, err := c.ListResources(ctx)
		if err != nil || len(rs) == 0 {
			t.Fatalf("ListResources: %d, %v", len(rs), err)
		}
		read, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: rs[0].URI})
		if err != nil || len(read.Contents) == 0 {
			t.Fatalf("ReadResource(%s): %v", rs[0].URI, err)
		}
		// Text and binary resources alike come through the bridge as the
		// server sent them: a blob arrives as gRPC bytes, held as such,
		// and marshals to the server's own base64.
		blobs := 0
		uris := []string{"demo://resource/dynamic/blob/1", "demo://resource/dynamic/text/1"}
		for _, r := range rs[:min(len(rs), 3)] {
			uris = append(uris, r.URI)
		}
		for _, uri := range uris {
			got, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("ReadResource(%s): %v", uri, err)
			}
			want, err := backend.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			for _, rc := range got.Contents {
				if rc.Blob != nil {
					blobs++
				}
			}
			g, _ := json.Marshal(got.Contents)
			w, _ := json.Marshal(want.Contents)
			if string(g) != string(w) {
				t.Errorf("ReadResource(%s) through gRPC:\n%.300s\nwant\n%.300s", uri, g, w)
			}
		}
		if blobs == 0 {
			t.Error("no binary resource read: the blob path went untested")
		}
		if _, err := c.ListResourceTemplates(ctx); err != nil {
			t.Errorf("ListResourceTemplates: %v", err)
		}
		ps, err := c.ListPrompts(ctx)
		if err != nil || len(ps) == 0 {
			t.Fatalf("ListPrompts: %d, %v", len(ps), err)
		}
		for _, pr := range ps {
			if len(pr.Arguments) == 0 {
				got, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: pr.Name})
				if err != nil || len(got.Messages) == 0 {
					t.Errorf("GetPrompt(%s): %v", pr.Name, err)
				}
				break
			}
		}
	})
	t.Run("unknown resource is an mcp.Error", func(t *testing.T) {
		_, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://no/such/thing"})
		var rpcErr *mcp.Error
		if !errors.As(err, &rpcErr) {
			t.Fatalf("err = %v, want an *mcp.Error", err)
		}
	})

	// A client generated straight from the .proto with plain grpc-go, not
	// tako's client: the wire is the proto's, not a private one.
	t.Run("plain grpc-go stub", func(t *testing.T) {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(ctls)))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		stub := pb.NewMcpClient(cc)
		resp, err := stub.ListTools(ctx, &pb.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var stubNames []string
		for _, tool := range resp.GetTools() {
			stubNames = append(stubNames, tool.GetName())
		}
		slices.Sort(stubNames)
		if !slices.Equal(stubNames, names) {
			t.Errorf("stub sees %v, tako's client %v", stubNames, names)
		}
		if resp.GetTtl().AsDuration() != time.Minute {
			t.Errorf("ttl = %v", resp.GetTtl().AsDuration())
		}
		args, _ := json.Marshal(map[string]any{"message": "stub"})
		var m map[string]any
		_ = json.Unmarshal(args, &m)
		st, _ := structFrom(m)
		out, err := stub.CallTool(ctx, &pb.CallToolRequest{Request: &pb.CallToolRequest_Request{Name: "echo", Arguments: st}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.GetContent()) != 1 || out.GetContent()[0].GetText().GetText() != "Echo: stub" {
			t.Errorf("stub CallTool = %v", out)
		}
	})
}

func findBlock(res *mcp.CallToolResult, typ string) *mcp.Content {
	for i := range res.Content {
		if res.Content[i].Type == typ {
			return &res.Content[i]
		}
	}
	return nil
}

func toolNames(tools []mcp.Tool) []string {
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = tools[i].Name
	}
	slices.Sort(names)
	return names
}

func structFrom(m map[string]any) (*structpb.Struct, error) { return structpb.NewStruct(m) }
