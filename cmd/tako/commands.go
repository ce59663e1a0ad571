package main

import (
	"sort"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// command is one subcommand: what it does once connected, and its help.
type command struct {
	// op checks the command's arguments and returns what it does once the
	// server is connected. Commands that run on their own (bridge,
	// servers) have op set only to be known; execute dispatches them
	// before calling it.
	op func(inv *invocation) (operation, error)
	// stage names the request in a failure message ("tools/list").
	stage func(inv *invocation) string
	// synopsis is the command's usage line(s), help its explanation and
	// examples; `tako help CMD` and `tako CMD --help` print both.
	synopsis string
	help     string
	// server says whether the command takes a SERVER (the footer of its
	// help says how to give one).
	server bool
	// brief is the command in a few words, for the completion scripts.
	brief string
}

func fixed(s string) func(*invocation) string { return func(*invocation) string { return s } }

// commands is the command table. It is never modified.
var commands = map[string]*command{
	"tools": {brief: "list the server's tools, or describe one",
		op: toolsCommand, stage: fixed(mcp.MethodToolsList), server: true,
		synopsis: "tako tools SERVER [--format table|json|pretty]\ntako tools NAME SERVER [--format table|json|pretty]",
		help: `Lists the server's tools: the name with its arguments (optional ones in
[brackets]), the hints the server declared (r read-only, d destructive,
i idempotent, o open world) and the title and first line of the description,
cut to the terminal's width (never cut when stdout is not a terminal).
--format json prints the tools/list result, every page merged. With a NAME,
describes that tool whole: its description, each argument with its type,
default and choices, and its input and output schemas (--format json: the
tool as the server listed it).

  tako tools --stdio "npx -y @modelcontextprotocol/server-everything"
  tako tools get-sum --stdio "npx -y @modelcontextprotocol/server-everything"
  tako tools --config ~/.cursor/mcp.json --server github --format pretty`},
	"call": {brief: "call a tool",
		op: callCommand, server: true,
		stage:    func(inv *invocation) string { return mcp.MethodToolsCall + " " + inv.args[0] },
		synopsis: "tako call NAME [KEY=VALUE ...] SERVER\ntako call NAME '{\"key\": ...}' SERVER",
		help: `Calls the tool NAME and prints the content of its result: text as text (its
escape sequences dropped, other control characters shown as ^X), an image or
audio block as its type and size, a resource link as its URI, the structured
content as indented JSON when there is no text. KEY=VALUE pairs are typed by
the tool's input schema (integer, number, boolean, string; an array or
object as JSON); or give the arguments as one JSON object. Either way the
tool must be one the server lists, and a required argument left out gets the
schema's default, or is a usage error (exit status 2) that names every
missing one; a lone word ("call echo hi") suggests the KEY=VALUE meant.
Progress the server reports is printed on stderr as it arrives. Exit status
1 when the tool reports an error (its content is printed all the same).

On a terminal, a form or a URL the server asks the user for is asked there,
field by field, each answer checked as it is typed (Enter keeps the default;
!decline or !cancel answers the whole form), and a sampling request (the
server asks for a model's answer) is shown and answered there: typed, or
with --provider and --model drafted by that model and sent with Enter
(!edit types another, !decline refuses). From a script, tako declares no
elicitation, and sampling only with --provider, whose answers are sent as
they come. --root DIR (repeatable) gives a server that asks for roots that
directory.

  tako call echo message=hello --stdio "go run ./examples/demo-server"
  tako call get-sum a=2 b=3 --http http://127.0.0.1:3001/mcp
  tako call echo '{"message":"hello"}' --format json --config mcp.json
  tako call sample prompt=hi --provider openai --model m --stdio "go run ./examples/demo-server"`},
	"resources": {brief: "list the resources",
		op: resourcesCommand, stage: fixed(mcp.MethodResourcesList), server: true,
		synopsis: "tako resources SERVER [--format table|json|pretty]",
		help: `Lists the server's resources: URI, MIME type, and name or title with the
first line of the description.

  tako resources --stdio "npx -y @modelcontextprotocol/server-everything"`},
	"templates": {brief: "list the resource templates",
		op: templatesCommand, stage: fixed(mcp.MethodResourcesTemplatesList), server: true,
		synopsis: "tako templates SERVER [--format table|json|pretty]",
		help: `Lists the server's resource templates (RFC 6570 URI templates): fill one in
and give it to tako read.

  tako templates --http http://127.0.0.1:3001/mcp`},
	"read": {brief: "read a resource",
		op: readCommand, server: true,
		stage:    func(inv *invocation) string { return mcp.MethodResourcesRead + " " + inv.args[0] },
		synopsis: "tako read URI SERVER [--format table|json|pretty]",
		help: `Reads the resource at URI and prints its text; a binary resource shows as
its MIME type and size (--format json has the base64).

  tako read demo://resource/static/document/architecture.md --stdio "..."`},
	"prompts": {brief: "list the prompts",
		op: promptsCommand, stage: fixed(mcp.MethodPromptsList), server: true,
		synopsis: "tako prompts SERVER [--format table|json|pretty]",
		help: `Lists the server's prompts with their arguments (optional ones in
[brackets]) and descriptions.

  tako prompts --stdio "npx -y @modelcontextprotocol/server-everything"`},
	"prompt": {brief: "get a prompt's messages",
		op: promptCommand, server: true,
		stage:    func(inv *invocation) string { return mcp.MethodPromptsGet + " " + inv.args[0] },
		synopsis: "tako prompt NAME [KEY=VALUE ...] SERVER",
		help: `Gets the prompt NAME with its arguments (strings) and prints its messages,
each under its role.

  tako prompt args-prompt city=Paris state=Texas --stdio "..."`},
	"complete": {brief: "complete an argument of a prompt or a resource template",
		op: completeCommand, stage: fixed(mcp.MethodComplete), server: true,
		synopsis: "tako complete --prompt NAME ARG=PARTIAL [KEY=VALUE ...] SERVER\ntako complete --resource URI-TEMPLATE ARG=PARTIAL [KEY=VALUE ...] SERVER",
		help: `Asks the server to complete the argument ARG of a prompt or of a resource
template from PARTIAL (which may be empty), and prints one value a line. The
KEY=VALUE pairs after it are arguments already chosen, for servers whose
completions depend on them.

  tako complete --prompt completable-prompt department=E --stdio "..."
  tako complete --prompt completable-prompt name= department=Sales --stdio "..."`},
	"ping": {brief: "check that the server answers",
		op: pingCommand, stage: fixed(mcp.MethodPing), server: true,
		synopsis: "tako ping SERVER",
		help: `Connects, pings the server and prints how long the answer took (on the
stateless 2026-07-28 revision, which has no ping, server/discover).

  tako ping --http http://127.0.0.1:3001/mcp`},
	"info": {brief: "what the handshake learned",
		op: infoCommand, stage: fixed("info"), server: true,
		synopsis: "tako info SERVER [--format table|json|pretty]",
		help: `Prints what the handshake learned: the server's name and version, the
negotiated protocol revision, its capabilities and its instructions.

  tako info --stdio "npx -y @modelcontextprotocol/server-everything"`},
	"servers": {brief: "list a config file's servers, and if each answers",
		op:       func(*invocation) (operation, error) { return nil, nil },
		synopsis: "tako servers --config FILE [--timeout D]",
		help: `Lists the servers of a configuration file (Claude Desktop's and Cursor's
mcpServers, VS Code's servers) with their transport and target, and whether
each answers: all are connected at once, a few at a time, each within 10s
(or --timeout). Exit status 3 when one does not answer.

  tako servers --config ~/Library/Application\ Support/Claude/claude_desktop_config.json
  tako servers --config .vscode/mcp.json`},
	"bridge": {brief: "serve a server over WebSocket or gRPC",
		op:       func(*invocation) (operation, error) { return nil, nil },
		synopsis: "tako bridge --listen-ws ADDR [--token] [--max-clients N] [--tls-cert F --tls-key F] SERVER\ntako bridge --listen-grpc ADDR --tls-cert F --tls-key F --client-ca F SERVER",
		help: `Serves a server (--stdio, --http or --ws) to clients of another transport
until interrupted.
--listen-ws serves MCP over WebSocket at ws://ADDR/mcp (subprotocol "mcp",
one JSON-RPC message per text frame), a fresh server per client;
--listen-grpc serves the MCP gRPC service from one shared server, with
mutual TLS unless --no-client-auth or --plaintext. It prints the URL.

The WebSocket end refuses web pages of other sites, DNS rebinding included:
only a loopback Host (localhost, 127.0.0.1, [::1]) or one of --allow-host
HOST, and only the bridge's own Origin or one of --allow-origin ORIGIN.
--token requires a random token of every client (other users of this
machine can reach a loopback port) and prints the URL with it; --token-env
VAR takes it from $VAR. --max-clients N (default 128) bounds the clients
served at once; one more gets HTTP 503. Refusals are printed on stderr.

  tako bridge --listen-ws 127.0.0.1:8765 --stdio "go run ./examples/demo-server"
  tako bridge --listen-ws 127.0.0.1:8765 --token --config mcp.json --server everything`},
	"agent": {brief: "let a model use the servers' tools",
		synopsis: "tako agent --provider openai|anthropic --model M [flags] SERVER... \"PROMPT\"",
		help: `Gives a model the tools of every SERVER (repeat the server flags, or
--config FILE for all its servers, --server NAME to pick some) and runs it on
PROMPT until it answers without tool calls. The answer streams to stdout;
tool calls, their progress and results, the servers' log messages
(--log-level LEVEL) and the sampling requests the model answers for them
are shown on stderr. Flags: --base-url URL, --api-key-env VAR (the variable
that holds the API key, instead of OPENAI_API_KEY or ANTHROPIC_API_KEY),
--system TEXT, --max-turns N (at the limit the model answers once more
without tools, and tako exits with status 3), --prefix (name tools
SERVER__TOOL, for servers whose tools share names), --root DIR.

  tako agent --provider openai --base-url http://127.0.0.1:8080/v1 --model m \
    --stdio "go run ./examples/demo-server" "add 2 and 3"
  tako agent --provider anthropic --model claude-sonnet-4-5 --config mcp.json "..."`},
	"shell": {brief: "an interactive session on one or more servers",

		synopsis: "tako shell SERVER... [--no-history] [--root DIR] [--provider P --model M]",
		help: `An interactive session on one or more servers (repeat the server flags, or
--config FILE for all its servers), with line editing, history and TAB
completion of commands, tool, prompt and resource names, argument keys and,
where the server completes them (completion/complete), argument values.
At its prompt: tools [NAME], call NAME K=V ... (or JSON, quoted or not),
resources, templates, read URI, prompts, prompt NAME K=V ..., complete,
ping, info, servers, use NAME (the server the commands act on; the prompt
shows it), help, quit (or exit, Ctrl-D). Ctrl-C stops the running command.
Log messages (--log-level LEVEL), list changes and progress are shown as
they arrive; a form, a URL or a sampling request a server makes during a
call is asked at the prompt, as tako call asks it (Ctrl-C there cancels
it). Lines piped in are run in order; the shell then exits with status 1
if one of them failed. --root and --provider are as for tako call.
History is kept in $XDG_STATE_HOME/tako/shell_history (else in the user's
config directory; $TAKO_SHELL_HISTORY names another file, "off" or
--no-history keeps none).

  tako shell --stdio "npx -y @modelcontextprotocol/server-everything"
  tako shell --config mcp.json --log-level info`},
	"watch": {brief: "print the server's notifications as they come",
		op: watchCommand, stage: fixed("watch"), server: true,
		synopsis: "tako watch [URI ...] SERVER [--log-level LEVEL] [--timeout D] [--format json]",
		help: `Prints the server's notifications as they arrive, one line each with the
time: updates of the resources URI ... (subscribed with resources/subscribe),
changes of its tool, prompt and resource lists (with the names added and
removed), and its log messages at --log-level LEVEL and above. It runs until
Ctrl-C, or for --timeout D when given, and then exits with status 0; status
3 if the connection ends. --format json prints each notification as the
protocol's JSON, one a line.

  tako watch demo://resource/static/document/architecture.md --stdio "..."
  tako watch --log-level info --http http://127.0.0.1:3001/mcp`},
	"version": {brief: "print tako's version",
		synopsis: "tako version\ntako --version",
		help: `Prints the version of tako's module as the build recorded it (a release
tag, or a pseudo-version with the commit for a build from a checkout), and
the Go release it was built with.

  tako version    # tako v1.2.0 (go1.26.8 linux/amd64)`},
	"completion": {brief: "print a shell completion script",
		synopsis: "tako completion bash|zsh|fish",
		help: `Prints a script that completes tako's commands and flags, file names after
--config and the certificate flags, directories after --root, and the values
of --format, --log-level and --provider.

  tako completion fish > ~/.config/fish/completions/tako.fish
  source <(tako completion bash)      # in ~/.bashrc
  source <(tako completion zsh)       # in ~/.zshrc, after compinit`},
	"inspect": {brief: "look at servers in a web page",
		synopsis: "tako inspect [SERVER...] [--listen ADDR] [--no-browser]",
		help: `Opens a web page to look at servers with: their tools with forms made from
the input schemas, runs with progress and cancel, results by content kind,
resources (read, subscribe), prompts (with completion), the server's
requests (elicitation forms, sampling, roots), tasks, notifications and
logs, the history of every JSON-RPC message, the HTTP requests, OAuth
logins step by step, MCP Apps. Give servers as tako shell takes them
(repeat the flags, or --config FILE for all its servers; --ca, --cert,
--key, --server-name, --plaintext go with the --grpc before them), or
none and connect from the page. It serves 127.0.0.1 on a free port
(--listen ADDR for another), prints the URL with its session token and
opens the browser ($BROWSER; --no-browser only prints it). Every request
must carry the token, and a command typed in the page runs only once
confirmed. Ctrl-C ends it and its servers.

  tako inspect --stdio "npx -y @modelcontextprotocol/server-everything"
  tako inspect --http http://127.0.0.1:3001/mcp --ws ws://127.0.0.1:8765/mcp
  tako inspect --config ~/.cursor/mcp.json --no-browser`},
	"login": {brief: "authorize tako at an HTTP server (OAuth 2.1)",
		synopsis: "tako login [--scope S] [--dpop] [--no-browser] [--timeout D] URL\ntako login --client-credentials --client-id ID [--client-secret-env VAR] URL",
		help: `Runs a new OAuth 2.1 login at the MCP server at URL, in the browser ($BROWSER)
or with client credentials (the secret in $TAKO_CLIENT_SECRET), and stores the
tokens; later --http and --ws calls to URL send and refresh them. --scope asks
for a wider scope (a step-up), --dpop binds the tokens to a key stored with
them, --timeout (5m) bounds the time at the browser. Tokens are kept in plain
text, mode 0600, under the user's config directory or $TAKO_AUTH_DIR.

  tako login https://mcp.example.com/mcp
  tako login --scope "mcp:read mcp:write" https://mcp.example.com/mcp`},
	"logout": {brief: "revoke and forget the tokens of a login",

		synopsis: "tako logout URL",
		help: `Revokes the tokens tako login stored for URL at the server (when it offers
revocation; it says so when the server cannot be reached) and forgets them.

  tako logout https://mcp.example.com/mcp`},
}

// shortHelp is `tako help`: one screen (24 lines of 80 columns at most,
// which a test checks), pointing to `tako help CMD`.
const shortHelp = `tako: a command-line client for Model Context Protocol (MCP) servers.

Usage: tako COMMAND [ARGUMENTS] SERVER [FLAGS]

  tools [NAME]             list the server's tools, or describe one
  call NAME [K=V ...]      call a tool (or give its arguments as a JSON object)
  resources, templates     list the resources, the resource templates
  read URI                 read a resource
  prompts, prompt NAME     list the prompts, get one's messages
  complete --prompt NAME ARG=PARTIAL   complete an argument (or --resource URI)
  ping, info               check that it answers; what the handshake learned
  watch [URI ...]          print its notifications (updates, list changes, logs)
  servers --config FILE    list a config file's servers, and if each answers
  bridge --listen-ws ADDR  serve a stdio server over WebSocket (or gRPC)
  agent                    let a model use the servers' tools
  shell, inspect           a session on servers: at a prompt, or in a web page
  login URL, logout URL    authorize tako at an HTTP server (OAuth 2.1)
  version, completion SH   tako's version; a bash, zsh or fish completion script

SERVER: --stdio "CMD ARGS..." | --http URL | --ws URL | --grpc ADDR
        | --config FILE [--server NAME]  (Claude Desktop, Cursor, VS Code)
Output: --format table|json|pretty, --log-level LEVEL, -v; --timeout 60s

tako help CMD shows a command's help and examples; tako help all, everything.
`

// serverFooter ends the help of every command that takes a SERVER.
const serverFooter = `
SERVER is --stdio "CMD ARGS..." (split like a shell would, but no shell runs),
--http URL, --ws URL, --grpc ADDR (with --ca, --cert, --key), or --config FILE
with --server NAME (a Claude Desktop, Cursor or VS Code mcp.json). Flags:
--env KEY=VALUE, --header 'K: V', --timeout D (60s), --log-level LEVEL (the
server's log messages on stderr), --root DIR, -v (everything, and errors
never cut). Flags go anywhere on the line. tako help all lists every flag.
`

// commandHelp is the help of one command, or "" for none of that name.
func commandHelp(name string) string {
	c := commands[name]
	if c == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("Usage:\n")
	for l := range strings.SplitSeq(c.synopsis, "\n") {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("\n" + c.help + "\n")
	if c.server {
		b.WriteString(serverFooter)
	}
	return b.String()
}

// commandNames lists the commands, for a message.
func commandNames() string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
