// Package mcpgrpc speaks MCP over gRPC, both ends, on the wire of the public
// model_context_protocol.Mcp service (proto/mcp.proto): typed unary RPCs
// (ListTools, CallTool, ListResources, ListResourceTemplates, ReadResource,
// ListPrompts, GetPrompt, Complete), routing metadata (mcp_tool, mcp_prompt,
// mcp_resource), dependent_requests round trips and list time-to-live.
//
// MCP's specification has no gRPC binding; this service is the one in use,
// and speaking it exactly lets tako talk to servers built for it and serve
// their clients.
//
// # Client
//
// [Dial] returns a [*Client], a [transport.Transport] that maps each
// operation onto its RPC ([Client.ListTools], [Client.CallTool], ...). It
// has no JSON-RPC session: no handshake, no ids, no pagination (a list
// response holds the whole list). It is also a [transport.Caller], so
// [transport.Call] gives the protocol's JSON of any result (tako --json),
// and code written against [transport.Transport] alone, such as the tako
// command, uses it as it is: no adapter to a message Conn.
//
//	tlsConfig, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{CertFile: "client.pem", KeyFile: "client-key.pem", CAFile: "ca.pem"})
//	if err != nil { ... }
//	c, err := mcpgrpc.Dial(ctx, "mcp.example.com:443", &mcpgrpc.Options{TLS: tlsConfig})
//	if err != nil { ... }
//	defer c.Close()
//	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
//
// When a response carries dependent_requests, the client answers them with
// the same [transport.Handlers] every tako transport uses (Sampling,
// Elicitation, Roots) and calls again with dependent_responses and the
// resume_data it was given. The rounds are the engine's
// ([transport.Rounds]): the same bound ([transport.MaxInputRounds]), the
// same dispatch ([transport.Handlers.Serve]), and the same error, wrapping
// [transport.ErrCapability], for a request no handler serves.
//
// Messages are capped at transport.DefaultMaxMessageSize (64 MiB) in both
// directions on both ends unless [Options.MaxMessageSize] or
// [ServerOptions.MaxMessageSize] says otherwise, not at grpc-go's 4 MiB.
//
// Errors are tako's typed errors; the gRPC status stays reachable through
// [*StatusError]:
//
//	Unavailable                       transport.ErrConnectionLost
//	Unauthenticated, PermissionDenied transport.ErrAuthRequired
//	DeadlineExceeded                  context.DeadlineExceeded
//	Unimplemented                     transport.ErrCapability
//	ResourceExhausted                 transport.ErrMessageTooLarge
//	InvalidArgument, NotFound, others *mcp.Error (the exact JSON-RPC code
//	                                  when tako's server end sent it)
//
// Deadlines come from the context, or from [Options.CallTimeout] when it
// has none. Keepalive pings run while calls are in flight, so a silent peer
// fails a call instead of hanging it.
//
// # Mutual TLS
//
// [ClientTLSConfig] and [ServerTLSConfig] build [*crypto/tls.Config] values
// from PEM files or bytes ([TLSOptions]): TLS 1.3 unless asked otherwise, the other side's CA pinned, the
// client certificate required and verified when the server has a client CA.
// Certificates (and the server's client CA) given as files are read again
// when the files change, so rotation needs no restart; a file caught
// emptied or half written keeps the last good certificate or CA in use
// ([TLSOptions].Logger is told), so a rotation never weakens the server.
// Plain text is available only through the options named
// InsecurePlaintext ([Options.InsecurePlaintext],
// [ServerOptions.InsecurePlaintext]).
//
// # Server end
//
// [NewServer] serves the service by forwarding to any tako Transport, so any
// MCP server tako reaches over stdio, HTTP or WebSocket can be fronted by
// gRPC (tako bridge --listen-grpc). Requests the backend sends to its client
// during a call (sampling, elicitation) are parked by [Dependents] and
// carried to the gRPC client as dependent_requests; the call resumes when
// the client comes back with the answers (see Dependents for how a request
// is tied to a call).
//
// # The notification gap, and a proposal to close it
//
// The service is unary only. A server cannot tell the client that its tool,
// prompt or resource lists changed, send log messages, report progress, or
// say that a subscribed resource was updated. The client therefore reports
// ServerInfo().Notifications == false and Subscribe delivers nothing; a
// registry falls back to refreshing lists when their time-to-live (TTL)
// runs out. The server end sends ServerOptions.ListTTL with every list.
//
// tako proposes a server-streaming call to close the gap, in the spirit of
// the TODO of the public definition:
//
//	rpc Watch(WatchRequest) returns (stream WatchEvent);
//
//	message WatchRequest {
//	  RequestFields common = 1;
//	  // What to watch; empty means every list.
//	  bool tools = 2; bool prompts = 3; bool resources = 4;
//	  repeated string resource_uris = 5;  // resources/updated for these
//	  string logging_level = 6;           // log messages at or above it
//	}
//	message WatchEvent {
//	  ResponseFields common = 1;
//	  oneof event {                        // a new stream message type may
//	    ListChanged list_changed = 2;      // use oneof: old clients skip it
//	    ResourceUpdated resource_updated = 3;
//	    LogMessage log = 4;
//	    Progress progress = 5;             // tagged with the call's token
//	  }
//	  google.protobuf.Duration ttl = 6;    // refreshed TTL of the list
//	}
//
// One long-lived stream per client replaces both the legacy GET stream and
// 2026-07-28 subscriptions/listen; the server sends a first event once the
// watch is in place (so the client knows no change is lost between its last
// list and the watch), and the client re-lists when the stream breaks and
// opens it again. Keepalive on the connection detects a dead stream. With
// it, Client would set Notifications to true and feed Subscribe from the
// stream; the bridge would forward the backend's notifications into it.
// Until servers implement it, TTL polling is the contract.
package mcpgrpc
