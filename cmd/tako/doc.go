// Tako is a command-line client for Model Context Protocol (MCP) servers:
// it starts a server, lists its tools and calls them.
//
// Usage:
//
//	tako tools SERVER [flags]
//	tako call NAME [ARGUMENTS] SERVER [flags]
//	tako help
//
// "tools" prints the server's tools as a table: the name, the hints, and
// the title and the first line of the description. HINTS shows the
// annotations the server declared true, in this order: r read-only,
// d destructive, i idempotent, o open world (they are the server's claims,
// not guarantees). With --json it prints {"tools":[...]}: every page of
// tools/list merged, each tool exactly as the server sent it.
//
// "call" calls the tool NAME with ARGUMENTS, a JSON object ({} when left
// out), and prints the content of the result: text as text, an image or
// audio block as a note of its type and size, a resource link as its URI,
// an embedded resource as its text, and the structured content as indented
// JSON when there is no text. With --json it prints the whole result as the
// server sent it.
//
// SERVER is one of:
//
//	--stdio "CMD ARGS..."
//	    Start CMD with ARGS and speak MCP over its stdin and stdout. The
//	    string is split into words as a POSIX shell splits a command
//	    (blanks, 'single quotes', "double quotes", backslash escapes), but
//	    no shell runs: $VAR, ~ and * stay as written, and an unquoted
//	    | & ; < > ( ) or ` is an error.
//	--http URL, --ws URL, --grpc ADDR
//	    Not yet supported.
//
// Flags:
//
//	--env KEY=VALUE
//	    Set KEY in the server's environment, which is otherwise tako's
//	    own. Repeatable.
//	--timeout DURATION
//	    Bound starting the server plus the operation, as in 30s or 2m.
//	    The default is 60s; 0 means no bound.
//	--json
//	    Print the protocol's JSON instead of text.
//	-v, --verbose
//	    Copy the server's stderr and tako's diagnostics to stderr.
//	-h, --help
//	    Print this help.
//
// Flags may come before or after the other arguments, with one dash or two,
// as --flag=value or --flag value; "--" ends the flags.
//
// Exit status: 0 on success; 1 when the tool reports an error (its content
// is printed all the same); 2 on a usage error; 3 when the server cannot be
// started or reached, breaks the protocol or answers with an error, when the
// timeout expires, or when tako is interrupted. Every failure prints one
// line on stderr that starts with "tako: ".
//
// Examples:
//
//	tako tools --stdio "go run ./examples/demo-server"
//	tako call echo '{"message":"hello"}' --stdio "go run ./examples/demo-server"
//	tako tools --json --stdio "npx -y @modelcontextprotocol/server-everything"
package main
