package orchestrator

// Design note.
//
// The agent owns the loop and nothing under it: a turn is a Refresh of the
// registry (servers without notifications are listed again when their
// lists are old), one Provider.Complete with the system prompt (and, with
// IncludeInstructions, the servers' instructions), the conversation and
// the registry's tools, and then the turn's tool calls through
// registry.Dispatch. Tool semantics (names, schemas, error results,
// restarts) are the registry's, the wire is the transports', the model's
// API the Provider's; so a new model is one small type, and a tool behaves
// the same under the agent as under any other caller of the registry. How
// the agent reaches and owns its servers is config.go's note.
//
// Concurrency. An Agent may run many Runs at once: each has its own
// messages and Result, and shares the registry (safe for concurrent use),
// the usage total (usageMu) and the calls in flight per server (runningMu,
// for telling which call a log message is about). A turn's tool calls run
// at once, one goroutine each, and the turn waits for all of them; the
// results go back in the model's order whatever order they finish in.
// OnEvent is called with eventMu held, so it is never called twice at
// once; a slow callback slows the agent, as Config says. With Sampling, a server's sampling request
// arrives on that session's handler goroutine and calls the Provider while
// a Run's own turn may be calling it: Provider must be safe for concurrent
// use, as its doc says. The agent's own goroutines (one per server while
// New connects, one per call while a turn runs) end before the function
// that started them returns; the long-lived ones are the registry's and
// the transports'.
//
// Bounded: the turns of a Run (MaxTurns, 20 by default: past them Run
// returns ErrMaxTurns with the conversation so far), each answer's tokens
// (MaxTokens, 4096), the connecting of New (ConnectTimeout, 60 s, when ctx
// has no deadline), a sampling request's tokens (its own maxTokens, else
// MaxTokens). Not bounded here: how many calls the model makes in one turn
// (they all run at once), and how long a turn or a call takes, which is
// the context's to bound.
//
// Refused: a Config without a Provider, a Registry given with Naming or
// Tools (the naming policy is the registry's, and a local tool cannot be
// taken out again), a server configuration that cannot work (before
// anything starts), tool names that clash (New fails and ends what it
// started). A tool that fails, a server that died and arguments that break
// a schema never end a run: they are results the model reads. The agent
// never runs the tools a sampling request offers: they are the server's,
// and go back to it as tool_use blocks (sampling.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// EventKind says what an Event reports.
type EventKind int

// Event kinds, in the order a turn produces them.
const (
	// EventTurnStart: the model is asked for turn Turn.
	EventTurnStart EventKind = iota + 1
	// EventText: a piece of the model's text (streamed) in Text.
	EventText
	// EventTurnEnd: the model answered turn Turn; Response is its answer.
	EventTurnEnd
	// EventToolStart: Call is about to run.
	EventToolStart
	// EventToolEnd: Call finished with Result after Duration.
	EventToolEnd
	// EventToolProgress: Call, still running on Server (empty for a Go
	// tool), reported Progress (notifications/progress, or
	// registry.ReportProgress from a Go tool). Every progress event of a
	// call comes before its EventToolEnd.
	EventToolProgress
	// EventToolLog: Server sent the log message Log. MCP does not tie log
	// messages to requests, so Call (and Turn) is set only when exactly one
	// call was running on that server; log messages also arrive between
	// runs, with Call nil.
	EventToolLog
	// EventSampling: Server's sampling request Sampling was answered by
	// the agent's provider with Response (after Duration).
	EventSampling
)

// Event is a progress report from Run. Which fields are set depends on
// Kind.
type Event struct {
	Kind     EventKind
	Turn     int
	Text     string
	Response *Response
	Call     *ToolCall
	Result   *ToolResult
	Duration time.Duration
	// Server is the server of a tool, progress, log or sampling event;
	// empty for a local tool.
	Server   string
	Progress *mcp.ProgressParams
	Log      *mcp.LoggingMessageParams
	Sampling *mcp.CreateMessageParams
}

// Result is what Run returns.
type Result struct {
	// Text is the model's final answer.
	Text string
	// Messages is the whole conversation, the prompt first.
	Messages []Message
	// Turns is the number of model turns taken.
	Turns int
	// Usage totals the tokens of every turn.
	Usage      Usage
	StopReason StopReason
}

// ErrMaxTurns is returned (with the Result so far) when the model still
// asked for tools after the last allowed turn.
var ErrMaxTurns = errors.New("orchestrator: turn limit reached")

// Agent lets a model call the tools of its servers and its local tools.
// Run may be called again for a new conversation, and from several
// goroutines at once; each Run is its own conversation.
type Agent struct {
	cfg Config
	reg *registry.Registry
	// ownReg says the agent built reg (and closes it); added are the
	// servers the agent put in it.
	ownReg bool
	added  []string

	closeOnce sync.Once
	closeErr  error

	eventMu sync.Mutex

	// running holds the calls in flight per server, to tell which call a
	// log message is likely about.
	runningMu sync.Mutex
	running   map[string][]runningCall

	usageMu sync.Mutex
	usage   Usage

	// tools is the registry's tools as turns offer them, made again only
	// when the registry's Generation moves: a turn that converted 10,000
	// tools anew took 3 ms before the model was asked anything.
	toolsMu sync.Mutex
	tools   *toolSet
}

// toolSet is one conversion of the registry's tools. It is shared by
// every turn that sees the same generation, and never modified.
type toolSet struct {
	gen    uint64
	defs   []ToolDef
	server map[string]string // tool name: its server, "" for a local tool
}

// New connects to every server concurrently, registers their tools and the
// local tools, and returns the Agent. If a server's configuration cannot
// work, nothing is started; if a server cannot be started or its handshake
// fails, or tool names clash, New closes everything it started and returns
// an error naming the server. ctx bounds the connecting, as
// Config.ConnectTimeout does when ctx has no deadline; the servers then
// live until Close, whatever becomes of ctx.
func New(ctx context.Context, cfg Config) (*Agent, error) {
	closeGiven := func() {
		for _, s := range cfg.MCPServers {
			if s.Transport != nil {
				s.Transport.Close()
			}
		}
	}
	switch {
	case cfg.Provider == nil:
		closeGiven()
		return nil, errors.New("orchestrator: Config.Provider is required")
	case cfg.Registry != nil && cfg.Naming != nil:
		closeGiven()
		return nil, errors.New("orchestrator: Config.Naming is empty when Config.Registry is set: the naming policy is the registry's own")
	case cfg.Registry != nil && len(cfg.Tools) > 0:
		closeGiven()
		return nil, errors.New("orchestrator: Config.Tools is empty when Config.Registry is set: add the tools to the registry")
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 20
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4096
	}
	if _, ok := ctx.Deadline(); !ok {
		d := cfg.ConnectTimeout
		if d <= 0 {
			d = 60 * time.Second
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	a := &Agent{cfg: cfg, running: map[string][]runningCall{}}
	var taken []string
	if cfg.Registry != nil {
		a.reg = cfg.Registry
		taken = a.reg.Servers()
	} else {
		a.ownReg = true
		ropts := registry.Options{Naming: cfg.Naming, Logger: cfg.Logger}
		if cfg.OnEvent != nil {
			ropts.OnNotification = a.HandleNotification
		}
		a.reg = registry.New(ropts)
	}
	for _, t := range cfg.Tools {
		if err := a.reg.AddTool(t); err != nil {
			closeGiven()
			a.reg.Close()
			return nil, err
		}
	}
	names, ts, err := a.connectServers(ctx, cfg.MCPServers, taken)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("orchestrator: %w", err)
	}
	for i, t := range ts {
		s := &cfg.MCPServers[i]
		opts := &registry.ServerOptions{Allow: s.Allow, Deny: s.Deny}
		if s.Restart && s.Transport == nil {
			opts.Restart = &registry.RestartPolicy{
				Connect:     func(ctx context.Context) (transport.Transport, error) { return a.dial(ctx, s, names[i]) },
				MaxAttempts: s.MaxRestarts,
			}
		}
		if err := a.reg.AddServer(ctx, names[i], t, opts); err != nil {
			// AddServer closed t; close the rest, which the registry
			// does not own yet.
			closeAll(ts[i+1:])
			a.Close()
			return nil, fmt.Errorf("orchestrator: server %q: %w", names[i], err)
		}
		a.added = append(a.added, names[i])
	}
	return a, nil
}

// Registry returns the agent's tool registry (Config.Registry, when set),
// to list the tools or to add and remove tools and servers while the agent
// lives.
func (a *Agent) Registry() *registry.Registry { return a.reg }

// Usage returns the tokens used by every Run and sampling request so far.
func (a *Agent) Usage() Usage {
	a.usageMu.Lock()
	defer a.usageMu.Unlock()
	return a.usage
}

func (a *Agent) addUsage(u Usage) {
	a.usageMu.Lock()
	a.usage = a.usage.Add(u)
	a.usageMu.Unlock()
}

// Close ends every server and subprocess the agent started: with a
// registry of its own, it closes the registry and every server in it;
// with Config.Registry, it removes the servers of Config.MCPServers from
// it, which ends them, and leaves the program's servers and the registry
// as they are. Close is idempotent.
func (a *Agent) Close() error {
	a.closeOnce.Do(func() {
		if a.ownReg {
			a.closeErr = a.reg.Close()
			return
		}
		var errs []error
		for _, name := range a.added {
			if err := a.reg.RemoveServer(name); err != nil {
				errs = append(errs, err)
			}
		}
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}

func (a *Agent) emit(e Event) {
	if a.cfg.OnEvent == nil {
		return
	}
	a.eventMu.Lock()
	defer a.eventMu.Unlock()
	a.cfg.OnEvent(e)
}

// systemPrompt is the configured prompt plus, when asked, the servers'
// instructions.
func (a *Agent) systemPrompt() string {
	if !a.cfg.IncludeInstructions {
		return a.cfg.SystemPrompt
	}
	var b strings.Builder
	b.WriteString(a.cfg.SystemPrompt)
	for _, name := range a.reg.Servers() {
		t := a.reg.Transport(name)
		if t == nil {
			continue
		}
		ins := strings.TrimSpace(t.ServerInfo().Instructions)
		if ins == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Instructions from the MCP server %q:\n%s", name, ins)
	}
	return b.String()
}

// toolSet returns the registry's tools, converted once per generation.
func (a *Agent) toolSet() *toolSet {
	gen := a.reg.Generation() // before Tools: what Tools returns is at least this new
	a.toolsMu.Lock()
	defer a.toolsMu.Unlock()
	if a.tools != nil && a.tools.gen == gen {
		return a.tools
	}
	defs := a.reg.Tools()
	ts := &toolSet{gen: gen, defs: make([]ToolDef, len(defs)), server: make(map[string]string, len(defs))}
	for i, d := range defs {
		ts.defs[i] = ToolDef{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema}
		ts.server[d.Name] = d.Server
	}
	a.tools = ts
	return ts
}

// Run starts a conversation with prompt and runs it to the model's final
// answer. It returns an error when the provider fails, when ctx ends, and
// (with the Result so far) when the turn limit is reached; a failing tool
// is never an error here: the model sees its error result.
func (a *Agent) Run(ctx context.Context, prompt string) (*Result, error) {
	return a.RunMessages(ctx, []Message{{Role: RoleUser, Content: []mcp.Content{mcp.TextContent(prompt)}}})
}

// RunMessages is Run with a conversation given as messages, the last of
// them the user's.
func (a *Agent) RunMessages(ctx context.Context, messages []Message) (*Result, error) {
	res := &Result{Messages: append([]Message(nil), messages...)}
	for turn := 1; turn <= a.cfg.MaxTurns; turn++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		// Servers without notifications are listed again when their
		// cache runs out; failures are logged by the registry.
		_ = a.reg.Refresh(ctx)
		req := &Request{
			System:      a.systemPrompt(),
			Messages:    res.Messages,
			Tools:       a.toolSet().defs,
			MaxTokens:   a.cfg.MaxTokens,
			Temperature: a.cfg.Temperature,
		}
		a.emit(Event{Kind: EventTurnStart, Turn: turn})
		var stream func(Delta)
		if a.cfg.OnEvent != nil {
			stream = func(d Delta) { a.emit(Event{Kind: EventText, Turn: turn, Text: d.Text}) }
		}
		resp, err := a.cfg.Provider.Complete(ctx, req, stream)
		if err != nil {
			return res, fmt.Errorf("orchestrator: turn %d: %w", turn, err)
		}
		res.Turns = turn
		res.Usage = res.Usage.Add(resp.Usage)
		res.StopReason = resp.StopReason
		a.addUsage(resp.Usage)
		a.emit(Event{Kind: EventTurnEnd, Turn: turn, Response: resp})

		msg := Message{Role: RoleAssistant, ToolCalls: resp.ToolCalls}
		if resp.Text != "" {
			msg.Content = []mcp.Content{mcp.TextContent(resp.Text)}
		}
		res.Messages = append(res.Messages, msg)
		res.Text = resp.Text
		if len(resp.ToolCalls) == 0 {
			return res, nil
		}
		results := a.runTools(ctx, turn, resp.ToolCalls)
		res.Messages = append(res.Messages, Message{Role: RoleUser, ToolResults: results})
	}
	return res, fmt.Errorf("%w (%d turns)", ErrMaxTurns, a.cfg.MaxTurns)
}

// runTools runs one turn's calls in parallel and returns their results in
// the calls' order. Each call asks its server for progress when someone
// listens to events.
func (a *Agent) runTools(ctx context.Context, turn int, calls []ToolCall) []ToolResult {
	servers := a.toolSet().server
	results := make([]ToolResult, len(calls))
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call := calls[i]
			server := servers[call.Name]
			a.emit(Event{Kind: EventToolStart, Turn: turn, Call: &call, Server: server})
			cctx := ctx
			if a.cfg.OnEvent != nil {
				// Server tools report through notifications/progress, Go
				// tools through registry.ReportProgress: both reach here.
				cctx = transport.WithProgress(ctx, func(p mcp.ProgressParams) {
					a.emit(Event{Kind: EventToolProgress, Turn: turn, Call: &call, Server: server, Progress: &p})
				})
				if server != "" {
					done := a.track(server, runningCall{turn: turn, call: &call})
					defer done()
				}
			}
			start := time.Now()
			// Broken JSON from the model, an unknown tool or a failing
			// server all come back as error results the model can read.
			r := a.reg.Dispatch(cctx, call)
			results[i] = r
			a.emit(Event{Kind: EventToolEnd, Turn: turn, Call: &call, Server: server, Result: &r, Duration: time.Since(start)})
		}()
	}
	wg.Wait()
	return results
}

// runningCall is a call in flight, for EventToolLog.
type runningCall struct {
	turn int
	call *ToolCall
}

// track records c as running on server until the returned function is
// called.
func (a *Agent) track(server string, c runningCall) (done func()) {
	a.runningMu.Lock()
	a.running[server] = append(a.running[server], c)
	a.runningMu.Unlock()
	return func() {
		a.runningMu.Lock()
		defer a.runningMu.Unlock()
		rs := a.running[server]
		for i := range rs {
			if rs[i].call == c.call {
				a.running[server] = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
		if len(a.running[server]) == 0 {
			delete(a.running, server)
		}
	}
}

// HandleNotification turns a server's log message into an EventToolLog.
// The agent's own registry calls it; a program that gives the agent its
// Registry calls it from that registry's Options.OnNotification, for the
// agent to report its servers' log messages too. Other notifications are
// ignored.
func (a *Agent) HandleNotification(server string, n mcp.Notification) {
	if n.Method != mcp.NotificationMessage {
		return
	}
	var p mcp.LoggingMessageParams
	if err := json.Unmarshal(n.Params, &p); err != nil {
		return
	}
	e := Event{Kind: EventToolLog, Server: server, Log: &p}
	a.runningMu.Lock()
	if rs := a.running[server]; len(rs) == 1 {
		e.Turn, e.Call = rs[0].turn, rs[0].call
	}
	a.runningMu.Unlock()
	a.emit(e)
}
