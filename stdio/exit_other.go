//go:build !linux

package stdio

// awaitExit has no way to wait for a process without a thread here; the
// waiter blocks in cmd.Wait (exit_linux.go says why that costs).
func awaitExit(int) {}
