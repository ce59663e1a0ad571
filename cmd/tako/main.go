package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Ctrl-C or a SIGTERM cancels the context: the session closes, the
	// server's process group is ended, and tako exits with status 3.
	signals := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if name, _ := commandName(os.Args[1:]); name == "shell" {
		// The shell handles Ctrl-C itself: it stops the command that
		// runs, not the shell.
		signals = signals[1:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), signals...)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
