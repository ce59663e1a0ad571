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

// formSchema has what the spec allows in a form: a required field without
// a default, defaults of every primitive kind, a format and an enum array.
const formSchema = `{"type":"object","properties":{
	"name":{"type":"string","minLength":1},
	"email":{"type":"string","format":"email"},
	"greeting":{"type":"string","default":"hello"},
	"count":{"type":"integer","minimum":1,"maximum":100,"default":42},
	"ratio":{"type":"number","default":0.5},
	"ok":{"type":"boolean","default":true},
	"color":{"type":"string","enum":["red","green"],"default":"green"},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"default":["a"]}
},"required":["name"]}`

func elicitParams(schema string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"message": "tell me", "requestedSchema": json.RawMessage(schema)})
	return b
}

// TestElicitFormDefaultsAndValidation: the engine fills the requested
// schema's defaults into an accepted answer and refuses, with a typed
// error, an answer that still breaks the schema. Handlers.Serve is the one
// path every wire uses, so it is tested directly.
func TestElicitFormDefaultsAndValidation(t *testing.T) {
	answer := func(res *mcp.ElicitResult) *transport.Handlers {
		return &transport.Handlers{Elicitation: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return res, nil }}
	}
	ctx := context.Background()

	t.Run("defaults", func(t *testing.T) {
		out, err := answer(&mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada", "count": 7}}).
			Serve(ctx, mcp.MethodElicitationCreate, elicitParams(formSchema))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(out.(*mcp.ElicitResult).Content)
		want := `{"color":"green","count":7,"greeting":"hello","name":"Ada","ok":true,"ratio":0.5,"tags":["a"]}`
		if string(got) != want {
			t.Fatalf("content %s, want %s", got, want)
		}
	})

	t.Run("empty accept takes every default", func(t *testing.T) {
		schema := `{"type":"object","properties":{"n":{"type":"integer","default":3},"s":{"type":"string"}}}`
		out, err := answer(&mcp.ElicitResult{Action: mcp.ElicitAccept}).Serve(ctx, mcp.MethodElicitationCreate, elicitParams(schema))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(out.(*mcp.ElicitResult).Content); string(got) != `{"n":3}` {
			t.Fatalf("content %s", got)
		}
	})

	for name, content := range map[string]map[string]any{
		"missing required": {},
		"bad format":       {"name": "Ada", "email": "not an address"},
		"out of range":     {"name": "Ada", "count": 1000},
		"not in enum":      {"name": "Ada", "color": "blue"},
		"wrong type":       {"name": "Ada", "ok": "yes"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := answer(&mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content}).
				Serve(ctx, mcp.MethodElicitationCreate, elicitParams(formSchema))
			var ce *transport.ElicitationContentError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want an ElicitationContentError", err)
			}
		})
	}

	t.Run("decline drops content", func(t *testing.T) {
		out, err := answer(&mcp.ElicitResult{Action: mcp.ElicitDecline, Content: map[string]any{"name": "secret"}}).
			Serve(ctx, mcp.MethodElicitationCreate, elicitParams(formSchema))
		if err != nil || out.(*mcp.ElicitResult).Content != nil {
			t.Fatalf("decline: %+v %v", out, err)
		}
	})

	for name, schema := range map[string]string{
		"nested object": `{"type":"object","properties":{"a":{"type":"object","properties":{}}}}`,
		"not an object": `{"type":"string"}`,
		"array of any":  `{"type":"object","properties":{"a":{"type":"array"}}}`,
		"bad keyword":   `{"type":"object","properties":{"a":{"type":"string","minLength":"x"}}}`,
	} {
		t.Run("schema "+name, func(t *testing.T) {
			called := false
			h := &transport.Handlers{Elicitation: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				called = true
				return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
			}}
			_, err := h.Serve(ctx, mcp.MethodElicitationCreate, elicitParams(schema))
			var rpcErr *mcp.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidParams || called {
				t.Fatalf("err = %v, handler called %v; want -32602 before the handler", err, called)
			}
		})
	}
}

// TestElicitationContentErrorAnsweredAsError: a legacy server asking
// through elicitation/create gets a JSON-RPC error, not an accept, when the
// handler's answer breaks the schema.
func TestElicitationContentErrorAnsweredAsError(t *testing.T) {
	answered := make(chan *mcp.Message, 1)
	f, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		if m.IsResponse() {
			answered <- m
			return nil
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	}))
	connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		Elicitation: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"email": "nope"}}, nil
		},
	}})
	req := &mcp.Message{ID: mcp.StringID("s1"), Method: mcp.MethodElicitationCreate, Params: elicitParams(formSchema)}
	if err := f.conn.Write(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-answered:
		if m.Error == nil || m.Error.Code != mcp.CodeInternalError || m.Result != nil {
			t.Fatalf("answer %+v, want a -32603 error", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}
