package dial_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/dial"
)

// The command lines of real configuration files (the servers' READMEs,
// Claude Desktop's and VS Code's documentation) and the names they get.
func TestDefaultNameCommands(t *testing.T) {
	for _, c := range []struct {
		line string
		dir  string
		want string
	}{
		{line: "npx -y @modelcontextprotocol/server-everything", want: "server-everything"},
		{line: "npx -y @modelcontextprotocol/server-filesystem /Users/me/Desktop /Users/me/Downloads", want: "server-filesystem"},
		{line: "npx -y @modelcontextprotocol/server-memory@latest", want: "server-memory"},
		{line: "npx -y @upstash/context7-mcp@1.0.14", want: "context7-mcp"},
		{line: "npx --yes --package=@playwright/mcp@0.0.30 mcp-server-playwright", want: "mcp-server-playwright"},
		{line: "npx @playwright/mcp@latest --headless", want: "playwright"}, // the scope, when the name says nothing
		{line: "npx -y mcp-remote https://mcp.linear.app/sse", want: "linear"},
		{line: "npx -y mcp-remote@latest https://mcp.atlassian.com/v1/sse --transport sse-only", want: "atlassian"},
		{line: "pnpm dlx @modelcontextprotocol/server-github", want: "server-github"},
		{line: "bunx @modelcontextprotocol/server-sequential-thinking", want: "server-sequential-thinking"},
		{line: "yarn dlx @modelcontextprotocol/server-brave-search", want: "server-brave-search"},
		{line: "npm exec -- @modelcontextprotocol/server-puppeteer", want: "server-puppeteer"},
		{line: "uvx mcp-server-git --repository /home/me/repo", want: "mcp-server-git"},
		{line: "uvx mcp-server-fetch", want: "mcp-server-fetch"},
		{line: "uvx mcp-server-time --local-timezone=America/New_York", want: "mcp-server-time"},
		{line: "uvx --from git+https://github.com/oraios/serena serena start-mcp-server", want: "serena"},
		{line: "uvx awslabs.aws-documentation-mcp-server@latest", want: "aws-documentation-mcp-server"},
		{line: "uvx mcp-server-sqlite==0.6.2 --db-path test.db", want: "mcp-server-sqlite"},
		{line: "uv run --directory /Users/me/weather weather.py", want: "weather"},
		{line: "uv --directory /Users/me/projects/weather run server.py", want: "weather"},
		{line: "uv tool run arxiv-mcp-server --storage-path /tmp", want: "arxiv-mcp-server"},
		{line: "uv run mcp run server.py", dir: "/srv/notes", want: "notes"},
		{line: "pipx run mcp-server-fetch", want: "mcp-server-fetch"},
		{line: "python -m foo.server", want: "foo"},
		{line: "python -m mcp_server_time --local-timezone UTC", want: "mcp_server_time"},
		{line: "python3.12 /opt/mcp/weather/server.py", want: "weather"},
		{line: "/usr/local/bin/python3 -u src/notes_server/__main__.py", want: "notes_server"},
		{line: "poetry run python -m github_mcp.main", want: "github_mcp"},
		{line: "node /Users/me/mcp/weather-server/build/index.js", want: "weather-server"},
		{line: "node build/index.js", dir: "/home/me/code/kanban-mcp", want: "kanban-mcp"},
		{line: "node --env-file=.env dist/server.js", dir: "/srv/todo", want: "todo"},
		{line: "node /app/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio", want: "server-everything"},
		{line: "tsx src/index.ts", dir: "/work/jira-mcp", want: "jira-mcp"},
		{line: "deno run -A jsr:@denyhq/mcp-weather@0.2", want: "mcp-weather"},
		{line: "deno run --allow-net https://deno.land/x/mcp_github/mod.ts", want: "mcp_github"},
		{line: "docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server", want: "github-mcp-server"},
		{line: "docker run -i --rm --mount type=bind,src=/Users/me,dst=/projects mcp/filesystem /projects", want: "filesystem"},
		{line: "docker run -i --rm -v /var/run/docker.sock:/var/run/docker.sock mcp/docker:latest", want: "docker"},
		{line: "podman run -i --rm --name pg -e DATABASE_URI quay.io/crunchydata/postgres-mcp@sha256:0123abcd", want: "postgres-mcp"},
		{line: "go run github.com/acme/tools/cmd/inventory-mcp@latest", want: "inventory-mcp"},
		{line: "go run ./cmd/search-server", want: "search-server"},
		{line: "java -jar /opt/mcp/weather-0.1.0-SNAPSHOT.jar", want: "weather"},
		{line: "java -cp app.jar com.example.WeatherServer", want: "WeatherServer"},
		{line: "dotnet run --project C:\\src\\Weather\\Weather.csproj", want: "Weather"},
		{line: "cmd /c npx -y @modelcontextprotocol/server-slack", want: "server-slack"},
		{line: "bash -c 'npx -y @modelcontextprotocol/server-gitlab'", want: "server-gitlab"},
		{line: "env GITHUB_TOKEN=x npx -y @modelcontextprotocol/server-github", want: "server-github"},
		{line: "./bin/demo-server", want: "demo-server"},
		{line: "/usr/local/bin/github-mcp-server stdio", want: "github-mcp-server"},
		{line: "C:\\Tools\\mcp\\sqlite-mcp.exe --db x.db", want: "sqlite-mcp"},
		{line: "demo-server-1.4.2", want: "demo-server"},
		{line: "python server.py", want: "server"}, // nothing better to go on
		{line: "npx", want: "npx"},
	} {
		var args []string
		if c.line != "bash -c 'npx -y @modelcontextprotocol/server-gitlab'" {
			args = strings.Fields(c.line)
		} else {
			args = []string{"bash", "-c", "npx -y @modelcontextprotocol/server-gitlab"}
		}
		s := dial.Server{Command: args[0], Args: args[1:], Dir: c.dir}
		if got := s.DefaultName(); got != c.want {
			t.Errorf("%q (dir %q): %q, want %q", c.line, c.dir, got, c.want)
		}
	}
}

// Issue 21: the CLI named a server with strings.Replace(value, "ws",
// "http", 1), so https://news.example.com was named nehttp_example_com,
// every gRPC target was "server", and a local server was 127_0_0_1.
func TestDefaultNameURLs(t *testing.T) {
	for _, c := range []struct {
		kind dial.Kind
		url  string
		want string
	}{
		{"", "https://news.example.com/mcp", "news"},
		{"", "wss://news.example.com/mcp", "news"},
		{"", "https://news.example.com", "news"},
		{"", "http://127.0.0.1:3001/mcp", "localhost-3001"},
		{"", "http://localhost:8080/mcp", "localhost-8080"},
		{"", "http://[::1]:9000/mcp", "localhost-9000"},
		{"", "ws://127.0.0.1:51234/mcp", "localhost-51234"},
		{"", "http://localhost/mcp", "localhost"},
		{"", "http://localhost:3000/github/mcp", "github"},
		{"", "http://127.0.0.1:8000/servers/weather/sse", "weather"},
		{dial.SSE, "http://localhost:3001/sse", "localhost-3001"},
		{"", "https://mcp.notion.com/mcp", "notion"},
		{"", "https://mcp.linear.app/sse", "linear"},
		{"", "https://api.githubcopilot.com/mcp/", "githubcopilot"},
		{"", "https://mcp.deepwiki.com/mcp", "deepwiki"},
		{"", "https://bindings.mcp.cloudflare.com/sse", "bindings"},
		{"", "https://huggingface.co/mcp", "huggingface"},
		{"", "https://mcp.zapier.com/api/mcp/s/c2VjcmV0/mcp", "zapier"}, // the path holds a secret
		{"", "https://www.example.com/mcp", "example"},
		{"", "https://mcp.bbc.co.uk/mcp", "bbc"},
		{"", "https://user:pass@Search.Example.ORG:8443/v1/mcp?key=k", "search"},
		{"", "http://devbox:8080/mcp", "devbox"},
		{"", "http://10.0.0.5:8080/mcp", "10-0-0-5-8080"},
		{"", "http://mcp.api.com/", "api"},
		{dial.GRPC, "127.0.0.1:50051", "localhost-50051"},
		{dial.GRPC, "localhost:50051", "localhost-50051"},
		{"", "grpc://tools.example.com:443", "tools"},
		{dial.GRPC, "mcp.inventory.example.com:443", "inventory"},
		{dial.GRPC, "dns:///search.internal:9000", "search"},
		{dial.GRPC, "unix:///run/mcp/files.sock", "files"},
		{"", "not a url", "server"},
	} {
		s := dial.Server{Kind: c.kind, URL: c.url}
		if got := s.DefaultName(); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.kind, c.url, got, c.want)
		}
	}
}

// TestDefaultNameIsAToolPrefix: whatever the input, a name is letters,
// digits, '_' and '-', at most MaxNameLen long, and never empty.
func TestDefaultNameIsAToolPrefix(t *testing.T) {
	for _, s := range []dial.Server{
		{Command: "npx", Args: []string{"-y", "@scope/weird name!with$chars@1.0"}},
		{Command: "/opt/ünïcode/serveur-météo"},
		{Command: "npx", Args: []string{"-y", "@x/" + strings.Repeat("very-long-package-name-", 5)}},
		{URL: "https://xn--bcher-kva.example/mcp"},
		{Command: "..."},
		{},
	} {
		n := s.DefaultName()
		if n == "" || len(n) > dial.MaxNameLen || strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Errorf("%+v: name %q is not a tool prefix", s, n)
		}
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"My Server":          "My-Server",
		"github.com/acme":    "github-com-acme",
		"__weird__":          "weird",
		"a  --  b":           "a-b",
		"already_fine-name1": "already_fine-name1",
		"¿qué?":              "qu",
		"":                   "",
	} {
		if got := dial.CleanName(in); got != want {
			t.Errorf("CleanName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUniqueNames(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"a", "a", "a"}, []string{"a", "a-2", "a-3"}},
		{[]string{"a", "a", "a-2"}, []string{"a", "a-3", "a-2"}},
		{[]string{"demo-server", "demo-server", "x"}, []string{"demo-server", "demo-server-2", "x"}},
		{nil, []string{}},
	} {
		if got := dial.UniqueNames(c.in); !slices.Equal(got, c.want) {
			t.Errorf("UniqueNames(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
