package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/tako-mcp/tako/cmd/tako/internal/inspect"
)

// `tako inspect` is the web inspector; its package has it all
// (internal/inspect). This file only reads the command line: the servers
// as tako shell takes them (repeat the flags, or --config FILE for all
// its servers), the gRPC TLS flags for the --grpc before them, and
// --listen and --no-browser.

// runInspect is `tako inspect [SERVER...] [--listen ADDR] [--no-browser]`.
func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		set       serverSet
		listen    string
		noBrowser bool
	)
	// The gRPC flags apply to the server flag before them.
	grpcFlag := func(name string) func(string) error {
		return func(v string) error {
			if len(set.servers) == 0 {
				return usagef("--%s applies to the --grpc before it", name)
			}
			return setGRPC(name)(&set.servers[len(set.servers)-1], v)
		}
	}
	own := map[string]func(string) error{
		"listen": func(v string) error { listen = v; return nil },
		"ca":     grpcFlag("ca"), "cert": grpcFlag("cert"), "key": grpcFlag("key"), "server-name": grpcFlag("server-name"),
	}
	bools := map[string]func(bool){
		"no-browser": func(b bool) { noBrowser = b },
		"plaintext": func(b bool) {
			if len(set.servers) > 0 && b {
				_ = setGRPC("plaintext")(&set.servers[len(set.servers)-1], "true")
			}
		},
	}
	positional, err := set.parse("inspect", args, own, bools)
	if err != nil {
		return err
	}
	if set.help {
		_, err := io.WriteString(stdout, commandHelp("inspect"))
		return err
	}
	if len(positional) > 0 {
		return usagef("tako inspect takes no arguments but its servers, got %q", positional[0])
	}
	var targets []inspect.Target
	if len(set.servers) > 0 || set.config != "" {
		if _, err := set.resolve("inspect"); err != nil {
			return err
		}
		for i := range set.servers {
			o := &set.servers[i]
			s, err := serverOf(o)
			if err != nil {
				return err
			}
			t := inspect.Target{Server: s}
			if o.picked != nil && set.config != "" {
				t.Flags = []string{"--config", set.config, "--server", s.Name}
			}
			targets = append(targets, t)
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: dropTime}))
	if set.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	store, err := tokenStore()
	if err != nil {
		return err
	}
	err = inspect.Run(ctx, &inspect.Config{
		Servers: targets, Addr: listen, NoBrowser: noBrowser, Out: stdout, Logger: logger,
		AuthStore: store, LogLevel: set.logLevel, Split: splitCommand, OpTimeout: set.timeout,
	})
	if err != nil {
		return &failure{msg: err.Error(), err: err}
	}
	return nil
}
