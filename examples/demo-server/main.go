// Command demo-server is a small MCP server over its own standard input and
// output. It serves mcptest's reference tools (echo, add, progress, sample,
// elicit, roots, big, notify, sleep, fail) and speaks both eras of the
// protocol: the initialize handshake of 2024-11-05 … 2025-11-25 and the
// stateless 2026-07-28 (server/discover, _meta on every request,
// input_required rounds). `make demo` and the CLI tests run it as the server
// at the other end of a stdio connection:
//
//	tako tools -- go run ./examples/demo-server
//
// Messages are newline-delimited JSON-RPC on stdout; logs go to stderr, as
// the stdio transport requires. The server ends when its stdin ends (the
// client closed it, which is the spec's shutdown) or on SIGINT or SIGTERM.
//
// Flags shape the server for tests of a client's error paths:
//
//	-versions 2025-06-18,2024-11-05   speak only these revisions
//	-page-size 3                      page tools/list
//	-junk                             write a non-JSON line to stdout before every answer
//	-delay 500ms                      hold every tools/call answer back this long
//	-die-on sleep                     exit (status 3) when that tool is called, as a crash would
//	-v                                log every message received to stderr
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // serving failed
	exitUsage = 2 // bad flags
	exitDied  = 3 // -die-on: the requested crash
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole server, with its streams passed in so that tests can run
// it in process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	versions := fs.String("versions", "", "comma-separated protocol `revisions` to speak (default: all from 2024-11-05 to 2026-07-28)")
	pageSize := fs.Int("page-size", 0, "tools per tools/list page; 0 sends all in one page")
	name := fs.String("name", "tako-demo-server", "the server's name (serverInfo.name)")
	instructions := fs.String("instructions", "A demo server: try the echo, add and progress tools.", "instructions for the model")
	junk := fs.Bool("junk", false, "write a non-JSON line to stdout before every answer")
	delay := fs.Duration("delay", 0, "hold every tools/call answer back this long")
	dieOn := fs.String("die-on", "", "exit with status 3 when this `tool` is called")
	verbose := fs.Bool("v", false, "log every message received to stderr")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "demo-server: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	opts := mcptest.Options{
		ServerInfo:   mcp.Implementation{Name: *name, Version: "0.1.0", Title: "tako demo server"},
		Instructions: *instructions,
		PageSize:     *pageSize,
		Logger:       logger,
		// Answers to requests already read still go out after stdin
		// ends, so that a script piped in gets all its answers.
		Drain: 500 * time.Millisecond,
		// A long-running server keeps no history of what it received.
		DisableRecording: true,
	}
	if *versions != "" {
		for _, v := range strings.Split(*versions, ",") {
			v = strings.TrimSpace(v)
			if !mcp.IsSupportedVersion(v) {
				fmt.Fprintf(stderr, "demo-server: unknown protocol revision %q (known: %s)\n", v, strings.Join(mcp.SupportedVersions, ", "))
				return exitUsage
			}
			opts.Versions = append(opts.Versions, v)
		}
	}
	srv := mcptest.NewReference(opts)
	if *junk {
		for _, m := range []string{mcp.MethodInitialize, mcp.MethodDiscover, mcp.MethodPing, mcp.MethodToolsList, mcp.MethodToolsCall} {
			srv.FaultMethod(m, mcptest.Fault{Junk: true})
		}
	}
	if *delay > 0 {
		srv.FaultMethod(mcp.MethodToolsCall, mcptest.Fault{Delay: *delay})
	}
	var crashed atomic.Bool
	if *dieOn != "" {
		if !dieOnCall(srv, *dieOn, &crashed) {
			fmt.Fprintf(stderr, "demo-server: -die-on: no tool %q\n", *dieOn)
			return exitUsage
		}
	}

	// Junk lines go to stdout between messages, through the same writer.
	out := &mcptest.RawStream{W: stdout}
	conn := mcptest.WithRaw(stdio.NewStreamConn(stdin, out, stdio.StreamOptions{Logger: logger}), out)
	if *verbose {
		conn = &loggingConn{Conn: conn, log: logger}
	}
	logger.Info("demo-server: serving on stdio", "name", *name, "versions", srv.Versions())
	err := srv.Serve(ctx, conn)
	switch {
	case crashed.Load():
		logger.Info("demo-server: died on request", "tool", *dieOn)
		return exitDied
	case err != nil:
		logger.Error("demo-server: serving failed", "err", err)
		return exitError
	}
	logger.Info("demo-server: done")
	return exitOK
}

// dieOnCall replaces the named tool with one that closes the connection
// without answering, as a server crashing mid-call would, and records that
// it did. It reports whether the tool exists.
func dieOnCall(srv *mcptest.Server, name string, crashed *atomic.Bool) bool {
	for _, tool := range srv.Tools() {
		if tool.Name != name {
			continue
		}
		// AddTool cannot fail here: the tool came from the server itself.
		_ = srv.AddTool(tool, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			crashed.Store(true)
			req.Peer().Close()
			<-ctx.Done()
			return nil, ctx.Err()
		})
		return true
	}
	return false
}

// loggingConn logs every message the server reads, for -v.
type loggingConn struct {
	transport.Conn
	log *slog.Logger
}

func (c *loggingConn) Read(ctx context.Context) (*mcp.Message, error) {
	m, err := c.Conn.Read(ctx)
	if err == nil {
		c.log.Debug("demo-server: received", "message", string(m.AppendJSON(nil)))
	}
	return m, err
}

// WriteRaw passes the junk fault through to the stream, which a plain
// embedding of the Conn interface would hide.
func (c *loggingConn) WriteRaw(ctx context.Context, b []byte) error {
	if rw, ok := c.Conn.(mcptest.RawWriter); ok {
		return rw.WriteRaw(ctx, b)
	}
	return errors.New("demo-server: the stream cannot write raw bytes")
}
