package streamablehttp

import "net/http"

// Lingers reports whether c has seen its server keep a stream open past
// drainWait after the response (finish).
func (c *Conn) Lingers() bool { return c.lingers.Load() }

// OwnTransport is the transport the Conn made for itself, nil when it was
// given a client or a RoundTripper.
func (c *Conn) OwnTransport() *http.Transport { return c.own }

// GETOpenWait is how long the handshake waits for the standalone GET's
// answer.
const GETOpenWait = getOpenWait
