package dial

import (
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// The naming rule, in full (DefaultName's doc is its summary).
//
// A name ends up in tool names (with a prefix policy, "news__search"), in
// the shell's "use NAME", in errors and events, so it must be short, stable
// (the same Server always gets the same name, whatever else is configured)
// and say which server it is. The name of what a command runs is that
// thing's name, not the launcher's: every npx server would otherwise be
// "npx". A URL's name is its host's first label that is not a generic word
// (mcp.notion.com is notion, not mcp), because a hosted server's path is
// often an id or a secret (mcp.zapier.com/api/mcp/s/KEY/mcp); only a
// server on this machine, whose host says nothing, is named after its path
// or, failing that, its port (localhost-3001), so that two local servers
// on two ports get two names without a counter.

// MaxNameLen bounds DefaultName's result in bytes: model APIs cap tool
// names at 64 characters, and a prefixed tool name is the server's name,
// a separator and the tool's own name.
const MaxNameLen = 32

// DefaultName is the name of a server whose Name is empty: a readable
// prefix for its tools, made only of letters, digits, '_' and '-'.
//
//   - A command is named after what it runs. For launchers (npx, pnpm dlx,
//     bunx, uvx, uv run, pipx run, node, python, deno, go run, docker run,
//     java -jar, cmd /c, sh -c, env, ...) that is the package, module,
//     script or image they start, without scope, version or extension:
//     "npx -y @modelcontextprotocol/server-everything@latest" is
//     server-everything, "uvx mcp-server-git" mcp-server-git, "python -m
//     foo.server" foo, "docker run -i --rm ghcr.io/github/github-mcp-server"
//     github-mcp-server, "node /srv/weather/build/index.js" weather (generic
//     file and folder names such as index, main, server, dist and build are
//     passed over), "npx mcp-remote https://mcp.linear.app/sse" linear (the
//     proxied URL's name). Any other command is its base name without
//     extension: "./bin/demo-server" is demo-server.
//   - A URL is named after its host's first label that is not a generic
//     word (www, mcp, api, app, sse, ws, server, remote, gateway):
//     "https://news.example.com/mcp" is news, "https://mcp.notion.com/mcp"
//     notion. A loopback host (localhost, 127.0.0.1, ::1) says nothing, so
//     a local server is named after its first path segment that is not a
//     generic word ("http://localhost:8080/github/mcp" is github), else
//     localhost-PORT ("http://127.0.0.1:3001/mcp" is localhost-3001). Any
//     other IP address is spelt with dashes, with its port
//     (10-0-0-5-8080).
//   - A gRPC target is a host and port named as a URL's host is
//     ("127.0.0.1:50051" is localhost-50051), and "unix:///run/mcp/x.sock"
//     is x.
//
// Names longer than MaxNameLen are cut; a server nothing can be learnt from
// is "server". DefaultName does not make names unique: see UniqueNames.
func (s *Server) DefaultName() string {
	var n string
	switch k, _ := s.kind(); {
	case k == Stdio || (k == "" && s.Command != ""):
		n = commandName(s.Command, s.Args, s.Dir)
	case k == GRPC:
		n = grpcName(s.URL)
	default:
		n = urlName(s.URL)
	}
	if n = CleanName(n); n == "" {
		n = "server"
	}
	return n
}

// CleanName makes s a valid name: every run of characters other than
// letters, digits, '_' and '-' becomes one '-', the ends lose their '-' and
// '_', and the result is cut to MaxNameLen bytes. It is what DefaultName
// applies last, and what a program can apply to a name of its own (a
// server's self-reported name) before it prefixes tools with it.
func CleanName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-_")
	if len(out) > MaxNameLen {
		out = strings.TrimRight(out[:MaxNameLen], "-_")
	}
	return out
}

// UniqueNames returns names with every repeat renamed: the first of equal
// names keeps its name, the next ones get the smallest "-2", "-3", ...
// suffix that is not in names already, so that ["a", "a", "a-2"] becomes
// ["a", "a-3", "a-2"] and no name given on purpose is ever changed unless it
// repeats one before it.
func UniqueNames(names []string) []string {
	taken := make(map[string]bool, len(names))
	for _, n := range names {
		taken[n] = true
	}
	seen := make(map[string]bool, len(names))
	out := make([]string, len(names))
	for i, n := range names {
		if !seen[n] {
			seen[n] = true
			out[i] = n
			continue
		}
		for k := 2; ; k++ {
			c := n + "-" + strconv.Itoa(k)
			if !taken[c] {
				taken[c], seen[c] = true, true
				out[i] = c
				break
			}
		}
	}
	return out
}

// launcher says how to find, in a launcher's arguments, what it runs.
type launcher struct {
	// sub are the subcommands that come before the target ("npm exec",
	// "uv tool run", "docker run").
	sub []string
	// valued are the flags that take the next argument as their value
	// (when not spelt --flag=value).
	valued []string
	// module is the flag whose value is a dotted module or class name
	// (python -m); target the flags whose value is the target itself
	// (java -jar, dotnet --project); dir the flags whose value is a
	// project folder, the name's fallback (uv --directory).
	module string
	target []string
	dir    []string
	// rest: the target is a command line in one argument after one of
	// these flags (sh -c "npx foo"), or the rest of the arguments (cmd
	// /c npx foo).
	rest    []string
	inline  bool
	keyVals bool // leading KEY=VALUE arguments are skipped (env)
}

var (
	nodeLike = launcher{valued: []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file", "-C", "--conditions", "--title"}}
	npxLike  = launcher{valued: []string{"-p", "--package", "--cache", "--registry", "--userconfig", "-w", "--workspace", "--prefix"}, sub: []string{"exec", "x", "dlx"}, dir: []string{"--prefix", "-C", "--dir"}}
	pyLike   = launcher{module: "-m", valued: []string{"-W", "-X", "-c", "--check-hash-based-pycs"}}
	uvLike   = launcher{sub: []string{"run", "tool", "x"}, valued: []string{"--from", "--with", "--with-requirements", "--with-editable", "--python", "-p", "--index-url", "--extra-index-url", "--index", "--env-file", "--package", "--group", "--extra", "--cache-dir", "--config-file"}, dir: []string{"--directory", "--project"}}
	runLike  = launcher{sub: []string{"run"}, valued: []string{"-C", "--directory", "-e", "--env"}, dir: []string{"-C", "--directory"}}
	shell    = launcher{rest: []string{"-c"}, inline: true}
	oci      = launcher{sub: []string{"run", "container"}, valued: []string{"-e", "--env", "--env-file", "-v", "--volume", "--mount", "--name", "-p", "--publish", "--network", "--net", "-w", "--workdir", "--entrypoint", "-u", "--user", "--platform", "-l", "--label", "--add-host", "--cpus", "-m", "--memory", "--pull", "-h", "--hostname", "--security-opt", "--cap-add", "--cap-drop", "--device", "--dns", "--ulimit", "--restart", "--log-driver", "--tmpfs", "--shm-size", "--ipc", "--pid", "--runtime", "--gpus", "--expose", "--cidfile", "--label-file", "--link", "--stop-signal", "--stop-timeout", "--storage-opt", "--group-add"}}
)

// launchers by the base name of the command, without extension.
var launchers = map[string]launcher{
	"npx":     npxLike,
	"pnpx":    npxLike,
	"bunx":    npxLike,
	"pnpm":    npxLike,
	"yarn":    npxLike,
	"npm":     npxLike,
	"bun":     {sub: []string{"x", "run"}, valued: []string{"--cwd", "-r", "--preload"}, dir: []string{"--cwd"}},
	"node":    nodeLike,
	"nodejs":  nodeLike,
	"tsx":     nodeLike,
	"ts-node": nodeLike,
	"deno":    {sub: []string{"run", "serve"}, valued: []string{"-c", "--config", "--import-map", "--lock", "--env-file", "--location", "--seed", "--cert", "-L", "--log-level"}},
	"python":  pyLike,
	"python3": pyLike,
	"py":      pyLike,
	"pythonw": pyLike,
	"pypy":    pyLike,
	"pypy3":   pyLike,
	"uv":      uvLike,
	"uvx":     uvLike,
	"pipx":    {sub: []string{"run"}, valued: []string{"--spec", "--python", "--pip-args", "--index-url"}},
	"poetry":  runLike,
	"pdm":     runLike,
	"hatch":   runLike,
	"rye":     runLike,
	"pipenv":  runLike,
	"conda":   {sub: []string{"run"}, valued: []string{"-n", "--name", "-p", "--prefix"}},
	"go":      {sub: []string{"run", "tool"}, valued: []string{"-C", "-tags", "-ldflags", "-gcflags", "-asmflags", "-mod", "-modfile", "-exec", "-p", "-pkgdir", "-overlay", "-toolexec"}, dir: []string{"-C"}},
	"cargo":   {sub: []string{"run"}, valued: []string{"-p", "--package", "--manifest-path", "--features", "-F", "--target"}, target: []string{"--bin"}},
	"docker":  oci,
	"podman":  oci,
	"nerdctl": oci,
	"java":    {valued: []string{"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-modules"}, target: []string{"-jar"}, module: "-m"},
	"dotnet":  {sub: []string{"run", "exec", "tool"}, valued: []string{"-c", "--configuration", "-f", "--framework", "-r", "--runtime", "-a", "--arch", "--launch-profile"}, target: []string{"--project", "-p"}},
	"ruby":    {valued: []string{"-I", "-r", "-e"}},
	"php":     {valued: []string{"-c", "-d"}},
	"nix":     {sub: []string{"run", "shell"}},
	"sh":      shell,
	"bash":    shell,
	"zsh":     shell,
	"dash":    shell,
	"cmd":     {rest: []string{"/c", "/C", "/k", "/K"}},
	"env":     {keyVals: true, valued: []string{"-u", "--unset", "-C", "--chdir"}},
}

// commandName names a stdio server after what command and args run; dir is
// its working directory, a fallback.
func commandName(command string, args []string, dir string) string {
	n, weak := runName(command, args, 0)
	if n != "" && !weak {
		return n
	}
	if d := baseName(dir); d != "" && !generic(d) {
		return d
	}
	if n != "" {
		return n
	}
	return stem(baseName(command))
}

// runName is commandName without the working directory; weak reports a
// name made of generic words only (index, ./server.py), which a working
// directory's name beats. depth bounds the launchers run by launchers (env
// npx, cmd /c npx, uv run python).
func runName(command string, args []string, depth int) (name string, weak bool) {
	base := stem(baseName(command))
	l, ok := launchers[strings.ToLower(launcherKey(base))]
	if !ok || depth > 4 {
		return stripVersion(base), false
	}
	var fallback string // a project folder
	weakName := func(n string) (string, bool) {
		if fallback != "" && !generic(fallback) {
			return fallback, false
		}
		return n, true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "":
			continue
		case l.keyVals && strings.Contains(a, "=") && !strings.HasPrefix(a, "-"):
			continue
		case hasFlag(l.rest, a):
			rest := args[i+1:]
			if l.inline && len(rest) > 0 {
				rest = strings.Fields(rest[0])
			}
			if len(rest) == 0 {
				return weakName("")
			}
			return runName(rest[0], rest[1:], depth+1)
		case a == "--":
			continue
		case strings.HasPrefix(a, "-"):
			flag, val, hasVal := strings.Cut(a, "=")
			if !hasVal && (hasFlag(l.valued, flag) || hasFlag(l.target, flag) || flag == l.module && l.module != "") && i+1 < len(args) {
				i++
				val, hasVal = args[i], true
			}
			if !hasVal {
				continue
			}
			switch {
			case l.module != "" && flag == l.module:
				if n := dottedName(val); n != "" {
					return n, false
				}
				return weakName(val)
			case hasFlag(l.target, flag):
				if n := pathName(val); n != "" {
					return n, false
				}
				return weakName(stripVersion(stem(baseName(val))))
			case hasFlag(l.dir, flag) && fallback == "":
				fallback = baseName(val)
			}
			continue
		case hasFlag(l.sub, a):
			continue // a subcommand: it comes before the target, where the loop ends
		}
		// The target: a package, a script, an image, or a launcher again.
		if _, again := launchers[strings.ToLower(launcherKey(stem(baseName(a))))]; again && !strings.ContainsAny(a, "@:") {
			return runName(a, args[i+1:], depth+1)
		}
		if n := proxiedName(a, args[i+1:]); n != "" {
			return n, false
		}
		if n := pathName(a); n != "" {
			return n, false
		}
		// Everything in it is generic (index.js, ./server.py).
		return weakName(stripVersion(stem(baseName(a))))
	}
	return weakName("")
}

// versionedLauncher matches python3.12, node22 and the like.
var versionedLauncher = regexp.MustCompile(`^(python|python3|pypy3?|node|nodejs|java|ruby|php)[0-9.]*$`)

// launcherKey maps a versioned launcher's name to its launcher's.
func launcherKey(base string) string {
	if m := versionedLauncher.FindStringSubmatch(strings.ToLower(base)); m != nil {
		return m[1]
	}
	return base
}

func hasFlag(list []string, a string) bool {
	for _, f := range list {
		if f == a {
			return true
		}
	}
	return false
}

// proxiedName is the name of the remote server a local proxy such as
// mcp-remote forwards to: its URL's name.
func proxiedName(pkg string, rest []string) string {
	switch stripVersion(baseName(strings.TrimPrefix(pkg, "npm:"))) {
	case "mcp-remote", "mcp-proxy", "supergateway":
	default:
		return ""
	}
	for _, a := range rest {
		if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
			return urlName(a)
		}
	}
	return ""
}

// genericWords are the file, folder, module and host words that say
// nothing about which server it is.
var genericWords = map[string]bool{
	"index": true, "main": true, "server": true, "servers": true, "app": true, "cli": true, "run": true, "start": true,
	"dist": true, "build": true, "lib": true, "src": true, "bin": true, "out": true, "cmd": true, "target": true,
	"__main__": true, "__init__": true, "mod": true, "release": true, "debug": true, "node_modules": true,
	"mcp": true, "stdio": true, "www": true, "api": true, "sse": true, "ws": true, "remote": true, "gateway": true,
	"http": true, "https": true, "rpc": true, "jsonrpc": true, "message": true, "messages": true, "stream": true,
	".": true, "..": true, "~": true, "tmp": true, "mcp-server": true,
}

var apiVersion = regexp.MustCompile(`^v[0-9]+$`)

func generic(s string) bool {
	s = strings.ToLower(s)
	return genericWords[s] || apiVersion.MatchString(s)
}

// pathName names what a package, script, image or folder path is: its last
// segment that is not generic, without scope, version and extension; ""
// if every segment is generic.
func pathName(p string) string {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "npm:"), "jsr:")
	if u, err := url.Parse(p); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https" || strings.HasPrefix(u.Scheme, "git")) {
		p = u.Path // a script or repository by URL (deno, uvx --from)
	}
	p = strings.TrimSuffix(p, ".git")
	if i := strings.Index(p, "@sha256:"); i > 0 {
		p = p[:i] // an image pinned by digest
	}
	segs := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
	for i := len(segs) - 1; i >= 0; i-- {
		seg := segs[i]
		if i == len(segs)-1 {
			// A package's own name: awslabs.aws-docs-mcp-server@1.2 is
			// aws-docs-mcp-server, weather-0.1.0.jar weather.
			seg = dottedName(stripVersion(stem(seg)))
		}
		// An npm scope names the package when its name says nothing
		// (@playwright/mcp).
		seg = strings.TrimPrefix(seg, "@")
		if seg != "" && !generic(seg) {
			return seg
		}
	}
	return ""
}

// dottedName names a module or class (foo.server, com.example.Weather): its
// last part that is not generic, or "" if none is.
func dottedName(m string) string {
	parts := strings.Split(stripVersion(m), ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] != "" && !generic(parts[i]) {
			return parts[i]
		}
	}
	return ""
}

// baseName is the last segment of a path with either separator.
func baseName(p string) string {
	p = strings.TrimRight(p, `/\`)
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	return p
}

// extensions a command, script or archive name loses.
var extensions = []string{".exe", ".cmd", ".bat", ".ps1", ".sh", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx",
	".py", ".pyz", ".pyw", ".rb", ".pl", ".php", ".jar", ".dll", ".csproj", ".fsproj", ".sock", ".whl", ".tgz", ".go"}

func stem(name string) string {
	lower := strings.ToLower(name)
	for _, e := range extensions {
		if strings.HasSuffix(lower, e) && len(name) > len(e) {
			return name[:len(name)-len(e)]
		}
	}
	return name
}

// trailingVersion matches a version glued to a name: -1.2.3, _v0.6.2,
// -0.1.0-SNAPSHOT.
var trailingVersion = regexp.MustCompile(`[-_.]v?[0-9]+(\.[0-9]+)+([-.+][0-9A-Za-z.]+)?$`)

// stripVersion drops a package's version: name@1.2.3, @scope/name@latest,
// name==1.0, name>=2, name[extra], image:tag, name-1.2.3.
func stripVersion(s string) string {
	if i := strings.LastIndex(s, "@"); i > 0 {
		s = s[:i]
	}
	if i := strings.IndexAny(s, "=<>!~;[ "); i > 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, ":"); i > 0 && !strings.Contains(s[i:], "/") {
		s = s[:i]
	}
	if strings.HasPrefix(s, "@") {
		if _, name, ok := strings.Cut(s, "/"); ok {
			s = name
		}
	}
	return trailingVersion.ReplaceAllString(s, "")
}

// urlName names a server by URL (see DefaultName).
func urlName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if !isLoopback(host) && net.ParseIP(host) == nil {
		return hostName(host)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg != "" && !generic(seg) {
			return stripVersion(stem(seg))
		}
	}
	port := u.Port()
	if isLoopback(host) {
		if port == "" {
			return "localhost"
		}
		return "localhost-" + port
	}
	n := strings.NewReplacer(".", "-", ":", "-").Replace(host)
	if port != "" {
		n += "-" + port
	}
	return n
}

// hostName is the first label of a host name that is not generic and not
// the top-level domain (or a second-level one such as co in co.uk); the
// label before the top-level domain when they all are.
func hostName(host string) string {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(labels) == 1 {
		return labels[0]
	}
	for i, l := range labels[:len(labels)-1] {
		if i == len(labels)-2 && secondLevel[l] && i > 0 {
			break
		}
		if !generic(l) && l != "" {
			return l
		}
	}
	return labels[len(labels)-2]
}

// secondLevel are the labels that sit under a country's domain the way
// com does under the root (example.co.uk, example.com.au).
var secondLevel = map[string]bool{"co": true, "com": true, "org": true, "net": true, "gov": true, "ac": true, "edu": true, "ne": true, "or": true, "go": true}

func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// grpcName names a gRPC target: host:port, grpc://host:port, dns:///host:port
// or unix:///path.
func grpcName(target string) string {
	t := target
	for _, p := range []string{"grpc://", "grpcs://", "dns:///", "dns:", "passthrough:///", "ipv4:", "ipv6:"} {
		t = strings.TrimPrefix(t, p)
	}
	if rest, ok := strings.CutPrefix(t, "unix:"); ok {
		return stem(baseName(strings.TrimPrefix(rest, "//")))
	}
	if rest, ok := strings.CutPrefix(t, "unix-abstract:"); ok {
		return stem(baseName(rest))
	}
	if i := strings.Index(t, "/"); i >= 0 {
		t = t[:i]
	}
	host, port, err := net.SplitHostPort(t)
	if err != nil {
		host, port = t, ""
	}
	u := &url.URL{Scheme: "grpc", Host: host}
	if port != "" {
		u.Host = net.JoinHostPort(host, port)
	}
	return urlName(u.String())
}

// nameOf is s's Name, else its DefaultName.
func nameOf(s *Server) string {
	if s.Name != "" {
		return s.Name
	}
	return s.DefaultName()
}
