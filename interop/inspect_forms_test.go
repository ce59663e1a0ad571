package interop

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestInspectToolForm: the form the tools page makes from an input schema
// (servers/inspectpeer's form tool), used as a person uses it. Required
// fields are marked, a nested object's too; defaults fill their fields
// (an enum's choice, a number); Run with a required field empty is refused
// in the page; the person fills the nested object, adds items to an array
// of strings and to an array of objects, ticks a choice of an array of an
// enum, picks an enum; "Raw JSON" shows exactly those arguments, an edit
// there comes back to the form, and the server gets them.
func TestInspectToolForm(t *testing.T) {
	ctx := strictTestContext(t, 2*time.Minute)
	in := startInspector(t, ctx, nil, "--stdio", inspectPeer(t))
	p := openPage(t, newBrowser(t), in.URL)
	pn := panel("inspectpeer")
	p.waitConnected("the server to connect", "inspectpeer")
	p.openTab("inspectpeer", "tools")
	p.click(pn + ` [data-tool="form"]`)
	f := pn + ` form.toolform`
	field := func(path string) string { return fmt.Sprintf(`%s [data-path=%q]`, f, path) }
	labelOf := func(path string) string {
		return fmt.Sprintf(`(() => { const e = document.querySelector(%q); const l = e && (e.tagName === 'FIELDSET' ? e.querySelector('legend') : document.querySelector('label[for="' + e.id + '"]')); return l ? l.innerText : ''; })()`, field(path))
	}
	p.waitFor("the form", fmt.Sprintf(`!!document.querySelector(%q)`, field("owner.name")))

	// Required marks, and none where not required.
	for path, want := range map[string]bool{"title": true, "owner": true, "owner.name": true, "priority": false, "owner.email": false, "count": false} {
		if got := strings.Contains(eval[string](p, labelOf(path)), "*"); got != want {
			t.Errorf("%s's label %q: required mark %v, want %v", path, eval[string](p, labelOf(path)), got, want)
		}
	}
	// Defaults.
	if got := eval[string](p, fmt.Sprintf(`(() => { const s = document.querySelector(%q); return s.options[s.selectedIndex].text; })()`, field("priority"))); got != "normal" {
		t.Errorf("the enum shows %q, want its default normal", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%q).value`, field("count"))); got != "3" {
		t.Errorf("the number shows %q, want its default 3", got)
	}
	// A required field left empty: the page refuses to run.
	p.typeIn(field("owner.name"), "Ada")
	p.click(f + ` button.run`)
	p.waitFor("the refusal", `document.getElementById('status').innerText.includes('required')`)
	if eval[bool](p, fmt.Sprintf(`!!document.querySelector(%q)`, pn+` .result`)) {
		t.Fatal("the tool ran with a required field empty")
	}

	p.typeIn(field("title"), "Report")
	p.typeIn(field("owner.email"), "ada@example.com")
	eval[bool](p, fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = [...s.options].find((o) => o.text === 'high').value; s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, field("priority")))
	p.click(field("tags") + ` > button`)
	p.typeIn(field("tags.0"), "a")
	p.click(field("tags") + ` > button`)
	p.typeIn(field("tags.1"), "b")
	p.click(field("days") + ` span.opt:nth-of-type(2) label`)
	p.click(field("points") + ` > button`)
	p.typeIn(field("points.0.x"), "1")
	p.typeIn(field("points.0.y"), "2")
	p.screenshot("form")

	want := map[string]any{"title": "Report", "priority": "high", "count": 3.0, "owner": map[string]any{"name": "Ada", "email": "ada@example.com"},
		"tags": []any{"a", "b"}, "days": []any{"tue"}, "points": []any{map[string]any{"x": 1.0, "y": 2.0}}}
	raw := f + ` textarea[aria-label="Arguments as JSON"]`
	p.click(f + ` label[for^="rt-"]`)
	p.waitFor("the raw JSON", fmt.Sprintf(`(document.querySelector(%q) || {}).offsetParent !== null`, raw))
	var got map[string]any
	if err := json.Unmarshal([]byte(eval[string](p, fmt.Sprintf(`document.querySelector(%q).value`, raw))), &got); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("the raw JSON: %v (%v), want %v", got, err, want)
	}
	// An edit of the raw JSON comes back to the form.
	want["count"] = 7.0
	b, _ := json.Marshal(want)
	p.typeIn(raw, string(b))
	p.click(f + ` label[for^="rt-"]`)
	p.waitFor("the form again", fmt.Sprintf(`document.querySelector(%q).value === '7'`, field("count")))

	p.click(f + ` button.run`)
	p.waitFor("the result", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('got {')`, pn+` .result[data-state="done"]`))
	text := p.text(pn + ` .result[data-state="done"] pre`)
	_, args, _ := strings.Cut(text, "got ")
	got = nil
	if err := json.Unmarshal([]byte(strings.TrimSpace(args)), &got); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("the server got %s (%v), want %v", args, err, want)
	}
}
