package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestInspectImportServerJSON: a person on the connect page loads a
// registry server.json (the registry schema's field names) whose package
// is server-everything's npm one and whose remote is server-everything in
// its streamableHttp mode on a free port. Both are listed; the package
// asks for its secret variable in a password field and shows the exact
// npx command, which runs only once confirmed (cancelled here: nothing
// starts); the remote shows its URL, connects, and its tools are listed.
func TestInspectImportServerJSON(t *testing.T) {
	ctx := strictTestContext(t, 2*time.Minute)
	remote := everythingHTTP(t, "streamableHttp")
	var pkg struct{ Version string }
	if b, err := os.ReadFile("../node_modules/@modelcontextprotocol/server-everything/package.json"); err != nil || json.Unmarshal(b, &pkg) != nil {
		requireInstalled(t, "server-everything's package.json: run `npm ci` in the repository root")
	}
	sj := map[string]any{
		"$schema":     "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
		"name":        "io.github.modelcontextprotocol/server-everything",
		"description": "Exercises every feature of MCP",
		"version":     pkg.Version,
		"packages": []any{map[string]any{
			"registryType": "npm", "identifier": "@modelcontextprotocol/server-everything", "version": pkg.Version,
			"transport":            map[string]any{"type": "stdio"},
			"packageArguments":     []any{map[string]any{"type": "positional", "value": "stdio"}},
			"environmentVariables": []any{map[string]any{"name": "EVERYTHING_TOKEN", "description": "A token", "isRequired": true, "isSecret": true}},
		}},
		"remotes": []any{map[string]any{
			"type": "streamable-http", "url": remote,
			"headers": []any{map[string]any{"name": "X-Client", "default": "tako-import-test"}},
		}},
	}
	file := filepath.Join(t.TempDir(), "server.json")
	b, _ := json.MarshalIndent(sj, "", "  ")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}

	in := startInspector(t, ctx, nil)
	p := openPage(t, newBrowser(t), in.URL)
	imp := `#empty details.import`
	p.waitFor("the connect page", fmt.Sprintf(`!!document.querySelector(%q)`, imp))
	p.click(imp + ` summary`)
	p.do("load the server.json", chromedp.SetUploadFiles(chromedp.CSS(imp+` input[type=file]`), []string{file}))
	p.waitFor("its choices", fmt.Sprintf(`document.querySelectorAll(%q).length === 2`, imp+` input[type=radio]`))
	if got := p.text(imp + ` .sjchoices`); !strings.Contains(got, "npm package @modelcontextprotocol/server-everything "+pkg.Version) || !strings.Contains(got, "streamable-http remote "+remote) {
		t.Errorf("the choices read %q", got)
	}

	// The package: its secret is asked for in a password field, the
	// command shown is exactly what would run, and it waits for the
	// confirmation.
	p.click(imp + ` input[value="package:0"]`)
	secret := imp + ` input[data-key="env:EVERYTHING_TOKEN"]`
	p.waitFor("the package's inputs", fmt.Sprintf(`(document.querySelector(%q) || {}).type === 'password'`, secret))
	p.waitFor("the refusal while the secret is missing", fmt.Sprintf(`document.querySelector(%q).innerText.includes('EVERYTHING_TOKEN is required')`, imp+` .sjpreview`))
	// Every control of the import has a name a screen reader says.
	if bad := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter((e) => e.offsetParent !== null)
		.filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !(e.tagName === 'BUTTON' && e.textContent.trim()))
		.map((e) => e.outerHTML.slice(0, 120))`, imp+` input, `+imp+` select, `+imp+` textarea, `+imp+` button`)); len(bad) > 0 {
		t.Errorf("the import's controls without a label:\n\t%s", strings.Join(bad, "\n\t"))
	}
	p.typeIn(secret, "s3cret-value")
	want := "npx -y @modelcontextprotocol/server-everything@" + pkg.Version + " stdio"
	p.waitFor("the command", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText === %q`, imp+` .sjpreview pre`, want))
	if strings.Contains(p.text(imp+` .sjpreview`), "s3cret-value") {
		t.Error("the preview shows the secret's value")
	}
	p.click(imp + ` form.sjform button[type=submit]`)
	p.waitFor("the confirmation", `document.getElementById('confirm').open`)
	if got := p.text(`#confirm ol.argv`); !strings.Contains(got, "@modelcontextprotocol/server-everything@"+pkg.Version) || !strings.Contains(p.text(`#confirm`), "EVERYTHING_TOKEN") {
		t.Errorf("the confirmation shows %q", p.text(`#confirm`))
	}
	p.click(`#confirm-cancel`)
	p.waitFor("nothing run", `document.getElementById('status').innerText.includes('Nothing was run')`)
	var st struct{ Servers []json.RawMessage }
	in.api(t, ctx, "GET", "/api/state", nil, &st)
	if len(st.Servers) != 0 {
		t.Fatalf("%d servers after the cancelled confirmation", len(st.Servers))
	}

	// The remote: its URL, then its tools.
	p.click(imp + ` input[value="remote:0"]`)
	p.waitFor("the URL", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText === %q`, imp+` .sjpreview pre`, remote))
	if got := p.text(imp + ` .sjpreview`); !strings.Contains(got, "X-Client") {
		t.Errorf("the preview %q does not name the header", got)
	}
	p.click(imp + ` form.sjform button[type=submit]`)
	name := "io.github.modelcontextprotocol/server-everything"
	pn := panel(name)
	p.waitConnected("the remote to connect", name)
	p.openTab(name, "tools")
	p.waitFor("its tools", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` [data-tool="echo"]`))
	p.screenshot("import")
	// The remote's header went with every request: the network view names
	// it and masks its value, as it would an API key.
	p.openTab(name, "network")
	p.waitFor("the network entries", fmt.Sprintf(`[...document.querySelectorAll(%q)].some((r) => r.innerText.includes('tools/list'))`, pn+` table.net tbody tr`))
	row := eval[string](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].find((r) => r.innerText.includes('tools/list')).dataset.n`, pn+` table.net tbody tr`))
	p.click(pn + fmt.Sprintf(` table.net tr[data-n=%q] button`, row))
	p.waitFor("the request's headers", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('X-Client')`, pn+` table.net tr.hbody`))
	if got := p.text(pn + ` table.net tr.hbody`); strings.Contains(got, "tako-import-test") {
		t.Errorf("the network view shows the header's value: %q", got)
	}
	if errs := p.errors(); len(errs) > 0 {
		t.Errorf("page errors: %v", errs)
	}
}
