package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// server is one registered MCP server.
type server struct {
	reg  *Registry
	name string
	opts ServerOptions

	mu       sync.Mutex
	t        transport.Transport
	unsub    func()
	fetched  time.Time
	restarts int
	dead     error     // why the server is known to be dead
	lastTry  time.Time // of the last restart attempt

	restartMu sync.Mutex // one restart at a time

	wake     chan struct{} // a list_changed arrived
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

func (s *server) transport() transport.Transport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t
}

func (s *server) keep(name string) bool {
	if len(s.opts.Allow) > 0 && !matchAny(s.opts.Allow, name) {
		return false
	}
	return !matchAny(s.opts.Deny, name)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, name); ok || (err != nil && p == name) {
			return true
		}
	}
	return false
}

// subscribe (re)subscribes to t's notifications. Called with s.mu not held.
func (s *server) subscribe(t transport.Transport) {
	unsub := t.Subscribe(func(n mcp.Notification) {
		if fn := s.reg.opts.OnNotification; fn != nil {
			fn(s.name, n)
		}
		if n.Method != mcp.NotificationToolsListChanged {
			return
		}
		// The transport's goroutine must not block: coalesce.
		select {
		case s.wake <- struct{}{}:
		default:
		}
	})
	s.mu.Lock()
	old := s.unsub
	s.unsub = unsub
	s.mu.Unlock()
	if old != nil {
		old()
	}
}

// loop refreshes the tool list whenever a list_changed arrives.
func (s *server) loop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := s.refresh(ctx, false)
		cancel()
		if err != nil {
			s.reg.logger().Warn("refreshing tools after list_changed", "server", s.name, "err", err)
		}
		if f := s.reg.opts.OnRefresh; f != nil {
			f(s.name, err)
		}
	}
}

func (s *server) refresh(ctx context.Context, first bool) error {
	t := s.transport()
	tools, err := t.ListTools(ctx)
	if err != nil {
		return fmt.Errorf("server %q: tools/list: %w", s.name, err)
	}
	if err := s.reg.install(s, tools, first); err != nil {
		return err
	}
	s.mu.Lock()
	s.fetched = time.Now()
	s.mu.Unlock()
	return nil
}

// stale reports whether Refresh should list the server's tools again.
//
// A transport that caches results (transport.ResultCacher: a Session) and
// whose server gave its list a TTL is always asked: it answers from its
// cache while the TTL holds, sending nothing, and list_changed has already
// emptied that cache when the list changed. The registry keeps a clock of
// its own only where there is no such cache to ask: a transport that
// delivers notifications and gave no TTL is kept current by list_changed
// and not listed again; one without notifications (gRPC) is listed again
// once its list is older than the TTL the server gave (transport.ListTTL),
// or than fallback when it gave none.
func (s *server) stale(fallback time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead != nil {
		return false
	}
	ttl, hasTTL := time.Duration(0), false
	if lt, ok := s.t.(transport.ListTTL); ok {
		ttl, hasTTL = lt.TTL(mcp.MethodToolsList)
	}
	if c, ok := s.t.(transport.ResultCacher); ok && c.CachesResults() && hasTTL && ttl > 0 {
		return true
	}
	if s.t.ServerInfo().Notifications {
		return false
	}
	if !hasTTL {
		ttl = fallback
	}
	return time.Since(s.fetched) >= ttl
}

// shutdown stops the refresh loop and closes the transport.
func (s *server) shutdown() error {
	var err error
	s.stopOnce.Do(func() {
		close(s.stop)
		s.wg.Wait()
		s.mu.Lock()
		t, unsub := s.t, s.unsub
		s.dead = errClosed
		s.mu.Unlock()
		if unsub != nil {
			unsub()
		}
		err = t.Close()
	})
	return err
}

// doner is the optional part of a Transport that says when it has ended;
// Session has it.
type doner interface {
	Done() <-chan struct{}
	Err() error
}

// deadReason reports why t is known to be unusable, or nil.
func (s *server) deadReason() (transport.Transport, error) {
	s.mu.Lock()
	t, dead := s.t, s.dead
	s.mu.Unlock()
	if dead != nil {
		return t, dead
	}
	if d, ok := t.(doner); ok {
		select {
		case <-d.Done():
			err := d.Err()
			if err == nil {
				err = transport.ErrClosed
			}
			s.markDead(t, err)
			return t, err
		default:
		}
	}
	return t, nil
}

func (s *server) markDead(t transport.Transport, err error) {
	s.mu.Lock()
	if s.t == t && s.dead == nil {
		s.dead = err
	}
	s.mu.Unlock()
}

func (s *server) call(ctx context.Context, tool string, args json.RawMessage) Result {
	t, dead := s.deadReason()
	if dead != nil {
		var err error
		if t, err = s.restart(ctx, t, dead); err != nil {
			return errorResult(fmt.Sprintf("tool %q is unavailable: %v", tool, err))
		}
	}
	res, err := t.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if errors.Is(err, transport.ErrClosed) || errors.Is(err, transport.ErrConnectionLost) {
			s.markDead(t, err)
		}
		s.reg.logger().Warn("tool call failed", "server", s.name, "tool", tool, "err", err)
		var rpc *mcp.Error
		if errors.As(err, &rpc) {
			return errorResult(fmt.Sprintf("server %q refused the call to %q: %s (code %d)", s.name, tool, rpc.Message, rpc.Code))
		}
		return errorResult(fmt.Sprintf("calling %q on server %q failed: %v", tool, s.name, err))
	}
	return Result{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}
}

// restart brings a dead server back under its RestartPolicy, or explains
// why it cannot.
func (s *server) restart(ctx context.Context, old transport.Transport, why error) (transport.Transport, error) {
	p := s.opts.Restart
	if p == nil || p.Connect == nil || errors.Is(why, errClosed) {
		return nil, fmt.Errorf("server %q is not running (%v)", s.name, why)
	}
	s.restartMu.Lock()
	defer s.restartMu.Unlock()
	s.mu.Lock()
	if s.t != old && s.dead == nil {
		t := s.t // another call restarted it meanwhile
		s.mu.Unlock()
		return t, nil
	}
	attempts, last := s.restarts, s.lastTry
	s.mu.Unlock()
	max, backoff := p.MaxAttempts, p.Backoff
	if max <= 0 {
		max = 3
	}
	if backoff <= 0 {
		backoff = 500 * time.Millisecond
	}
	if attempts >= max {
		return nil, fmt.Errorf("server %q is not running (%v) and was restarted %d times already", s.name, why, attempts)
	}
	// The first restart after a death is immediate; each restart that
	// follows a failed one waits twice as long as the one before.
	if !last.IsZero() {
		wait := backoff << min(attempts-1, 16)
		if d := time.Until(last.Add(wait)); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			case <-timer.C:
			}
		}
	}
	s.mu.Lock()
	s.restarts++
	s.lastTry = time.Now()
	s.mu.Unlock()
	old.Close()
	t, err := p.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("server %q died (%v) and restarting it failed: %w", s.name, why, err)
	}
	s.mu.Lock()
	select {
	case <-s.stop:
		// Closed while restarting: the new transport has no owner.
		s.mu.Unlock()
		t.Close()
		return nil, fmt.Errorf("server %q: %w", s.name, errClosed)
	default:
	}
	s.t, s.dead, s.lastTry = t, nil, time.Time{}
	s.mu.Unlock()
	s.subscribe(t)
	if err := s.refresh(ctx, false); err != nil {
		s.reg.logger().Warn("listing tools after restart", "server", s.name, "err", err)
	}
	s.reg.logger().Info("server restarted", "server", s.name, "attempt", attempts+1)
	return t, nil
}
