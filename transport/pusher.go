package transport

import "github.com/tako-mcp/tako/mcp"

// Pusher is an optional interface for a Conn that reads with a goroutine
// of its own (stdio's pipe reader, a WebSocket's frame reader, a stream's
// goroutine on Streamable HTTP). Through Read, every message read there
// would be handed to the Session's reader goroutine, and from it to the
// waiting call: two hand-offs where one will do. A Pusher instead calls the
// Session's dispatch itself, which routes a response straight to the call
// that waits for it.
//
// Session calls Push once, as it starts, and never calls Read then. From
// that moment the Conn calls deliver with each result that Read would have
// returned, in the same order, including any it read before Push: a
// message (err nil), a *MessageError for one bad message, and, once, the
// error that ends the connection (what Read would return after the end,
// or after Close), after which it calls deliver no more.
//
// Concurrency: calls of deliver are never concurrent (a Conn with several
// reading goroutines serializes them). deliver does not block on the peer
// or on user code: it routes responses, queues notifications and starts
// or queues the answering of server requests, each bounded; so a Conn may
// call it while it holds its read side, but not while it holds a lock that
// Write or Close takes.
type Pusher interface {
	Push(deliver func(*mcp.Message, error))
}
