package inspect

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestServerJSONChoices: a server.json shaped like the registry's schema
// (npm, pypi, oci and mcpb packages; a Streamable HTTP remote with URL
// variables and headers, an SSE one) lists each with what it asks for,
// and resolves a choice into the exact command or URL.
func TestServerJSONChoices(t *testing.T) {
	b, err := os.ReadFile("testdata/server.json")
	if err != nil {
		t.Fatal(err)
	}
	sj, err := parseServerJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	cs := sj.choices()
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID+"="+c.Kind)
	}
	if want := []string{"package:0=stdio", "package:1=stdio", "package:2=stdio", "package:3=stdio", "remote:0=http", "remote:1=sse", "remote:2=sse"}; !slices.Equal(ids, want) {
		t.Fatalf("choices %v, want %v", ids, want)
	}
	if cs[3].Error == "" || !strings.Contains(cs[3].Error, `"mcpb"`) {
		t.Errorf("the mcpb package: error %q, want a refusal naming it", cs[3].Error)
	}
	keys := func(c regChoice) (ks []string) {
		for _, f := range c.Fields {
			ks = append(ks, f.Key)
		}
		return ks
	}
	if got, want := keys(cs[0]), []string{"runtime:0/heap", "arg:0", "arg:1", "arg:2", "env:WEATHER_API_KEY", "env:WEATHER_LOG"}; !slices.Equal(got, want) {
		t.Errorf("the npm package asks for %v, want %v", got, want)
	}
	if f := cs[0].Fields[4]; !f.Required || !f.Secret || f.Label != "WEATHER_API_KEY" {
		t.Errorf("the API key field %+v: want required and secret", f)
	}
	if f := cs[0].Fields[2]; f.Default != "metric" || !slices.Equal(f.Choices, []string{"metric", "imperial"}) {
		t.Errorf("the units field %+v", f)
	}
	if got, want := keys(cs[4]), []string{"url:tenant", "header:Authorization/token", "header:X-Region"}; !slices.Equal(got, want) {
		t.Errorf("the remote asks for %v, want %v", got, want)
	}

	answers := map[string]string{"arg:0": "Lisbon", "arg:2": "storm\n\nflood\n", "env:WEATHER_API_KEY": "k-1"}
	s, err := sj.server("package:0", answers)
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{s.Command}, s.Args...)
	if want := []string{"npx", "-y", "--node-options", "--max-old-space-size=512", "@tako-mcp/weather@1.4.2", "Lisbon", "--units", "metric", "--alert", "storm", "--alert", "flood"}; !slices.Equal(argv, want) {
		t.Errorf("npm argv %q, want %q", argv, want)
	}
	if want := []string{"WEATHER_API_KEY=k-1", "WEATHER_LOG=info"}; !slices.Equal(s.Env, want) {
		t.Errorf("npm env %q, want %q", s.Env, want)
	}
	s, err = sj.server("package:1", map[string]string{"env:WEATHER_API_KEY": "k-1"})
	if err != nil {
		t.Fatal(err)
	}
	if argv := append([]string{s.Command}, s.Args...); !slices.Equal(argv, []string{"uvx", "tako-weather==1.4.2"}) {
		t.Errorf("pypi argv %q", argv)
	}
	s, err = sj.server("package:2", map[string]string{"env:WEATHER_API_KEY": "k-1", "runtime:0/cache": "/tmp/c"})
	if err != nil {
		t.Fatal(err)
	}
	if argv, want := append([]string{s.Command}, s.Args...), []string{"docker", "run", "-i", "--rm", "--mount", "type=bind,src=/tmp/c,dst=/cache", "-e", "WEATHER_API_KEY", "takomcp/weather:1.4.2"}; !slices.Equal(argv, want) {
		t.Errorf("oci argv %q, want %q", argv, want)
	}
	s, err = sj.server("remote:0", map[string]string{"url:tenant": "acme", "header:Authorization/token": "t-1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.URL != "https://weather.example.com/acme/mcp" || s.Header.Get("Authorization") != "Bearer t-1" || s.Header.Get("X-Region") != "eu" {
		t.Errorf("the remote: %s %v", s.URL, s.Header)
	}
	if p := preview(&s); strings.Contains(must(json.Marshal(p)), "t-1") {
		t.Errorf("the preview %v shows a header's value", p)
	}

	for _, tc := range []struct {
		id      string
		answers map[string]string
		want    string
	}{
		{"package:0", map[string]string{"arg:0": "Lisbon"}, "WEATHER_API_KEY is required"},
		{"package:0", map[string]string{"env:WEATHER_API_KEY": "k"}, "city is required"},
		{"package:0", map[string]string{"arg:0": "x", "env:WEATHER_API_KEY": "k", "arg:1": "kelvin"}, "--units is one of metric, imperial"},
		{"package:2", map[string]string{"env:WEATHER_API_KEY": "k"}, "--mount {cache} is required"},
		{"package:3", nil, `not "mcpb" ones`},
		{"remote:0", map[string]string{"url:tenant": "acme"}, "Authorization {token} is required"},
		{"remote:9", nil, "has no remote:9"},
		{"remote:2", nil, "names {region}, which its variables do not define"},
		{"package:-1", nil, "has no package:-1"},
		{"tool:0", nil, "has no tool:0"},
	} {
		if _, err := sj.server(tc.id, tc.answers); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want %q", tc.id, tc.answers, err, tc.want)
		}
	}
}

func must(b []byte, err error) string {
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestServerJSONRefused: what is not a server.json tako can act on is
// refused with a message that says why; a registry API answer (the
// server.json under "server") is read.
func TestServerJSONRefused(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "not a JSON object"},
		{`[{"name":"a/b"}]`, "not a JSON object"},
		{`{"name":`, "unexpected end"},
		{`{"description":"x","remotes":[{"type":"sse","url":"http://127.0.0.1/sse"}]}`, "it has no name"},
		{`{"name":"a/b","version":"1"}`, "neither packages nor remotes"},
		{`{"name":"a/b","packages":[{"registryType":"npm","identifier":"x","version":1}]}`, "packages.version"},
		{`{"name":"a/b","remotes":{"type":"sse"}}`, "remotes"},
	} {
		_, err := parseServerJSON([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not a server.json tako can read") {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
		}
	}
	sj, err := parseServerJSON([]byte(`{"server":{"name":"a/b","remotes":[{"type":"sse","url":"http://127.0.0.1/sse"}]},"_meta":{}}`))
	if err != nil || sj.Name != "a/b" || len(sj.Remotes) != 1 {
		t.Errorf("a registry answer: %+v, %v", sj, err)
	}
}

// TestServerJSONCommandWaitsForConfirmation: a package picked from a
// server.json comes back to be confirmed, like a typed command; nothing
// is started or added until then.
func TestServerJSONCommandWaitsForConfirmation(t *testing.T) {
	r := start(t, &Config{})
	tok := "Authorization: Bearer " + r.ins.token
	b, _ := os.ReadFile("testdata/server.json")
	code, body := r.req(t, "POST", "/api/registry", registryRequest{Text: string(b), Choice: "package:1", Answers: map[string]string{"env:WEATHER_API_KEY": "k-1"}}, tok)
	var got struct {
		Confirm *confirm `json:"confirm"`
	}
	if code != 200 || json.Unmarshal(body, &got) != nil || got.Confirm == nil {
		t.Fatalf("HTTP %d %s: want a confirmation", code, body)
	}
	if !slices.Equal(got.Confirm.Argv, []string{"uvx", "tako-weather==1.4.2"}) || !slices.Equal(got.Confirm.Env, []string{"WEATHER_API_KEY"}) {
		t.Errorf("the confirmation %+v", got.Confirm)
	}
	if strings.Contains(string(body), "k-1") {
		t.Errorf("the confirmation %s shows a secret", body)
	}
	if n := len(r.ins.serverList()); n != 0 {
		t.Errorf("%d servers before the confirmation", n)
	}
	code, body = r.req(t, "POST", "/api/registry", registryRequest{Text: string(b), Choice: "package:1"}, tok)
	if code != 400 || !strings.Contains(string(body), "WEATHER_API_KEY is required") {
		t.Errorf("a missing variable: HTTP %d %s", code, body)
	}
	code, body = r.req(t, "POST", "/api/registry", registryRequest{Text: `{"name":"a/b"}`}, tok)
	if code != 400 || !strings.Contains(string(body), "neither packages nor remotes") {
		t.Errorf("an empty server.json: HTTP %d %s", code, body)
	}
}

// TestServerJSONRuntimeHint: a package's runtimeHint names the program
// that runs it (bunx for an npm package, pipx for a PyPI one, podman for
// an image), a NuGet package runs with dnx, and a hint that is not a
// plain command name (a path, a shell line) is refused rather than run.
func TestServerJSONRuntimeHint(t *testing.T) {
	sj, err := parseServerJSON([]byte(`{"name":"io.github.tako-mcp/weather","version":"1.4.2","packages":[
		{"registryType":"npm","identifier":"@tako-mcp/weather","version":"1.4.2","runtimeHint":"bunx"},
		{"registryType":"pypi","identifier":"tako-weather","version":"1.4.2","runtimeHint":"pipx"},
		{"registryType":"oci","identifier":"takomcp/weather","version":"1.4.2","runtimeHint":"podman",
		 "environmentVariables":[{"name":"WEATHER_API_KEY","isRequired":true,"isSecret":true}]},
		{"registryType":"nuget","identifier":"Tako.Weather","version":"1.4.2-beta",
		 "packageArguments":[{"type":"positional","value":"mcp"},{"type":"named","name":"--city","valueHint":"city"}]},
		{"registryType":"npm","identifier":"@tako-mcp/weather","version":"1.4.2","runtimeHint":"/tmp/x; rm -rf ~"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id      string
		answers map[string]string
		argv    []string
		env     []string
	}{
		{"package:0", nil, []string{"bunx", "@tako-mcp/weather@1.4.2"}, nil},
		{"package:1", nil, []string{"pipx", "run", "tako-weather==1.4.2"}, nil},
		{"package:2", map[string]string{"env:WEATHER_API_KEY": "k-ü \"1\""}, []string{"podman", "run", "-i", "--rm", "-e", "WEATHER_API_KEY", "takomcp/weather:1.4.2"}, []string{"WEATHER_API_KEY=k-ü \"1\""}},
		{"package:3", map[string]string{"arg:1": "São Paulo"}, []string{"dnx", "Tako.Weather@1.4.2-beta", "--yes", "--", "mcp", "--city", "São Paulo"}, nil},
	} {
		s, err := sj.server(tc.id, tc.answers)
		if err != nil {
			t.Errorf("%s: %v", tc.id, err)
			continue
		}
		if argv := append([]string{s.Command}, s.Args...); !slices.Equal(argv, tc.argv) {
			t.Errorf("%s: argv %q, want %q", tc.id, argv, tc.argv)
		}
		if !slices.Equal(s.Env, tc.env) {
			t.Errorf("%s: env %q, want %q", tc.id, s.Env, tc.env)
		}
	}
	if _, err := sj.server("package:4", nil); err == nil || !strings.Contains(err.Error(), "is not a command name") {
		t.Errorf("a runtimeHint that is a shell line: error %v", err)
	}
	if cs := sj.choices(); cs[4].Error == "" || cs[3].Error != "" {
		t.Errorf("choices: the shell line's error %q (want one), NuGet's %q (want none)", cs[4].Error, cs[3].Error)
	}
}
