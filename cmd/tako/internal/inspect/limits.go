package inspect

import "time"

// The bounds on what the inspector keeps (DESIGN.md rule 7). A server,
// or a person who leaves the page open for a day, can fill none of them
// without bound: past each, the oldest goes, and the page is told how
// much was dropped.
const (
	// maxEvents is the ring of recent events a reconnecting page catches
	// up from; maxQueued the events queued for one page before it is cut
	// off (it reconnects and catches up, or loads the state again).
	maxEvents = 8192
	maxQueued = 2048

	// maxHistoryBytes and maxHistoryEntries bound the history; a message
	// larger than maxBodyKept is kept as its first maxBodyKept bytes (the
	// result of a call is kept whole in its run, for the download).
	maxHistoryBytes   = 64 << 20
	maxHistoryEntries = 100_000
	maxBodyKept       = 1 << 20

	// maxRunBytes bounds the results of tool calls, reads and prompts
	// kept for the page (the oldest are forgotten first); maxRuns their
	// number.
	maxRunBytes = 192 << 20
	maxRuns     = 256

	// maxTextShown is how much of one text (a text block, a resource's
	// text, a JSON value) the page is sent in a result's view; the rest is
	// in the download. maxDataShown is the same for base64 data (images,
	// audio, blobs).
	maxTextShown = 256 << 10
	maxDataShown = 8 << 20

	// maxNetEntries bounds the network view's requests; maxSSEEvents the
	// SSE events kept for one response, maxPreview the bytes of a body or
	// an event's data shown.
	maxNetEntries = 20_000
	maxSSEEvents  = 1000
	maxPreview    = 2048

	// maxAuthSteps bounds the OAuth steps kept; maxAuthBody the body of
	// one step.
	maxAuthSteps = 2000
	maxAuthBody  = 256 << 10

	// maxRequestBody bounds what the page may POST (a tool's arguments,
	// an elicitation's answer).
	maxRequestBody = 16 << 20

	// pendingTimeout bounds how long a request of the server (an
	// elicitation, a sampling request) waits for the person; confirmTTL
	// how long a command waits for its confirmation.
	pendingTimeout = 30 * time.Minute
	confirmTTL     = 10 * time.Minute

	// connectTimeout bounds connecting a server, a login in the browser
	// included (auth bounds the login itself at five minutes).
	connectTimeout = 10 * time.Minute
)
