package transport

import "time"

// SetCacheClock replaces c's clock, so that tests can pass a TTL without
// waiting for it.
func SetCacheClock(c *Cache, now func() time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}
