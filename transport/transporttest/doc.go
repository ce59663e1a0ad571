// Package transporttest is a conformance kit for the two seams of package
// transport, and a fault matrix for any Transport (RunFaults): Run checks a transport.Conn (tako's stdio, Streamable HTTP
// and WebSocket Conns, and anyone's: a Unix socket, a message bus, a
// custom framing), and RunTransport checks a transport.Transport (a
// Session over any Conn, the gRPC client, a Transport written by hand). A
// Conn that passes Run carries the whole protocol through tako's Session
// engine; a Transport that passes RunTransport is one the registry and the
// orchestrator can use like any other.
//
// # Conn
//
// Run takes a dial function that returns a fresh Conn whose other end is
// served by mcptest.NewReference: in the same process, in a subprocess, or
// across a network. It then runs two groups of subtests:
//
//   - "Conn": the Conn alone, without a Session: a ping written and its
//     answer read, concurrent Writes, a message overwritten as soon as
//     Write returns (the engine recycles its requests, so a Conn must not
//     retain one), Close unblocking a pending Read, Read
//     and Write after Close failing with an error that wraps
//     transport.ErrClosed or transport.ErrConnectionLost, Close twice;
//   - "Session/<version>": through transport.Connect, once per protocol
//     version ("auto" lets the Session probe and pick, which against the
//     reference server means 2026-07-28; "2025-11-25" pins the legacy
//     handshake): handshake, tools/list, an echo round trip, 200 concurrent
//     calls each answered with its own result, a 4 MiB result intact,
//     progress, the sampling, elicitation and roots handlers, notifications
//     reaching Subscribe, cancellation by context, tool errors, and Close
//     (idempotent, unblocking a pending call, later calls failing with
//     transport.ErrClosed).
//
// Usage, for a Conn over an in-process pipe (see pipe_test.go):
//
//	func TestMyConn(t *testing.T) {
//		srv := mcptest.NewReference(mcptest.Options{})
//		transporttest.Run(t, func(t *testing.T) transport.Conn {
//			clientEnd, serverEnd := myconn.Pair()
//			ctx, cancel := context.WithCancel(context.Background())
//			done := make(chan error, 1)
//			go func() { done <- srv.Serve(ctx, serverEnd) }()
//			t.Cleanup(func() { cancel(); <-done })
//			return clientEnd
//		}, transporttest.WithServer(srv))
//	}
//
// For a Conn to a subprocess or a network server, dial starts or reaches a
// server built with mcptest.NewReference (examples/demo-server is one that
// speaks stdio) and registers its cleanup with t.Cleanup. Without
// WithServer, the checks that need to see the server's side (that a
// cancelled call reached it as notifications/cancelled) are skipped; every
// other check runs.
//
// Every Session and Conn the kit opens is closed by the end of its subtest,
// so a goleak.VerifyTestMain in the calling package also checks that the
// Conn leaves no goroutine behind.
//
// # Transport
//
// RunTransport takes a dial function that returns a fresh Transport, given
// the handlers it must answer server requests with, whose other end is
// served by mcptest.NewReference, possibly behind a bridge. Its subtests
// use only the Transport interface and transport.Call:
//
//   - "ServerInfo": a protocol version, the server's name, a tools
//     capability;
//   - "ListTools": every reference tool exactly once, with its schemas
//     (with WithServer: exactly the server's tools, in its order);
//   - "Pagination" (WithServer): the server saw one ListTools as several
//     tools/list requests, each after the first with a cursor, and the
//     list holds every page; skipped if the server sent one page, so give
//     mcptest.Options a PageSize below the number of tools (10);
//   - "Echo", "ToolError" (a result with isError, not an error),
//     "UnknownTool" (an *mcp.Error with code -32602, the Transport still
//     usable), "ConcurrentCalls" (64 at once, each with its own answer);
//   - "RawList": transport.Call of tools/list without a cursor gives one
//     JSON object holding every tool and no nextCursor, and decodes into
//     *mcp.ListToolsResult as well; "RawCall": transport.Call of
//     tools/call gives the result's JSON, and a JSON-RPC error as an
//     *mcp.Error;
//   - "ServerRequests/Sampling", "/Elicitation", "/Roots": a tool that asks
//     the client, answered by the handler given to dial. WithServerRequests
//     names the kinds a Transport carries; for the others the kit checks
//     that the call ends without reaching the handler. The gRPC service
//     carries all three as dependent requests, but tako's gRPC server end
//     relays roots/list only when the bridge opts in (Dependents.Roots);
//   - "Notifications": when ServerInfo().Notifications is true,
//     notifications/tools/list_changed reaches Subscribe; when false,
//     Subscribe is harmless;
//   - "Cancel": a call whose context is cancelled returns an error wrapping
//     context.Canceled, the server learns of it (with WithServer:
//     notifications/cancelled for that request), and the Transport goes on;
//   - "Close": three calls in flight end with an error wrapping
//     transport.ErrClosed or transport.ErrConnectionLost within Timeout,
//     Close returns and is idempotent, and every later call fails with an
//     error wrapping transport.ErrClosed.
//
// Usage, for a Session over any Conn (the same shape fits a Transport of
// one's own: pass h to whatever answers the server's requests):
//
//	func TestMyTransport(t *testing.T) {
//		srv := mcptest.NewReference(mcptest.Options{PageSize: 3})
//		transporttest.RunTransport(t, func(t *testing.T, h transport.Handlers) transport.Transport {
//			conn, wait := srv.Pipe(context.Background())
//			t.Cleanup(func() { conn.Close(); wait() })
//			s, err := transport.Connect(context.Background(), conn, &transport.Options{Handlers: h})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		}, transporttest.WithServer(srv))
//	}
//
// The kit closes each Transport before the cleanups dial registered run,
// so a bridge or a server torn down there sees its client gone first.
// Calls in flight are known to have started when the server recorded
// them (WithServer) or their progress arrived; a Transport with neither
// is checked with calls merely sent.
//
// # Fault matrix
//
// RunFaults runs one table of faults (a server killed mid-call, a
// connection cut mid-stream, an expired session, junk bytes, an
// undecodable response, oversized messages, a silent peer, a slow
// trickle, wrong ids, duplicate responses, an answer after a cancel,
// floods of notifications and of server requests) against Transports
// that dial returns for each row, and checks the outcome each row
// promises: the typed error, the time bound, the goroutine bound, and a
// bounded Close. dial applies the row's mcptest.Fault to its server and
// returns hooks (Kill, Cut, Expire) that break the wire from outside;
// FaultNotApplicable says which rows a wire cannot express, and why.
//
// # Both kits
//
// The kits wait for nothing with a sleep: they wait for messages, and bound
// every wait by a generous limit (Timeout) that only turns a hang into a
// failure. Run them with -race: several checks exist to catch data races.
package transporttest
