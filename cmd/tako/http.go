package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// addHeader parses one --header 'K: V' (repeatable) for --http.
func addHeader(o *options, v string) error {
	k, val, ok := strings.Cut(v, ":")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") {
		return usagef("--header wants 'NAME: VALUE', not %q", v)
	}
	if strings.ContainsAny(val, "\r\n") {
		return usagef("--header %s: a header value cannot hold a line break", k)
	}
	o.headers = append(o.headers, k+":"+strings.TrimSpace(val))
	return nil
}

// httpDialer reaches an MCP server over Streamable HTTP (any era; the
// 2024-11-05 HTTP+SSE transport as a fallback).
func httpDialer(o *options, logger *slog.Logger, sessionOpts *transport.Options) (dialer, error) {
	hdr := http.Header{}
	for _, kv := range o.headers {
		k, v, _ := strings.Cut(kv, ":")
		hdr.Add(k, v)
	}
	u := o.server.value
	// Reject a bad URL now, as a usage error, before anything starts.
	probe, err := streamablehttp.Dial(context.Background(), u, nil)
	if err != nil {
		return nil, usagef("--http: %v", err)
	}
	probe.Close()
	ac, err := storedAuth(u) // the tokens of `tako login` (login.go)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (transport.Transport, error) {
		conn, err := streamablehttp.Dial(ctx, u, &streamablehttp.Options{Header: hdr, Logger: logger, Auth: ac.StreamableHTTP()})
		if err != nil {
			return nil, &stageError{stage: "reach " + u, err: err}
		}
		return connect(ctx, conn, sessionOpts)
	}, nil
}
