package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The operations of the pages. Each is bounded by opCtx (a minute, and
// the page's request); tool calls are runs of their own (runs.go).

// on runs one operation on s's transport, bounded by opCtx, and records
// it as method (name, params) in s's history; note makes what the history
// keeps of the answer (a count for a list), the answer itself when nil.
func on[R any](ins *Inspector, s *server, r *http.Request, method, name string, params any, call func(context.Context, transport.Transport) (R, error), note func(R) any) (res R, start time.Time, err error) {
	t, _, err := s.transport()
	if err != nil {
		return res, start, err
	}
	ctx, cancel := ins.opCtx(r)
	defer cancel()
	start = time.Now()
	res, err = call(ctx, t)
	var kept any = res
	if note != nil {
		kept = note(res)
	}
	s.record(method, name, params, kept, err, time.Since(start))
	return res, start, err
}

// shown keeps an answer that the page shows whole (a resource read, a
// prompt's messages) as a run, so that a large one is cut and downloaded
// as a tool result is.
func shown[R any](s *server, method, name string, res *R, err error, start time.Time) any {
	var raw []byte
	if res != nil {
		raw, _ = json.Marshal(res)
	}
	return s.keepRun(method, name, raw, err, start)
}

func (ins *Inspector) apiPing(s *server, r *http.Request) (any, error) {
	t, sess, err := s.transport()
	if err != nil {
		return nil, err
	}
	ctx, cancel := ins.opCtx(r)
	defer cancel()
	start := time.Now()
	if sess != nil {
		err = sess.Ping(ctx)
	} else {
		err = transport.Call(ctx, t, mcp.MethodPing, nil, nil)
	}
	d := time.Since(start)
	s.record(mcp.MethodPing, "", nil, nil, err, d)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.ping = ms(d)
	s.mu.Unlock()
	s.publish()
	return map[string]float64{"ms": ms(d)}, nil
}

func (ins *Inspector) apiTools(s *server, r *http.Request) (any, error) {
	tools, _, err := on(ins, s, r, mcp.MethodToolsList, "", nil,
		func(ctx context.Context, t transport.Transport) ([]mcp.Tool, error) { return t.ListTools(ctx) },
		func(l []mcp.Tool) any { return map[string]int{"tools": len(l)} })
	if err != nil {
		return nil, err
	}
	return map[string]any{"tools": nonNil(tools)}, nil
}

func (ins *Inspector) apiResources(s *server, r *http.Request) (any, error) {
	res, _, err := on(ins, s, r, mcp.MethodResourcesList, "", nil,
		func(ctx context.Context, t transport.Transport) ([]mcp.Resource, error) { return t.ListResources(ctx) },
		func(l []mcp.Resource) any { return map[string]int{"resources": len(l)} })
	if err != nil {
		return nil, err
	}
	tmpl, _, err := on(ins, s, r, mcp.MethodResourcesTemplatesList, "", nil,
		func(ctx context.Context, t transport.Transport) ([]mcp.ResourceTemplate, error) {
			return t.ListResourceTemplates(ctx)
		},
		func(l []mcp.ResourceTemplate) any { return map[string]int{"resourceTemplates": len(l)} })
	if err != nil {
		return nil, err
	}
	return map[string]any{"resources": nonNil(res), "templates": nonNil(tmpl)}, nil
}

func (ins *Inspector) apiRead(s *server, r *http.Request) (any, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := readJSON(r, &p); err != nil {
		return nil, err
	}
	res, start, err := on(ins, s, r, mcp.MethodResourcesRead, p.URI, p,
		func(ctx context.Context, t transport.Transport) (*mcp.ReadResourceResult, error) {
			return t.ReadResource(ctx, &mcp.ReadResourceParams{URI: p.URI})
		}, nil)
	if errors.As(err, new(*apiError)) {
		return nil, err
	}
	return shown(s, mcp.MethodResourcesRead, p.URI, res, err, start), nil
}

// apiSubscribe subscribes to a resource's updates (or, with off, ends
// the subscription); each update is an "updated" event.
func (ins *Inspector) apiSubscribe(s *server, r *http.Request) (any, error) {
	var p struct {
		URI string `json:"uri"`
		Off bool   `json:"off"`
	}
	if err := readJSON(r, &p); err != nil {
		return nil, err
	}
	sess, err := s.session("subscribing to a resource")
	if err != nil {
		return nil, err
	}
	ctx, cancel := ins.opCtx(r)
	defer cancel()
	if p.Off {
		err = sess.UnsubscribeResource(ctx, &mcp.SubscribeParams{URI: p.URI})
	} else {
		id := s.id
		err = sess.SubscribeResource(ctx, &mcp.SubscribeParams{URI: p.URI}, func(u *mcp.ResourceUpdatedParams) {
			ins.events.publish("updated", map[string]any{"server": id, "uri": u.URI, "time": time.Now()})
		})
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if p.Off {
		delete(s.subs, p.URI)
	} else {
		s.subs[p.URI] = true
	}
	s.mu.Unlock()
	s.publish()
	return s.summary(), nil
}

func (ins *Inspector) apiPrompts(s *server, r *http.Request) (any, error) {
	list, _, err := on(ins, s, r, mcp.MethodPromptsList, "", nil,
		func(ctx context.Context, t transport.Transport) ([]mcp.Prompt, error) { return t.ListPrompts(ctx) },
		func(l []mcp.Prompt) any { return map[string]int{"prompts": len(l)} })
	if err != nil {
		return nil, err
	}
	return map[string]any{"prompts": nonNil(list)}, nil
}

func (ins *Inspector) apiGetPrompt(s *server, r *http.Request) (any, error) {
	var p mcp.GetPromptParams
	if err := readJSON(r, &p); err != nil {
		return nil, err
	}
	res, start, err := on(ins, s, r, mcp.MethodPromptsGet, p.Name, p,
		func(ctx context.Context, t transport.Transport) (*mcp.GetPromptResult, error) {
			return t.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: p.Arguments})
		}, nil)
	if errors.As(err, new(*apiError)) {
		return nil, err
	}
	return shown(s, mcp.MethodPromptsGet, p.Name, res, err, start), nil
}

func (ins *Inspector) apiComplete(s *server, r *http.Request) (any, error) {
	var p mcp.CompleteParams
	if err := readJSON(r, &p); err != nil {
		return nil, err
	}
	res, _, err := on(ins, s, r, mcp.MethodComplete, p.Argument.Name, p,
		func(ctx context.Context, t transport.Transport) (*mcp.CompleteResult, error) {
			return t.Complete(ctx, &p)
		}, nil)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (ins *Inspector) apiLogLevel(s *server, r *http.Request) (any, error) {
	var p struct {
		Level mcp.LoggingLevel `json:"level"`
	}
	if err := readJSON(r, &p); err != nil {
		return nil, err
	}
	sess, err := s.session("setting the log level")
	if err != nil {
		return nil, err
	}
	ctx, cancel := ins.opCtx(r)
	defer cancel()
	if err := sess.SetLogLevel(ctx, p.Level); err != nil {
		if errors.Is(err, transport.ErrCapability) {
			return nil, &apiError{status: 409, msg: err.Error()}
		}
		return nil, err
	}
	s.mu.Lock()
	s.logs = p.Level
	s.mu.Unlock()
	s.publish()
	return s.summary(), nil
}

func (ins *Inspector) apiTasks(s *server, r *http.Request) (any, error) {
	sess, err := s.session("tasks")
	if err != nil {
		return nil, err
	}
	ctx, cancel := ins.opCtx(r)
	defer cancel()
	list, err := sess.ListTasks(ctx)
	if err != nil {
		if errors.Is(err, transport.ErrCapability) {
			return map[string]any{"tasks": []any{}, "note": err.Error()}, nil
		}
		return nil, err
	}
	out := make([]map[string]any, len(list))
	for i, ti := range list {
		out[i] = taskView(ti)
	}
	return map[string]any{"tasks": out}, nil
}

// apiTask is a task's get, result or cancel.
func (ins *Inspector) apiTask(s *server, r *http.Request) (any, error) {
	sess, err := s.session("tasks")
	if err != nil {
		return nil, err
	}
	ctx, cancel := ins.opCtx(r)
	defer cancel()
	id := r.PathValue("task")
	switch r.PathValue("op") {
	case "get":
		ti, err := sess.GetTask(ctx, &mcp.GetTaskParams{TaskID: id})
		if err != nil {
			return nil, err
		}
		return taskView(ti), nil
	case "result":
		start := time.Now()
		res, err := sess.TaskResult(ctx, &mcp.GetTaskPayloadParams{TaskID: id})
		var raw []byte
		if res != nil {
			raw, _ = json.Marshal(res)
		}
		return s.keepRun(mcp.MethodTasksResult, id, raw, err, start), nil
	case "cancel":
		if err := sess.CancelTask(ctx, &mcp.CancelTaskParams{TaskID: id}); err != nil {
			return nil, err
		}
		s.withdrawTaskRequests(id)
		return nil, nil
	}
	return nil, &apiError{status: 404, msg: "a task is got, its result fetched, or cancelled"}
}

// apiLogin runs a new login at an http or ws server, in the background
// (the person is at the browser); the page follows it in the OAuth view.
func (ins *Inspector) apiLogin(s *server, _ *http.Request) (any, error) {
	s.mu.Lock()
	ac, state := s.authc, s.state
	s.mu.Unlock()
	if ac == nil {
		if s.kind != dial.HTTP && s.kind != dial.SSE && s.kind != dial.WebSocket {
			return nil, errNotHere("OAuth")
		}
		return nil, &apiError{status: 409, msg: "connect first: the login starts when the server asks for one"}
	}
	ins.goBackground(func() {
		ctx, cancel := context.WithTimeout(ins.ctx, connectTimeout)
		defer cancel()
		err := ac.Login(ctx)
		ins.events.publish("login-done", map[string]string{"server": s.id, "error": errText(err)})
		s.mu.Lock()
		s.authURL = ""
		s.mu.Unlock()
		if err == nil && state != stateConnected {
			s.connect()
			return
		}
		s.publish()
	})
	return nil, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// apiFrame makes a frame's document (frames.go): a resource of the
// server's read now (an MCP App's ui:// resource), or HTML the page has
// (an HTML content block).
func (ins *Inspector) apiFrame(r *http.Request) (any, error) {
	var p struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
		HTML   string `json:"html"`
		App    bool   `json:"app"`
	}
	if err := readJSON(r, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return map[string]string{"url": ins.frames.add([]byte(p.HTML), false)}, nil
	}
	s := ins.server(p.Server)
	if s == nil {
		return nil, &apiError{status: 404, msg: "no such server"}
	}
	t, _, err := s.transport()
	if err != nil {
		return nil, err
	}
	ctx, cancel := ins.opCtx(r)
	defer cancel()
	res, err := t.ReadResource(ctx, &mcp.ReadResourceParams{URI: p.URI})
	if err != nil {
		return nil, err
	}
	for _, c := range res.Contents {
		if !strings.HasPrefix(strings.ToLower(c.MIMEType), "text/html") {
			continue
		}
		b, err := c.Data()
		if err != nil {
			return nil, err
		}
		var meta json.RawMessage
		if c.Meta != nil {
			meta, _ = json.Marshal(c.Meta)
		}
		return map[string]any{"url": ins.frames.add(b, p.App), "meta": meta, "mimeType": c.MIMEType}, nil
	}
	return nil, &apiError{status: 422, msg: p.URI + " has no text/html content"}
}
