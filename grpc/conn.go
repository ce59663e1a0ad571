package mcpgrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// NewConn presents c as a transport.Conn that speaks the legacy JSON-RPC
// lifecycle, for code written against *transport.Session (such as the tako
// command). Each request becomes the matching RPC; initialize is answered
// here from c.ServerInfo, so connect with a legacy ProtocolVersion
// (mcp.LatestLegacyVersion) to skip the server/discover probe. Dependent
// requests are answered by c's own Options.Handlers, not the Session's.
// notifications/cancelled cancels the RPC of that request.
//
// The Client is the better Transport where a Transport will do: through a
// Conn, typed errors other than *mcp.Error arrive as JSON-RPC internal
// errors carrying their message. The Conn owns c: Close closes it.
func NewConn(c *Client) transport.Conn {
	return &msgConn{c: c, out: make(chan *mcp.Message, 16), done: make(chan struct{}), inflight: map[string]context.CancelFunc{}}
}

type msgConn struct {
	c    *Client
	out  chan *mcp.Message
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]context.CancelFunc
	closed   bool
}

func (m *msgConn) Read(ctx context.Context) (*mcp.Message, error) {
	select {
	case msg := <-m.out:
		return msg, nil
	case <-m.done:
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (m *msgConn) Write(ctx context.Context, msg *mcp.Message) error {
	switch {
	case msg.IsNotification():
		if msg.Method == mcp.NotificationCancelled {
			var p mcp.CancelledParams
			if json.Unmarshal(msg.Params, &p) == nil {
				m.mu.Lock()
				if cancel := m.inflight[p.RequestID.String()]; cancel != nil {
					cancel()
				}
				m.mu.Unlock()
			}
		}
		return nil
	case !msg.IsRequest():
		// A response: this Conn never sends requests, so there is nothing
		// it could answer.
		return nil
	}
	// The RPC must outlive Write's context, but keeps its deadline.
	base, cancel := context.WithCancel(context.Background())
	if dl, ok := ctx.Deadline(); ok {
		base, cancel = context.WithDeadline(context.Background(), dl)
	}
	key := msg.ID.String()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		cancel()
		return transport.ErrClosed
	}
	m.inflight[key] = cancel
	m.wg.Add(1)
	m.mu.Unlock()
	id, method, params := msg.ID, msg.Method, msg.Params
	go func() {
		defer m.wg.Done()
		defer func() {
			m.mu.Lock()
			delete(m.inflight, key)
			m.mu.Unlock()
			cancel()
		}()
		result, err := m.dispatch(base, method, params)
		var rpcErr *mcp.Error
		if err != nil && !errors.As(err, &rpcErr) {
			err = &mcp.Error{Code: mcp.CodeInternalError, Message: err.Error()}
		}
		resp, merr := mcp.NewResponse(id, result, err)
		if merr != nil {
			resp, _ = mcp.NewResponse(id, nil, &mcp.Error{Code: mcp.CodeInternalError, Message: merr.Error()})
		}
		select {
		case m.out <- resp:
		case <-m.done:
		}
	}()
	return nil
}

func decodeParams[T any](raw json.RawMessage) (*T, error) {
	p := new(T)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, p); err != nil {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: err.Error()}
		}
	}
	return p, nil
}

func (m *msgConn) dispatch(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	c := m.c
	switch method {
	case mcp.MethodInitialize:
		p, err := decodeParams[mcp.InitializeParams](raw)
		if err != nil {
			return nil, err
		}
		info := c.ServerInfo()
		version := p.ProtocolVersion
		if !mcp.IsSupportedVersion(version) || mcp.IsModernVersion(version) {
			version = mcp.LatestLegacyVersion
		}
		return &mcp.InitializeResult{ProtocolVersion: version, Capabilities: info.Capabilities,
			ServerInfo: mcp.Implementation{Name: info.Implementation.Name, Version: "grpc"}, Instructions: info.Instructions}, nil
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodToolsList:
		tools, err := c.ListTools(ctx)
		return &mcp.ListToolsResult{Tools: nonNilSlice(tools)}, err
	case mcp.MethodToolsCall:
		p, err := decodeParams[mcp.CallToolParams](raw)
		if err != nil {
			return nil, err
		}
		return c.CallTool(ctx, p)
	case mcp.MethodResourcesList:
		list, err := c.ListResources(ctx)
		return &mcp.ListResourcesResult{Resources: nonNilSlice(list)}, err
	case mcp.MethodResourcesTemplatesList:
		list, err := c.ListResourceTemplates(ctx)
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: nonNilSlice(list)}, err
	case mcp.MethodResourcesRead:
		p, err := decodeParams[mcp.ReadResourceParams](raw)
		if err != nil {
			return nil, err
		}
		return c.ReadResource(ctx, p)
	case mcp.MethodPromptsList:
		list, err := c.ListPrompts(ctx)
		return &mcp.ListPromptsResult{Prompts: nonNilSlice(list)}, err
	case mcp.MethodPromptsGet:
		p, err := decodeParams[mcp.GetPromptParams](raw)
		if err != nil {
			return nil, err
		}
		return c.GetPrompt(ctx, p)
	case mcp.MethodComplete:
		p, err := decodeParams[mcp.CompleteParams](raw)
		if err != nil {
			return nil, err
		}
		return c.Complete(ctx, p)
	}
	return nil, &mcp.Error{Code: mcp.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %s has no RPC in the gRPC service", method)}
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (m *msgConn) Close() error {
	m.once.Do(func() {
		m.mu.Lock()
		m.closed = true
		for _, cancel := range m.inflight {
			cancel()
		}
		m.mu.Unlock()
		close(m.done)
		m.wg.Wait()
		m.c.Close()
	})
	return nil
}
