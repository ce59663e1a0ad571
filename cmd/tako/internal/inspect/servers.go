package inspect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The states of a server.
const (
	stateConnecting = "connecting"
	stateLogin      = "login" // connecting, and a login waits for the person
	stateConnected  = "connected"
	stateFailed     = "failed"
	stateClosed     = "closed"
)

// server is one server of the inspector.
type server struct {
	ins   *Inspector
	id    string
	name  string
	spec  dial.Server // as given: the inspector's wrappers are added per connection
	kind  dial.Kind
	flags []string

	mu      sync.Mutex
	state   string
	err     string
	since   time.Time
	t       transport.Transport
	sess    *transport.Session // nil for gRPC
	conn    *recConn           // nil for gRPC
	info    transport.ServerInfo
	authc   *auth.Client
	authURL string // the login under way, if any
	cancel  context.CancelFunc
	gen     int // connection generation: a late end of an old one is ignored
	unsub   func()
	subs    map[string]bool
	roots   []mcp.Root
	pending map[string]*serverRequest
	nextReq int
	ping    float64 // the last ping's milliseconds
	logs    mcp.LoggingLevel
	pause   bool          // hold rounds answered input_required for the person (requests.go)
	done    chan struct{} // closed when the connection ends (nil when none)
}

// effectiveKind is s.Kind, or the kind its fields imply (as dial has it).
func effectiveKind(s *dial.Server) dial.Kind {
	if s.Kind != "" {
		return s.Kind
	}
	if s.Command != "" {
		return dial.Stdio
	}
	scheme, _, _ := strings.Cut(strings.ToLower(s.URL), "://")
	switch scheme {
	case "http", "https":
		return dial.HTTP
	case "ws", "wss":
		return dial.WebSocket
	case "grpc":
		return dial.GRPC
	}
	return ""
}

// addServer adds a server and connects it in the background.
func (ins *Inspector) addServer(t Target) *server {
	ins.mu.Lock()
	if ins.closed {
		ins.mu.Unlock()
		return nil
	}
	ins.nextID++
	s := &server{ins: ins, id: fmt.Sprintf("s%d", ins.nextID), spec: t.Server, kind: effectiveKind(&t.Server), flags: t.Flags,
		state: stateConnecting, since: time.Now(), subs: map[string]bool{}, pending: map[string]*serverRequest{}, roots: []mcp.Root{}}
	s.name = t.Server.Name
	if s.name == "" {
		s.name = t.Server.DefaultName()
	}
	taken := map[string]bool{}
	for _, o := range ins.servers {
		taken[o.name] = true
	}
	if taken[s.name] {
		for i := 2; ; i++ {
			if n := fmt.Sprintf("%s-%d", s.name, i); !taken[n] {
				s.name = n
				break
			}
		}
	}
	if s.flags == nil {
		s.flags = flagsOf(&t.Server)
	}
	ins.servers = append(ins.servers, s)
	ins.mu.Unlock()
	s.connect()
	return s
}

// server returns the server with that id, or nil.
func (ins *Inspector) server(id string) *server {
	ins.mu.Lock()
	defer ins.mu.Unlock()
	for _, s := range ins.servers {
		if s.id == id {
			return s
		}
	}
	return nil
}

func (ins *Inspector) serverList() []*server {
	ins.mu.Lock()
	defer ins.mu.Unlock()
	return append([]*server(nil), ins.servers...)
}

// remove closes a server and forgets it.
func (ins *Inspector) remove(s *server) {
	s.close()
	ins.mu.Lock()
	for i, o := range ins.servers {
		if o == s {
			ins.servers = append(ins.servers[:i:i], ins.servers[i+1:]...)
			break
		}
	}
	ins.mu.Unlock()
	ins.hist.forget(s.id)
	ins.events.publish("removed", map[string]string{"server": s.id})
}

// connect starts a connection in the background; the page follows it by
// the server's state events.
func (s *server) connect() {
	ctx, cancel := context.WithTimeout(s.ins.ctx, connectTimeout)
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.gen++
	gen := s.gen
	s.cancel = cancel
	s.state, s.err, s.since, s.authURL = stateConnecting, "", time.Now(), ""
	s.mu.Unlock()
	s.publish()
	s.ins.goBackground(func() {
		defer cancel()
		err := s.dial(ctx, gen)
		if err != nil {
			s.mu.Lock()
			if s.gen == gen {
				s.state, s.err, s.authURL = stateFailed, describe(err), ""
			}
			s.mu.Unlock()
			s.ins.log.Warn("inspect: connect", "server", s.name, "err", err)
			s.publish()
		}
	})
}

// describe is an error in a line for the page.
func describe(err error) string {
	var de *dial.Error
	if errors.As(err, &de) {
		return de.Error()
	}
	return err.Error()
}

// dial reaches the server and runs the handshake, then keeps it until
// the connection ends.
func (s *server) dial(ctx context.Context, gen int) error {
	spec := s.spec
	spec.Name = s.name
	if err := s.withAuth(&spec); err != nil {
		return err
	}
	opts := s.sessionOptions()
	var (
		t    transport.Transport
		sess *transport.Session
		rc   *recConn
	)
	switch s.kind {
	case dial.GRPC:
		tr, err := dial.Dial(ctx, spec, opts)
		if err != nil {
			return err
		}
		t = tr
	default:
		if s.kind == dial.HTTP || s.kind == dial.SSE {
			spec.WrapRoundTripper = func(next http.RoundTripper) http.RoundTripper {
				return &netRecorder{next: next, ins: s.ins, server: s.id, onChallenge: s.challenge}
			}
		}
		c, err := dial.DialConn(ctx, spec, opts)
		if err != nil {
			return err
		}
		wc := wrapConn(c, func(dir string, m *mcp.Message) {
			e := s.ins.hist.addMessage(s.id, dir, m)
			s.ins.events.publish("message", e)
		})
		switch w := wc.(type) {
		case pushConn:
			rc = w.recConn
		case *recConn:
			rc = w
		}
		sess, err = transport.Connect(ctx, wc, opts)
		if err != nil {
			return &dial.Error{Server: s.name, Target: targetOf(&spec), Op: "handshake", Err: err}
		}
		t = sess
	}
	done := make(chan struct{})
	s.mu.Lock()
	if s.gen != gen || s.state == stateClosed {
		s.mu.Unlock()
		t.Close()
		return nil
	}
	s.t, s.sess, s.conn, s.info, s.done = t, sess, rc, t.ServerInfo(), done
	s.state, s.err, s.since, s.authURL = stateConnected, "", time.Now(), ""
	s.logs = s.ins.cfg.LogLevel
	s.unsub = t.Subscribe(s.notified)
	s.mu.Unlock()
	s.publish()
	if sess != nil {
		// The session ends by itself when the server goes (a stdio child
		// that exits, a stream that breaks): the page is told.
		s.ins.goBackground(func() {
			select {
			case <-sess.Done():
			case <-done:
				return
			}
			s.mu.Lock()
			ended := s.gen == gen && s.state == stateConnected
			if ended {
				s.state, s.since = stateFailed, time.Now()
				s.err = "the connection ended"
				if err := sess.Err(); err != nil {
					s.err = "the connection ended: " + describe(err)
				}
				if rc != nil {
					if tail := strings.TrimSpace(rc.Stderr()); tail != "" {
						s.err += "; stderr: " + lastLines(tail, 5)
					}
				}
			}
			s.mu.Unlock()
			if ended {
				s.publish()
			}
		})
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// sessionOptions are the session options of the server: the handlers
// that bring the server's requests to the person (requests.go), the roots
// edited in the page, the log level.
func (s *server) sessionOptions() *transport.Options {
	return &transport.Options{
		ClientInfo: mcp.Implementation{Name: "tako-inspect", Version: transport.Version},
		Handlers: transport.Handlers{
			Elicitation:    s.elicit,
			ElicitationURL: true,
			Sampling:       s.sample,
			Roots:          s.listRoots,
		},
		Logger:     s.ins.log,
		LogLevel:   s.ins.cfg.LogLevel,
		Middleware: []transport.Middleware{s.pauseAtInputRequired},
	}
}

// notified publishes a notification of the server that is not tied to
// one call (logs, list changes, resource updates).
func (s *server) notified(n mcp.Notification) {
	s.ins.events.publish("notification", map[string]any{"server": s.id, "method": n.Method, "params": n.Params, "time": time.Now()})
}

// transport returns the connected Transport, or an error for the page.
func (s *server) transport() (transport.Transport, *transport.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t == nil || s.state != stateConnected {
		return nil, nil, &apiError{status: http.StatusConflict, msg: fmt.Sprintf("%s is not connected (%s)", s.name, s.state)}
	}
	return s.t, s.sess, nil
}

// session is s's Session, for an operation only a Session has (gRPC's
// Transport is not one); what names the operation in the refusal.
func (s *server) session(what string) (*transport.Session, error) {
	_, sess, err := s.transport()
	if err != nil {
		return nil, err
	}
	if sess == nil {
		return nil, errNotHere(what)
	}
	return sess, nil
}

// disconnect ends the connection, keeping the server for a reconnect.
func (s *server) disconnect(final string) {
	s.mu.Lock()
	t, unsub, cancel, done := s.t, s.unsub, s.cancel, s.done
	s.t, s.sess, s.conn, s.unsub, s.cancel, s.done = nil, nil, nil, nil, nil, nil
	s.gen++
	s.state, s.since, s.authURL = final, time.Now(), ""
	reqs := s.pending
	s.pending = map[string]*serverRequest{}
	s.subs = map[string]bool{}
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	for _, r := range reqs {
		r.finish(nil, errors.New("the server was disconnected"))
	}
	if done != nil {
		close(done)
	}
	if unsub != nil {
		unsub()
	}
	if t != nil {
		t.Close()
	}
	s.ins.runs.cancelServer(s.id)
	s.publish()
}

func (s *server) close() { s.disconnect(stateClosed) }

// summary is what the page knows of a server.
type summary struct {
	ID       string           `json:"id"`
	Name     string           `json:"name"`
	Kind     dial.Kind        `json:"kind"`
	Target   string           `json:"target"`
	Flags    []string         `json:"flags"`
	State    string           `json:"state"`
	Error    string           `json:"error,omitempty"`
	Since    time.Time        `json:"since"`
	Info     *serverInfo      `json:"info,omitempty"`
	LoginURL string           `json:"loginURL,omitempty"`
	Auth     bool             `json:"auth"`
	Ping     float64          `json:"pingMs,omitempty"`
	LogLevel mcp.LoggingLevel `json:"logLevel,omitempty"`
	Pause    bool             `json:"pause"`
	Subs     []string         `json:"subscriptions"`
	Roots    []mcp.Root       `json:"roots"`
	Pending  []*serverRequest `json:"pending"`
	Session  string           `json:"sessionId,omitempty"`
	// Features says what this transport offers the page: messages (a
	// history of JSON-RPC), network (HTTP), tasks, subscriptions.
	Features map[string]bool `json:"features"`
}

type serverInfo struct {
	Protocol     string                 `json:"protocolVersion"`
	Server       mcp.Implementation     `json:"serverInfo"`
	Capabilities mcp.ServerCapabilities `json:"capabilities"`
	Instructions string                 `json:"instructions,omitempty"`
	Notifies     bool                   `json:"notifications"`
}

func (s *server) summary() summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := summary{ID: s.id, Name: s.name, Kind: s.kind, Target: targetOf(&s.spec), Flags: s.flags, State: s.state, Error: s.err, Since: s.since,
		LoginURL: s.authURL, Auth: s.authc != nil, Ping: s.ping, LogLevel: s.logs, Pause: s.pause, Roots: s.roots, Subs: []string{}, Pending: []*serverRequest{}}
	for u := range s.subs {
		sum.Subs = append(sum.Subs, u)
	}
	for _, r := range s.pending {
		sum.Pending = append(sum.Pending, r)
	}
	if s.t != nil {
		i := s.info
		sum.Info = &serverInfo{Protocol: i.ProtocolVersion, Server: i.Implementation, Capabilities: i.Capabilities, Instructions: i.Instructions, Notifies: i.Notifications}
	}
	if s.conn != nil {
		sum.Session = s.conn.SessionID()
	}
	sum.Features = map[string]bool{
		"messages": s.kind != dial.GRPC,
		"network":  s.kind == dial.HTTP || s.kind == dial.SSE,
		"tasks":    s.kind != dial.GRPC,
		"logLevel": s.kind != dial.GRPC,
		"pause":    s.kind != dial.GRPC,
		"oauth":    s.kind == dial.HTTP || s.kind == dial.SSE || s.kind == dial.WebSocket,
	}
	return sum
}

// publish tells the page the server's state.
func (s *server) publish() { s.ins.events.publish("server", s.summary()) }

// targetOf is what a server runs or reaches, for the page, without the
// secrets a URL may hold.
func targetOf(s *dial.Server) string {
	if s.Command != "" {
		return quoteArgs(append([]string{s.Command}, s.Args...))
	}
	return stripQuery(s.URL)
}
