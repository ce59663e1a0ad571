// Tako is a command-line client for Model Context Protocol (MCP) servers:
// it starts or reaches a server and runs one operation on it.
//
// Usage:
//
//	tako tools [NAME] SERVER [flags]
//	tako call NAME [KEY=VALUE ... | JSON] SERVER [flags]
//	tako resources | templates | prompts | ping | info SERVER [flags]
//	tako read URI SERVER [flags]
//	tako prompt NAME [KEY=VALUE ...] SERVER [flags]
//	tako complete --prompt NAME | --resource URI ARG=PARTIAL [KEY=VALUE ...] SERVER
//	tako watch [URI ...] SERVER [flags]
//	tako servers --config FILE
//	tako bridge --listen-ws ADDR [--token] [--max-clients N] --stdio "CMD ARGS..." [flags]
//	tako bridge --listen-grpc ADDR --tls-cert F --tls-key F --client-ca F --stdio "CMD ARGS..."
//	tako agent --provider openai|anthropic --model M [agent flags] SERVER... "PROMPT"
//	tako agent ... --config FILE [--server NAME ...] "PROMPT"
//	tako shell SERVER... [--no-history]
//	tako inspect [SERVER...] [--listen ADDR] [--no-browser]
//	tako login [--scope S] [--dpop] [--no-browser] [--timeout D] URL
//	tako login --client-credentials --client-id ID [--scope S] URL
//	tako logout URL
//	tako version
//	tako completion bash | zsh | fish
//	tako help [CMD | all]
//
// "tako help" lists the commands on one screen, "tako help CMD" (or
// "tako CMD --help") shows one command's help with examples, and
// "tako help all" shows this text.
//
// "shell" connects to every SERVER (repeat the server flags, or --config
// FILE for all its servers) and reads commands at a prompt that names the
// current server, with line editing, history and TAB completion of the
// commands, the tool, prompt and resource names, the argument keys, and
// the argument values the server completes (completion/complete). Every
// command above that takes a SERVER works there without one (call NAME
// K=V ..., read URI, --format json, ...); a JSON object of arguments needs
// no quotes there (call echo {"message": "hi"}). "use NAME" makes another
// server current, "servers" lists them, "help" lists the commands, "quit",
// "exit" or Ctrl-D ends the shell and its servers, and Ctrl-C stops the
// command that runs. The servers' log messages (--log-level LEVEL), list
// changes (once each) and a call's progress are printed as they arrive,
// above the line being edited. Lines piped into the shell run in order,
// and a failed one makes the shell exit with that line's status (1, 2 or
// 3) once the input ends. History is kept in
// $XDG_STATE_HOME/tako/shell_history, or under the user's configuration
// directory, mode 0600; $TAKO_SHELL_HISTORY names another file ("off" for
// none), as does --no-history.
//
// "watch" prints the server's notifications as they arrive, one line each
// after the time: the updates of each resource URI given (it subscribes to
// them), the changes of the server's tool, prompt and resource lists with
// the names added and removed, and its log messages (--log-level LEVEL).
// It runs until Ctrl-C, or for --timeout when given, and exits with status
// 0; with status 3 when the connection ends. --json prints each
// notification as the protocol's JSON, one a line.
//
// "version" (or --version) prints the module's version as the build
// recorded it and the Go release. "completion bash", "completion zsh" and
// "completion fish" print a script that completes the commands, the flags
// (anywhere on the line), file names after --config and the certificate
// flags, directories after --root, and the values of --format, --log-level
// and --provider: source <(tako completion bash) in ~/.bashrc.
//
// "inspect" serves a web page, on 127.0.0.1 and a free port (--listen
// ADDR for another loopback address), for looking at servers: their info
// and ping; their tools, with a form made from each input schema (or raw
// JSON), runs with a progress bar and a cancel button, and results shown
// by content kind with the output schema's verdict; resources and
// templates (read, subscribe, updates as they come); prompts, with
// completion as one types; the server's requests (elicitation forms,
// sampling requests a person answers, roots edited in the page); tasks;
// notifications and logs, with the log level settable; the history of
// every JSON-RPC message both ways, grouped by conversation, with "copy as
// a tako command"; each HTTP request with its Mcp-* headers and SSE
// events; OAuth logins in the page, step by step, secrets masked; MCP Apps
// in sandboxed frames. The servers are given as "shell" takes them
// (repeat the server flags, or --config FILE for all its servers; --ca,
// --cert, --key, --server-name and --plaintext apply to the --grpc before
// them), or none: the page has a connect form, and a command typed there
// runs only once the person confirms it. tako prints the page's URL,
// which carries a random session token that every request must present
// (Host and Origin must be this machine's as well), and opens the browser
// ($BROWSER; --no-browser only prints the URL). It runs until interrupted.
//
// "login" authorizes tako at the MCP server at URL (OAuth 2.1): it opens
// the browser ($BROWSER when set; --no-browser, or no browser to open,
// prints the URL) and waits, up to --timeout (5m), for the redirect to a
// loopback address; or with --client-credentials uses --client-id and the
// secret in $TAKO_CLIENT_SECRET (--client-secret-env names another
// variable). It always runs a new login: --scope "A B" asks for that scope
// (a step-up), --dpop binds the tokens to a key kept with them. The tokens
// are kept under the user's configuration directory (or $TAKO_AUTH_DIR),
// one file per server and authorization server, mode 0600, in plain text;
// later --http and --ws calls to URL send them and refresh them. A server
// that refuses a call for lack of scope opens the browser for the step-up
// when a person is at the terminal. "logout" revokes the tokens at the
// server, where it can, and forgets them.
//
// "tools" prints the server's tools as a table: the name, the hints, and
// the title and the first line of the description, cut to the terminal's
// width (and never cut when stdout is not a terminal). HINTS shows the
// annotations the server declared true, in this order: r read-only,
// d destructive, i idempotent, o open world (they are the server's claims,
// not guarantees). With --json it prints the tools/list result, every page
// merged into one list (no nextCursor), each tool exactly as the server
// sent it. "tools NAME" describes one tool whole: its title, hints, full
// description, each argument with its type, default and choices, and its
// input and output schemas; with --json, the tool as the server listed it.
//
// "call" calls the tool NAME with ARGUMENTS, a JSON object ({} when left
// out) or KEY=VALUE pairs typed by the tool's input schema, and prints the
// content of the result: text as text, an image or audio block as a note
// of its type and size, a resource link as its URI, an embedded resource
// as its text, and the structured content as indented JSON when there is
// no text. Text a person reads (call, prompt, read) has its escape
// sequences dropped and other control characters shown as ^X, as table
// cells have them cleaned; --json is untouched. With --json it prints the
// whole tools/call result as the server sent it. --json works the same
// over every transport.
//
// One rule for a call's arguments, however they are given: the tool must
// be one the server lists (a near name is suggested), a required argument
// left out takes the default its schema gives, and one that is still
// missing, a key the schema forbids or a value that does not fit is a
// usage error (exit status 2) that names every missing argument at once;
// a lone word where KEY=VALUE belongs ("call echo hi") suggests the pair
// meant (message=hi).
//
// A server may ask the client during a call. On a terminal, a form
// (elicitation) is asked field by field, each answer checked as it is
// typed against its field's type, format (email, uri, date, date-time),
// range, length and choices, and asked again when it does not fit; a
// sampling request (the server asks for a model's answer) is shown, and
// answered by the person, or by the --provider's model with the person
// sending (Enter), replacing (!edit) or refusing (!decline) its answer.
// From a script, tako declares neither, except sampling with --provider,
// whose answers are then sent as they come. --root DIR gives a server that
// asks for roots (roots/list) that directory; without it, such a server is
// told tako has none, and its error says to give --root.
//
// "bridge" serves a server to clients of another transport, and runs
// until interrupted (SIGINT or SIGTERM), then ends every client's
// connection and server and exits with status 0. With --listen-ws ADDR it
// accepts MCP clients over WebSocket at ws://ADDR/mcp (subprotocol "mcp",
// one JSON-RPC message per text frame, as the TypeScript SDK 1.x speaks
// it), and starts a fresh --stdio server for each client. With
// --listen-grpc ADDR it serves the MCP gRPC service (model_context_protocol.Mcp)
// from one --stdio server that all gRPC clients share, and prints
// grpc://ADDR. It prints the URL it listens on (ADDR may have port 0: the
// URL has the port chosen).
//
// The WebSocket end serves this machine, not the web pages its browser
// shows: it accepts only requests whose Host is a loopback name
// (localhost, 127.0.0.1, [::1], with or without the port), the address
// they arrived at, or a name given with --allow-host, and whose Origin, if
// any, is the bridge's own or one given with --allow-origin ("null" is
// refused). A page of another site therefore cannot drive the server
// through the visitor's browser, directly or by DNS rebinding (its own
// name made to resolve to 127.0.0.1). Host and Origin do not stop the
// machine's other users, who can reach any loopback port: --token does
// (the printed URL then carries it, as ?token=). At most --max-clients
// clients are served at once (each has a server process of its own); one
// more is refused with HTTP 503, and the refusal is printed on stderr,
// as is every refused request and every warning, --verbose or not.
//
// "agent" gives a model the tools of every SERVER (repeat the server flags
// to attach several) and runs it on PROMPT until it answers without tool
// calls. The model's text is printed on stdout as it streams. On stderr,
// one line each: a tool call as it starts (→ name args), its progress
// (… name 2/5: message), the servers' log messages (server [level] text;
// ask for them with --log-level LEVEL), each sampling request a server
// makes, which the agent's model answers (⇄ sampling for server: ...), and
// the call's end (← name ok|error (duration): result). A sampling request
// that offers tools gets the model's tool calls back as tool_use blocks,
// and the server runs them and asks again. "agent" must come first; --env
// and --header apply to the server flag before them. Its own flags:
//
//	--provider openai|anthropic
//	    The model's API: OpenAI Chat Completions (also vLLM, llama.cpp,
//	    Ollama: see --base-url; OPENAI_API_KEY is sent if set) or the
//	    Anthropic Messages API (ANTHROPIC_API_KEY is required).
//	--model M
//	    The model's name.
//	--base-url URL
//	    The API's root, such as http://127.0.0.1:8080/v1 for a local
//	    OpenAI-compatible server. Defaults to OPENAI_BASE_URL or
//	    ANTHROPIC_BASE_URL, else the provider's own.
//	--api-key-env VAR
//	    Read the API key from $VAR instead of OPENAI_API_KEY or
//	    ANTHROPIC_API_KEY (the key itself never goes on the command line).
//	--system TEXT
//	    The system prompt; the servers' instructions are added to it.
//	--max-turns N
//	    Stop after N model turns (default 20): the model then answers once
//	    more, without tools, with what it has, and tako exits with status 3.
//	--prefix
//	    Name the tools SERVER__TOOL, so that servers with tools of the same
//	    name can be attached together.
//
// --provider, --model, --base-url and --api-key-env also name the model
// that answers a server's sampling requests during call and shell.
//
// SERVER is one of:
//
//	--stdio "CMD ARGS..."
//	    Start CMD with ARGS and speak MCP over its stdin and stdout. The
//	    string is split into words as a POSIX shell splits a command
//	    (blanks, 'single quotes', "double quotes", backslash escapes), but
//	    no shell runs: $VAR, ~ and * stay as written, and an unquoted
//	    | & ; < > ( ) or ` is an error.
//	--http URL
//	    Speak MCP over HTTP to the endpoint URL: Streamable HTTP in
//	    whichever revision the server speaks (2026-07-28 or a 2025 session),
//	    or the 2024-11-05 HTTP+SSE transport when the server has only that.
//	--ws URL
//	    Speak MCP over WebSocket to URL (ws:// or wss://): subprotocol
//	    "mcp", one JSON-RPC message per text frame, the initialize
//	    lifecycle. HTTPS_PROXY and NO_PROXY are honoured.
//	--config FILE [--server NAME]
//	    Take the server from a configuration file as Claude Desktop and
//	    Cursor write it ("mcpServers") or VS Code (.vscode/mcp.json,
//	    "servers"): command, args, env, url, headers and type (stdio,
//	    http, streamable-http, sse, ws). --server NAME picks one; a file
//	    with one server needs no name. "tako servers --config FILE"
//	    lists them and whether each answers.
//	--grpc HOST:PORT
//	    Call the MCP gRPC service (model_context_protocol.Mcp) at
//	    HOST:PORT over TLS 1.3: --ca is required, --cert and --key present
//	    a client certificate, --server-name overrides the name expected in
//	    the server's certificate. --plaintext goes without TLS.
//
// Flags:
//
//	--env KEY=VALUE
//	    Set KEY in the server's environment, which is otherwise tako's
//	    own. Repeatable.
//	--header 'NAME: VALUE'
//	    Send this header with every HTTP request of --http, or with the
//	    opening handshake of --ws (for example 'Authorization: Bearer
//	    TOKEN'). Repeatable.
//	--listen-ws ADDR
//	    (bridge) Serve over WebSocket on ADDR, such as 127.0.0.1:8765.
//	--tls-cert FILE, --tls-key FILE
//	    (bridge) Serve over TLS (wss://) with this PEM certificate chain
//	    and private key.
//	--token
//	    (bridge --listen-ws) Require a token of every client: tako makes a
//	    random one and prints the URL with it (ws://ADDR/mcp?token=...).
//	    Clients send it as that query parameter (browsers can only do
//	    that) or as 'Authorization: Bearer TOKEN'.
//	--token-env VAR
//	    (bridge --listen-ws) Require the token in $VAR instead; it is not
//	    printed.
//	--allow-host HOST
//	    (bridge --listen-ws) Accept HOST (mybox.lan, or mybox.lan:8765 for
//	    that port only) in the Host header, besides the loopback names.
//	    "*" accepts any, for a bridge behind a proxy that checks it.
//	    Repeatable.
//	--allow-origin ORIGIN
//	    (bridge --listen-ws) Accept web pages of ORIGIN, such as
//	    http://localhost:5173, besides the bridge's own; "*" accepts
//	    every page (then only --token keeps them out). Repeatable.
//	--max-clients N
//	    (bridge --listen-ws) Serve at most N clients at once (default
//	    128); one more is refused with HTTP 503 until one leaves.
//	--listen-grpc ADDR
//	    (bridge) Serve the MCP gRPC service on ADDR with mutual TLS:
//	    --tls-cert, --tls-key and --client-ca are required, unless
//	    --no-client-auth or --plaintext says otherwise by name. One server
//	    serves every gRPC client; its sampling and elicitation requests
//	    reach the client as dependent requests.
//	--client-ca FILE
//	    (bridge --listen-grpc) Require client certificates signed by the CA
//	    in FILE.
//	--no-client-auth
//	    (bridge --listen-grpc) Serve TLS without client certificates:
//	    anyone who reaches ADDR can call the server's tools. tako prints a
//	    warning on stderr when it starts so.
//	--listen ADDR
//	    (inspect) Serve the page on ADDR, a loopback address such as
//	    127.0.0.1:8088 (the default is 127.0.0.1 on a free port).
//	--no-browser
//	    (inspect) Print the page's URL without opening a browser.
//	--cert FILE, --key FILE
//	    (--grpc) The client certificate chain and private key, PEM.
//	--ca FILE
//	    (--grpc) The CA that signed the server's certificate, PEM.
//	--server-name NAME
//	    (--grpc) The name the server's certificate must carry, when it is
//	    not the HOST of --grpc.
//	--plaintext
//	    (--grpc, bridge --listen-grpc) No TLS: for tests and a sidecar on
//	    the same host only.
//	--timeout DURATION
//	    Bound starting the server plus the operation, as in 30s or 2m.
//	    The default is 60s; 0 means no bound.
//	--format table|json|pretty
//	    Print text and tables (the default), or the protocol's JSON of
//	    the result on one line, or indented.
//	--json
//	    The same as --format json.
//	--log-level LEVEL
//	    Ask the server for log messages at LEVEL or above (debug, info,
//	    notice, warning, error, critical, alert, emergency) and print
//	    them on stderr as they arrive.
//	--prompt NAME, --resource URI
//	    (complete) What to complete an argument of: a prompt, or a
//	    resource template.
//	--root DIR
//	    Give the server DIR as a root (a file:// URI) when it asks for the
//	    client's roots. Repeatable.
//	--provider openai|anthropic, --model NAME, --base-url URL, --api-key-env VAR
//	    (call, shell) The model that answers the server's sampling
//	    requests, as for agent.
//	-v, --verbose
//	    Copy the server's stderr and tako's diagnostics to stderr, and
//	    print an error's line whole, however long (as --json does).
//	-h, --help
//	    Print this help.
//
// Flags may come before or after the other arguments, the command's name
// included, with one dash or two, as --flag=value or --flag value; "--"
// ends the flags. Every command takes -h or --help.
//
// Exit status: 0 on success; 1 when the tool reports an error (its content
// is printed all the same); 2 on a usage error, the call's arguments
// against the tool's schema included (an unknown tool, a missing
// argument); 3 when the server cannot be started or reached, breaks the
// protocol or answers with an error, when an authorization fails, when the
// timeout expires, when the agent reaches its turn limit, or when tako is
// interrupted; 4 when the server wants a login tako cannot run on its own
// (the message names the tako login command to run). Every failure prints
// one line on stderr that starts with "tako: ", in tako's words and saying
// each thing once; it is cut at 400 characters, except under --json and
// -v.
//
// Examples:
//
//	tako agent --provider openai --base-url http://127.0.0.1:8080/v1 --model m --stdio "go run ./examples/demo-server" "add 2 and 3"
//	tako tools --stdio "go run ./examples/demo-server"
//	tako call echo '{"message":"hello"}' --stdio "go run ./examples/demo-server"
//	tako tools --json --stdio "npx -y @modelcontextprotocol/server-everything"
//	tako tools --http http://127.0.0.1:3001/mcp --header 'X-Team: blue'
//	tako bridge --listen-ws 127.0.0.1:8765 --stdio "go run ./examples/demo-server"
//	tako tools --ws ws://127.0.0.1:8765/mcp
//	tako bridge --listen-ws 127.0.0.1:8765 --token --max-clients 8 --stdio "go run ./examples/demo-server"
//	tako bridge --listen-grpc 127.0.0.1:8443 --tls-cert server.crt --tls-key server.key --client-ca ca.crt --stdio "go run ./examples/demo-server"
//	tako tools --grpc 127.0.0.1:8443 --cert client.crt --key client.key --ca ca.crt --server-name mcp.example
package main
