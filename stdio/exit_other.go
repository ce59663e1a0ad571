//go:build !linux

package stdio

// watchExit has no way to wait for a process without a thread here: done
// runs at once and blocks in cmd.Wait (exit_linux.go says what that costs).
func watchExit(_ int, done func()) { go done() }
