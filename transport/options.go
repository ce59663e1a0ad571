package transport

import (
	"context"
	"log/slog"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Version is tako's version, sent as clientInfo.version by default.
const Version = "0.1.0"

// Options configure a Session. The zero value works: tako negotiates the
// newest revision the server speaks, declares no client capabilities, and
// logs nothing.
type Options struct {
	// ClientInfo names the client to the server. Zero means
	// {Name: "tako", Version: Version}.
	ClientInfo mcp.Implementation

	// ProtocolVersion pins the revision to offer. Empty means: probe with
	// server/discover (2026-07-28) and fall back to initialize with
	// 2025-11-25, accepting whatever older revision the server answers.
	// A legacy revision here skips the probe.
	ProtocolVersion string

	// Handlers answer the server's requests (sampling, elicitation, roots)
	// and decide which client capabilities are declared.
	Handlers Handlers

	// Logger receives the engine's diagnostics: dropped messages, answers
	// to unknown ids, handler failures. Nil discards them.
	Logger *slog.Logger

	// CallTimeout bounds each call whose context has no deadline. Zero
	// means no default bound: the context alone decides.
	CallTimeout time.Duration

	// ProbeTimeout bounds the server/discover probe: a server that stays
	// silent that long is taken to be legacy. It also bounds a listing of
	// the tools made on demand for a tool called before it was listed
	// (unlisted.go): past it the call goes on without. Zero means 3
	// seconds.
	ProbeTimeout time.Duration

	// CloseTimeout bounds Close's wait for the reader and handler
	// goroutines after the Conn is closed. Zero means 5 seconds.
	CloseTimeout time.Duration

	// MaxQueuedNotifications bounds the notifications and progress
	// notifications waiting for their callbacks (Subscribe, WithProgress).
	// Past it, new ones are dropped, counted by
	// Session.DroppedNotifications and logged; responses are never
	// dropped. Zero means DefaultMaxQueuedNotifications.
	MaxQueuedNotifications int

	// MaxServerRequests bounds the server-to-client requests (sampling,
	// elicitation, roots, ping) answered at once, each on a goroutine of
	// its own. Past it, a request is refused at once with a JSON-RPC
	// error (-32603, "client busy"), or, when even those answers cannot be
	// written as fast as they come, dropped and logged. Zero means
	// DefaultMaxServerRequests.
	MaxServerRequests int

	// Roots, when non-nil (even empty), is the initial roots list the
	// Session keeps and serves (roots.go): the roots capability is
	// declared, roots/list is answered from the list unless
	// Handlers.Roots is set, and AddRoots, RemoveRoots and SetRoots
	// change it, telling a legacy server each time. Every URI must be a
	// file:// URI.
	Roots []mcp.Root

	// Capabilities declares client capabilities and extensions beyond
	// what Handlers and Roots imply (experimental, extensions,
	// sampling.context, ...). The two are merged: a member either sets is
	// declared, with the union of its flags. Declaring a capability whose
	// requests no handler serves makes those requests fail (-32601).
	Capabilities *mcp.ClientCapabilities

	// PingInterval, when positive, pings the server that often (on
	// 2026-07-28, which has no ping, with server/discover). A server that
	// does not answer within PingTimeout ends the session: Err then wraps
	// ErrConnectionLost, and so does every call's error.
	PingInterval time.Duration
	// PingTimeout bounds each periodic ping. Zero means
	// DefaultPingTimeout.
	PingTimeout time.Duration

	// TaskReceiver lets a 2025-11-25 server run its sampling and
	// elicitation requests to this client as tasks (checklist §7D): the
	// client tasks capability is declared for the requests Handlers
	// serve, a task-augmented request is answered at once with a task
	// whose handler runs in the background, and the server's tasks/get,
	// tasks/result, tasks/list and tasks/cancel are answered
	// (taskreceiver.go). A server may then ask the user or the model
	// something that takes longer than one request should stay open.
	// It has no effect on 2026-07-28, which has no such role.
	TaskReceiver bool

	// SkipOutputValidation turns off the validation of tool results'
	// structuredContent against the tools' output schemas (validate.go).
	SkipOutputValidation bool

	// LogLevel, when set, asks the server for log messages at or above
	// this level: logging/setLevel after a legacy handshake, the
	// per-request _meta key on 2026-07-28.
	LogLevel mcp.LoggingLevel

	// Middleware wrap every request the session sends, the first
	// outermost (middleware.go): tracing, metrics, logging.
	Middleware []Middleware

	// Cache, when set, is where the session keeps the results servers
	// allow to be cached (cache.go), shared with the other sessions given
	// it; nil means a cache of the session's own. CacheServer names the
	// server in the shared cache: sessions with the same CacheServer share
	// public entries, and with the same CacheIdentity (the authorization
	// context: a user, a token's subject) private ones too. Empty, they
	// share nothing. DisableCache turns caching off: every request is
	// sent.
	Cache         *Cache
	CacheServer   string
	CacheIdentity string
	DisableCache  bool
}

type progressKey struct{}

// WithProgress returns a context that asks the server for progress on the
// call made with it, and delivers each notifications/progress to fn. fn runs
// on the session's notification goroutine, in order; it must not block for
// long. Each call gets its own progress token.
func WithProgress(ctx context.Context, fn func(mcp.ProgressParams)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFunc returns the function WithProgress put in ctx, or nil. It
// lets code that is not a Session (a Go tool run by the registry) report
// progress to the caller that asked for it.
func ProgressFunc(ctx context.Context) func(mcp.ProgressParams) { return progressFrom(ctx) }

func progressFrom(ctx context.Context) func(mcp.ProgressParams) {
	fn, _ := ctx.Value(progressKey{}).(func(mcp.ProgressParams))
	return fn
}
