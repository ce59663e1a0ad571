//go:build !linux

package stdio

import "os"

// readyWaiter cannot wait for a pipe without reading it here (wait_linux.go
// does it on Linux): the framer keeps its read buffer for the Conn's life.
func readyWaiter(*os.File) func() error { return nil }
