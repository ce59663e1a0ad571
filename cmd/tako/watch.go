package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// resourceSubscriber is a transport that subscribes to one resource's
// updates (a Session; transport.Transport has no such method, since gRPC
// carries no notifications).
type resourceSubscriber interface {
	SubscribeResource(ctx context.Context, p *mcp.SubscribeParams, fn func(*mcp.ResourceUpdatedParams)) error
}

// watchCommand implements `tako watch [URI ...]`: it subscribes to the
// resources URI ... and prints every notification the server sends until
// ctx ends (Ctrl-C, or --timeout when given), which is a success, or the
// connection does, which is not.
func watchCommand(inv *invocation) (operation, error) {
	for _, u := range inv.args {
		if strings.TrimSpace(u) == "" {
			return nil, usagef("watch takes resource URIs, not an empty one")
		}
	}
	uris := inv.args
	return func(ctx context.Context, t transport.Transport, stdout, stderr io.Writer) error {
		info := t.ServerInfo()
		if !info.Notifications {
			return usagef("this transport carries no notifications (gRPC): there is nothing to watch")
		}
		w := &watcher{t: t, out: &lockedWriter{w: stdout}, raw: inv.opts.raw(), level: inv.opts.logLevel, lists: map[string][]string{}}
		unsubscribe := t.Subscribe(func(n mcp.Notification) { w.notify(ctx, n) })
		defer func() {
			unsubscribe()
			w.mu.Lock()
			w.closing = true // a notification still being delivered starts nothing
			w.mu.Unlock()
			w.wg.Wait()
		}()
		// The lists as they are now, to tell what a change added.
		w.relist(ctx, "tools", false)
		w.relist(ctx, "prompts", false)
		w.relist(ctx, "resources", false)
		if len(uris) > 0 {
			rs, ok := t.(resourceSubscriber)
			if !ok {
				return usagef("this transport cannot subscribe to resources")
			}
			for _, u := range uris {
				if err := rs.SubscribeResource(ctx, &mcp.SubscribeParams{URI: u}, func(p *mcp.ResourceUpdatedParams) { w.updated(p) }); err != nil {
					if errors.Is(err, transport.ErrCapability) {
						return usagef("%s does not offer resource subscriptions (resources.subscribe)", serverLabel(info))
					}
					return &stageError{stage: mcp.MethodResourcesSubscribe + " " + u, err: err}
				}
			}
		}
		what := "list changes and log messages"
		if len(uris) > 0 {
			what = fmt.Sprintf("updates of %d resource(s), ", len(uris)) + what
		}
		fmt.Fprintf(stderr, "tako: watching %s for %s (Ctrl-C stops)\n", serverLabel(info), what)
		select {
		case <-ctx.Done():
			return nil // the watch ends as asked
		case <-sessionDone(t):
			if err, ok := t.(interface{ Err() error }); ok && err.Err() != nil {
				return err.Err()
			}
			return fmt.Errorf("the connection ended: %w", transport.ErrConnectionLost)
		}
	}, nil
}

// watcher prints the notifications of tako watch.
type watcher struct {
	t     transport.Transport
	out   io.Writer
	raw   bool
	level mcp.LoggingLevel
	wg    sync.WaitGroup

	mu      sync.Mutex
	lists   map[string][]string // the names of each list, as last listed
	closing bool                // the watch ends: no more listings (wg)
}

// line prints one notification, after the time.
func (w *watcher) line(format string, args ...any) {
	fmt.Fprintf(w.out, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// notify runs on the transport's goroutine: it prints, and leaves the
// listing a change calls for to a goroutine of its own.
func (w *watcher) notify(ctx context.Context, n mcp.Notification) {
	if n.Method == mcp.NotificationResourceUpdated {
		return // printed by the subscription's callback (updated)
	}
	if w.raw {
		w.json(n)
		return
	}
	switch n.Method {
	case mcp.NotificationMessage:
		var p mcp.LoggingMessageParams
		if json.Unmarshal(n.Params, &p) != nil {
			return
		}
		if r := levelRank(p.Level); w.level != "" && r >= 0 && r < levelRank(w.level) {
			return
		}
		w.line("%s", logText(&p))
	case mcp.NotificationToolsListChanged, mcp.NotificationPromptsListChanged, mcp.NotificationResourcesListChanged:
		what := strings.TrimSuffix(strings.TrimPrefix(n.Method, "notifications/"), "/list_changed")
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.closing {
			return
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.relist(ctx, what, true)
		}()
	default:
		w.line("notification %s", cleanLine(n.Method))
	}
}

// updated prints a resource update.
func (w *watcher) updated(p *mcp.ResourceUpdatedParams) {
	if w.raw {
		params, _ := json.Marshal(p)
		w.json(mcp.Notification{Method: mcp.NotificationResourceUpdated, Params: params})
		return
	}
	w.line("resource updated: %s", cleanLine(p.URI))
}

// json prints a notification as the protocol has it, on one line.
func (w *watcher) json(n mcp.Notification) {
	var params json.RawMessage
	if len(n.Params) > 0 {
		params = json.RawMessage(compactJSON(n.Params))
	}
	b, err := json.Marshal(struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params,omitempty"`
	}{n.Method, params})
	if err == nil {
		fmt.Fprintf(w.out, "%s\n", b)
	}
}

// relist lists what again and, when report is set, prints what changed.
func (w *watcher) relist(ctx context.Context, what string, report bool) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	caps := w.t.ServerInfo().Capabilities
	var names []string
	var err error
	switch what {
	case "tools":
		if caps.Tools == nil && !report {
			return
		}
		var l []mcp.Tool
		l, err = w.t.ListTools(ctx)
		for _, x := range l {
			names = append(names, x.Name)
		}
	case "prompts":
		if caps.Prompts == nil && !report {
			return
		}
		var l []mcp.Prompt
		l, err = w.t.ListPrompts(ctx)
		for _, x := range l {
			names = append(names, x.Name)
		}
	case "resources":
		if caps.Resources == nil && !report {
			return
		}
		var l []mcp.Resource
		l, err = w.t.ListResources(ctx)
		for _, x := range l {
			names = append(names, x.URI)
		}
	}
	if err != nil {
		if report && ctx.Err() == nil {
			w.line("the %s changed (listing them again failed: %s)", what, cleanLine(err.Error()))
		}
		return
	}
	w.mu.Lock()
	before, known := w.lists[what]
	w.lists[what] = names
	w.mu.Unlock()
	if !report {
		return
	}
	if !known {
		w.line("the %s changed: now %d", what, len(names))
		return
	}
	if diff := nameDiff(before, names); diff != "" {
		w.line("the %s changed: %s", what, diff)
		return
	}
	w.line("the %s changed (the same %d names)", what, len(names))
}
