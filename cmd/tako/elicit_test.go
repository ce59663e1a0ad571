package main

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/internal/schemacheck"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// script is a readLine that answers prompts from a list, recording them.
type script struct {
	answers []string
	prompts []string
}

func (s *script) readLine(ctx context.Context, prompt string) (string, error) {
	s.prompts = append(s.prompts, prompt)
	if len(s.answers) == 0 {
		return "", errRefused
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

// everythingForm is the kinds of field server-everything's
// trigger-elicitation-request asks for, in its order.
const everythingForm = `{"type":"object","properties":{
	"name":{"title":"String","type":"string","description":"Your full, legal name"},
	"check":{"title":"Boolean","type":"boolean"},
	"integer":{"type":"integer","minimum":1,"maximum":100,"default":42},
	"number":{"type":"number","default":3.14},
	"friend":{"type":"string","enum":["Monica","Rachel","Joey"],"default":"Monica"},
	"instruments":{"type":"array","items":{"type":"string","enum":["Guitar","Piano","Violin"]},"default":["Guitar"]},
	"hero":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Green Lantern"}]},
	"fish":{"type":"array","items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"}]}},
	"pet":{"type":"string","enum":["pet-1","pet-2"],"enumNames":["Cats","Dogs"]}
},"required":["name"]}`

func TestElicitPrompterForm(t *testing.T) {
	var out strings.Builder
	s := &script{answers: []string{
		"",          // name is required: asked again
		" Ada ",     // name
		"maybe",     // check: not a boolean, asked again
		"yes",       // check
		"4.5",       // integer: not whole, asked again
		"7",         // integer
		"",          // number: the default, filled in by the SDK
		"3",         // friend: by number
		"Piano, 3",  // instruments: by value and by number
		"Superman",  // hero: by its title
		"fish-2",    // fish: by value
		"Elephants", // pet: no such choice, asked again
		"dogs",      // pet: by its (legacy) name, any case
	}}
	p := &elicitPrompter{out: &out, readLine: s.readLine}
	res, err := p.elicit(context.Background(), &mcp.ElicitParams{Message: "Please\nprovide inputs", RequestedSchema: json.RawMessage(everythingForm)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "Ada", "check": true, "integer": int64(7), "friend": "Joey",
		"instruments": []string{"Piano", "Violin"}, "hero": "hero-1", "fish": []string{"fish-2"}, "pet": "pet-2"}
	if res.Action != mcp.ElicitAccept || !reflect.DeepEqual(res.Content, want) {
		t.Fatalf("got %s %v\nwant accept %v", res.Action, res.Content, want)
	}
	if len(s.answers) != 0 {
		t.Fatalf("%d answers left unread", len(s.answers))
	}
	shown := out.String()
	for _, w := range []string{"The server asks: Please provide inputs", "name is required", "check wants yes or no", "integer wants a whole number", "pet wants one of the choices"} {
		if !strings.Contains(shown, w) {
			t.Errorf("the terminal does not show %q:\n%s", w, shown)
		}
	}
	prompts := strings.Join(s.prompts, "")
	for _, w := range []string{"name (String): Your full, legal name [required]: ", "[integer, 1 to 100, default 42]", "1. Monica", "2. hero-2 (Green Lantern)", "choose one or more, separated by commas", "2. pet-2 (Dogs)"} {
		if !strings.Contains(prompts, w) {
			t.Errorf("the prompts do not show %q:\n%s", w, prompts)
		}
	}
}

func TestElicitPrompterRefusals(t *testing.T) {
	form := &mcp.ElicitParams{Message: "m", RequestedSchema: json.RawMessage(everythingForm)}
	for _, c := range []struct {
		answers []string
		want    string
	}{
		{[]string{"Ada", "!decline"}, mcp.ElicitDecline},
		{[]string{"!cancel"}, mcp.ElicitCancel},
		{nil, mcp.ElicitCancel}, // Ctrl-C or the end of input
	} {
		s := &script{answers: c.answers}
		p := &elicitPrompter{out: new(strings.Builder), readLine: s.readLine}
		res, err := p.elicit(context.Background(), form)
		if err != nil || res.Action != c.want || res.Content != nil {
			t.Errorf("answers %q: got %+v, %v; want %s", c.answers, res, err, c.want)
		}
	}
}

func TestElicitPrompterURL(t *testing.T) {
	req := &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.test/login", ElicitationID: "e1"}
	var out strings.Builder
	p := &elicitPrompter{out: &out, readLine: (&script{answers: []string{""}}).readLine}
	if res, err := p.elicit(context.Background(), req); err != nil || res.Action != mcp.ElicitAccept {
		t.Fatalf("Enter: got %+v, %v; want accept", res, err)
	}
	if !strings.Contains(out.String(), "https://example.test/login") {
		t.Fatalf("the URL is not shown:\n%s", out.String())
	}
	// The server reports the elicitation complete while the prompt waits:
	// the SDK ends the handler's context with ErrElicitationComplete.
	ctx, cancel := context.WithCancelCause(context.Background())
	p = &elicitPrompter{out: new(strings.Builder), readLine: func(ctx context.Context, _ string) (string, error) {
		cancel(transport.ErrElicitationComplete)
		<-ctx.Done()
		return "", ctx.Err()
	}}
	if res, err := p.elicit(ctx, req); err != nil || res.Action != mcp.ElicitAccept {
		t.Fatalf("completed by the server: got %+v, %v; want accept", res, err)
	}
	// The request ends otherwise (the call was cancelled): no answer.
	ctx, cancel2 := context.WithCancel(context.Background())
	p = &elicitPrompter{out: new(strings.Builder), readLine: func(ctx context.Context, _ string) (string, error) {
		cancel2()
		return "", ctx.Err()
	}}
	if res, err := p.elicit(ctx, req); err == nil {
		t.Fatalf("request ended: got %+v, want an error", res)
	}
}

func TestStdinLinesGivesUpWithItsContext(t *testing.T) {
	r := strings.NewReader("first\n")
	var out strings.Builder
	s := &stdinLines{r: r, out: &out}
	line, err := s.readLine(context.Background(), "a: ")
	if err != nil || line != "first" {
		t.Fatalf("got %q, %v", line, err)
	}
	if _, err := s.readLine(context.Background(), "b: "); err != errRefused {
		t.Fatalf("at the end of input: %v, want errRefused", err)
	}
	if out.String() != "a: b: " {
		t.Fatalf("prompts shown: %q", out.String())
	}
	// A terminal nobody types at: the prompt gives up with its context,
	// and the reading goroutine ends with the input.
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&stdinLines{r: pr, out: new(strings.Builder)}).readLine(ctx, "c: "); err != context.Canceled {
		t.Fatalf("with its context ended: %v", err)
	}
}

// TestElicitPrompterShowsNoEscapes: everything a server writes into a form
// reaches the terminal without its control characters, so a hostile
// server cannot rewrite the screen or set the clipboard (OSC 52).
func TestElicitPrompterShowsNoEscapes(t *testing.T) {
	const esc = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u009b31m"
	schema := `{"type":"object","properties":{"a` + `\u001b[1A":{"type":"string","title":"T` + `\u001b[H","description":"D\u0007\u009b","enum":["x\u001b[0m"],"enumNames":["L\u001b]0;title\u0007"],"default":"x\u001b[0m"}}}`
	var out strings.Builder
	s := &script{answers: []string{"1"}}
	p := &elicitPrompter{out: &out, readLine: s.readLine}
	if _, err := p.elicit(context.Background(), &mcp.ElicitParams{Message: "m" + esc, RequestedSchema: json.RawMessage(schema)}); err != nil {
		t.Fatal(err)
	}
	url := &mcp.ElicitParams{Mode: "url", Message: esc, URL: "https://example.test/" + esc}
	if _, err := p.elicit(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	shown := out.String() + strings.Join(s.prompts, "")
	if strings.ContainsAny(shown, "\x1b\x07\u009b") {
		t.Fatalf("a control character reached the terminal: %q", shown)
	}
}

// TestElicitPrompterChecksEachAnswer: formats, ranges, lengths and
// choices are checked as each answer is typed, and a wrong one is asked
// again with what was wrong, the answers before it kept; the form the
// prompter returns is one the engine accepts.
func TestElicitPrompterChecksEachAnswer(t *testing.T) {
	const form = `{"type":"object","properties":{
		"email":{"type":"string","format":"email"},
		"homepage":{"type":"string","format":"uri"},
		"birthdate":{"type":"string","format":"date"},
		"when":{"type":"string","format":"date-time"},
		"integer":{"type":"integer","minimum":1,"maximum":100,"default":42},
		"ratio":{"type":"number","exclusiveMinimum":0},
		"nick":{"type":"string","minLength":2,"maxLength":8},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":2},
		"code":{"type":"string","pattern":"^[A-Z]{3}$"},
		"share":{"type":"number","exclusiveMaximum":1}
	},"required":["email"]}`
	var out strings.Builder
	s := &script{answers: []string{
		"ada(at)example.com", "ada@example.com",
		"not a uri", "https://ada.example/",
		"10/12/1815", "1815-12-10",
		"tomorrow", "2025-12-31T23:59:00Z",
		"500", "0", "7",
		"0", "0.5",
		"A", "much too long", "ada",
		"a", "a, c",
		"abc", "ABC",
		"1", "0.25",
	}}
	p := &elicitPrompter{out: &out, readLine: s.readLine}
	req := &mcp.ElicitParams{Message: "m", RequestedSchema: json.RawMessage(form)}
	res, err := p.elicit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"email": "ada@example.com", "homepage": "https://ada.example/", "birthdate": "1815-12-10",
		"when": "2025-12-31T23:59:00Z", "integer": int64(7), "ratio": 0.5, "nick": "ada", "tags": []string{"a", "c"}, "code": "ABC", "share": 0.25}
	if res.Action != mcp.ElicitAccept || !reflect.DeepEqual(res.Content, want) || len(s.answers) != 0 {
		t.Fatalf("got %s %v (%d answers unread)\nwant accept %v", res.Action, res.Content, len(s.answers), want)
	}
	shown := out.String()
	for _, w := range []string{
		`email wants an email address such as name@example.com, not "ada(at)example.com"`,
		`homepage wants a URI such as https://example.com/page, not "not a uri"`,
		`birthdate wants a date such as 2025-12-31, not "10/12/1815"`,
		`when wants a date and time such as 2025-12-31T23:59:00Z, not "tomorrow"`,
		"integer wants a number of at most 100, not 500",
		"integer wants a number of at least 1, not 0",
		"ratio wants a number above 0, not 0",
		"nick wants at least 2 characters, not 1",
		"nick wants at most 8 characters, not 13",
		"tags wants at least 2 choices, not 1",
		"code must match the pattern ^[A-Z]{3}$",
		"share wants a number below 1, not 1",
	} {
		if !strings.Contains(shown, w) {
			t.Errorf("the terminal does not show %q:\n%s", w, shown)
		}
	}
	if prompts := strings.Join(s.prompts, ""); !strings.Contains(prompts, "[integer, 1 to 100, default 42]") || !strings.Contains(prompts, "2 to 8 characters") {
		t.Errorf("the prompts do not show the limits:\n%s", prompts)
	}
	// The check of the whole form that the engine makes before it sends
	// the answer passes: nothing is lost at the end.
	whole, err := schemacheck.CompileAsserting(json.RawMessage(form))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Content)
	var doc any
	_ = json.Unmarshal(b, &doc)
	if err := whole.Validate(doc); err != nil {
		t.Errorf("the engine would refuse the form: %v", err)
	}
}
