package streamablehttp

// Lingers reports whether c has seen its server keep a stream open past
// drainWait after the response (finish).
func (c *Conn) Lingers() bool { return c.lingers.Load() }
