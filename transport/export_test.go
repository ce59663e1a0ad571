package transport

import "time"

// SetCacheClock replaces c's clock, so that tests can pass a TTL without
// waiting for it.
func SetCacheClock(c *Cache, now func() time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

// TaskRoutes returns how many progress routes s holds for tools/call
// requests in flight and the tasks they created.
func TaskRoutes(s *Session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.taskRoutes)
}
