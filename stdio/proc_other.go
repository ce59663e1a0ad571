//go:build !unix

package stdio

import (
	"os"
	"syscall"
)

// On systems without POSIX process groups and signals, the server runs in
// the client's group and both shutdown signals become Process.Kill (on
// Windows, TerminateProcess). Descendants of the server are not reached.

func sysProcAttr() *syscall.SysProcAttr { return nil }

func terminate(p *os.Process, _ int) { _ = p.Kill() }

func kill(p *os.Process, _ int) { _ = p.Kill() }

func killGroup(int) {}

func exitSignal(*os.ProcessState) string { return "" }

func newTryWrite(*os.File) func([]byte) (int, bool) { return nil }
