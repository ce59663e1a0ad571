package inspect

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// TestSecretsMasked: no token, code, verifier or secret of a login
// reaches a step, a header or the page; JWT claims are decoded; the kinds
// of a login's requests are told apart.
func TestSecretsMasked(t *testing.T) {
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"alice","scope":"mcp:read","aud":"http://127.0.0.1/mcp"}`))
	jwt := "eyJhbGciOiJub25lIn0." + claims + ".c2ln"
	answer := `{"access_token":"` + jwt + `","refresh_token":"r-secret-1","id_token":"` + jwt + `","token_type":"Bearer","expires_in":20}`
	got, cl := maskAnswer("application/json", []byte(answer))
	out, _ := json.Marshal(got)
	for _, secret := range []string{jwt, "r-secret-1", claims} {
		if strings.Contains(string(out), secret) {
			t.Errorf("the masked answer %s holds a secret", out)
		}
	}
	if !strings.Contains(string(out), `"token_type":"Bearer"`) || !strings.Contains(string(out), "characters") {
		t.Errorf("the masked answer %s", out)
	}
	if c, _ := cl["access_token"].(map[string]any); c["sub"] != "alice" {
		t.Errorf("claims %v", cl)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {"the-code"}, "code_verifier": {"the-verifier"}, "client_id": {"c1"}, "client_secret": {"s3cr3t"}, "redirect_uri": {"http://127.0.0.1:1/callback"}}
	sent, _ := json.Marshal(maskBody("application/x-www-form-urlencoded", []byte(form.Encode())))
	for _, secret := range []string{"the-code", "the-verifier", "s3cr3t"} {
		if strings.Contains(string(sent), secret) {
			t.Errorf("the masked form %s holds %q", sent, secret)
		}
	}
	if !strings.Contains(string(sent), `"client_id":"c1"`) {
		t.Errorf("the masked form %s lost what is not secret", sent)
	}
	reg, _ := json.Marshal(maskBody("application/json", []byte(`{"client_id":"c1","client_secret":"s3cr3t","redirect_uris":["x"]}`)))
	if strings.Contains(string(reg), "s3cr3t") {
		t.Errorf("registration %s", reg)
	}
	for h, v := range map[string]string{"Authorization": "Bearer tok-123", "DPoP": "proof.jwt.x", "Cookie": "sid=1"} {
		if m := maskHeader(h, v); strings.Contains(m, "tok-123") || strings.Contains(m, "proof") || strings.Contains(m, "sid=1") {
			t.Errorf("%s: %q", h, m)
		}
	}
	if m := maskHeader("Authorization", "Bearer tok-123"); !strings.HasPrefix(m, "Bearer ") {
		t.Errorf("the scheme is kept: %q", m)
	}
	for _, tc := range []struct {
		method, path, body, want string
	}{
		{"GET", "/.well-known/oauth-protected-resource/mcp", "", "resource-metadata"},
		{"GET", "/.well-known/oauth-authorization-server", "", "server-metadata"},
		{"GET", "/.well-known/openid-configuration", "", "server-metadata"},
		{"POST", "/reg", `{"redirect_uris":["x"]}`, "registration"},
		{"POST", "/token", "grant_type=authorization_code&code=x", "token"},
		{"POST", "/token", "grant_type=refresh_token&refresh_token=x", "refresh"},
		{"POST", "/revoke", "token=x&token_type_hint=refresh_token", "revocation"},
	} {
		req := httptest.NewRequest(tc.method, "http://as.test"+tc.path, nil)
		if got := stepKind(req, []byte(tc.body)); got != tc.want {
			t.Errorf("%s %s %s: %s, want %s", tc.method, tc.path, tc.body, got, tc.want)
		}
	}
	if jwtClaims("opaque-token") != nil {
		t.Error("an opaque token decoded as a JWT")
	}
	if s := stripQuery("https://u:p@as.test/authorize?code=1#x"); s != "https://as.test/authorize" {
		t.Errorf("stripQuery: %q", s)
	}
}

// TestAuthRecorderPassesTheBodyOn: the recording client hands auth the
// whole answer (it reads it to record it), and records the step.
func TestAuthRecorderPassesTheBodyOn(t *testing.T) {
	big := strings.Repeat("a", maxAuthBody+10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/big" {
			io.WriteString(w, big)
			return
		}
		io.WriteString(w, `{"access_token":"AT","token_type":"Bearer"}`)
	}))
	defer ts.Close()
	ins, _ := newInspector(&Config{})
	c := &http.Client{Transport: &authRecorder{next: http.DefaultTransport, ins: ins, server: "s1"}}
	for _, path := range []string{"/token", "/big"} {
		resp, err := c.PostForm(ts.URL+path, url.Values{"grant_type": {"client_credentials"}, "client_secret": {"S"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if path == "/big" && len(b) != len(big) || path == "/token" && !strings.Contains(string(b), `"AT"`) {
			t.Errorf("%s: auth got %d bytes", path, len(b))
		}
	}
	steps := ins.steps.list("s1")
	if len(steps) != 2 || steps[0].Kind != "token" || steps[0].Status != 200 {
		t.Fatalf("steps %+v", steps)
	}
	if b, _ := json.Marshal(steps); strings.Contains(string(b), `"AT"`) || strings.Contains(string(b), `"S"`) {
		t.Errorf("a step holds a secret: %s", b)
	}
	c.CloseIdleConnections()
}

// TestHistoryGroupsAndBounds: a call's response, progress, cancellation,
// the server's request while it waits and its answer, and a retry after
// input_required join the call's conversation; the history keeps its
// bounds, oldest first out.
func TestHistoryGroupsAndBounds(t *testing.T) {
	h := newHistory(1<<20, 100)
	msg := func(s string) *mcp.Message {
		m, err := mcp.DecodeMessage([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	call := h.addMessage("s", dirOut, msg(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"p1"}}}`))
	joined := []*entry{
		h.addMessage("s", dirIn, msg(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`)),
		h.addMessage("s", dirIn, msg(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"?"}}`)),
		h.addMessage("s", dirOut, msg(`{"jsonrpc":"2.0","id":"e1","result":{"action":"accept"}}`)),
		h.addMessage("s", dirIn, msg(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"st-1","inputRequests":{}}}`)),
		h.addMessage("s", dirOut, msg(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","requestState":"st-1"}}`)),
		h.addMessage("s", dirOut, msg(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)),
	}
	for i, e := range joined {
		if e.Group != call.Seq || e.Label != "tools/call x" {
			t.Errorf("message %d (%s %s): group %d %q, want the call's (%d)", i, e.Kind, e.Method, e.Group, e.Label, call.Seq)
		}
	}
	if joined[3].Ms <= 0 && joined[3].Method != "tools/call" {
		t.Errorf("the response: %+v", joined[3])
	}
	other := h.addMessage("s", dirOut, msg(`{"jsonrpc":"2.0","id":3,"method":"ping"}`))
	if other.Group != other.Seq {
		t.Errorf("a new request joined group %d", other.Group)
	}
	if n := h.addMessage("t", dirIn, msg(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1"}}`)); n.Group != n.Seq {
		t.Error("another server's progress joined this server's call")
	}

	small := newHistory(10_000, 1000)
	big := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 3000) + `"}}`
	for range 10 {
		small.addMessage("s", dirIn, msg(big))
	}
	list, dropped := small.list("", 0, 100)
	if len(list) > 4 || dropped < 6 || list[len(list)-1].Seq != 10 {
		t.Errorf("kept %d, dropped %d; want at most 4 kept, the newest last", len(list), dropped)
	}
	huge := newHistory(64<<20, 10)
	e := huge.addMessage("s", dirIn, msg(`{"jsonrpc":"2.0","id":1,"result":{"text":"`+strings.Repeat("y", maxBodyKept+5)+`"}}`))
	if _, body := huge.get(e.Seq); !e.Truncated || len(body) != maxBodyKept {
		t.Errorf("a message past maxBodyKept: truncated %v, %d bytes kept", e.Truncated, len(body))
	}
}

// TestHubCatchUpAndCutOff: a page that reconnects gets what it missed; one
// that missed more than the ring is told to reload; one that does not read
// is cut off, and publish never waits for it.
func TestHubCatchUpAndCutOff(t *testing.T) {
	h := newHub(4)
	for i := range 3 {
		h.publish("x", i)
	}
	_, missed, ok := h.follow(1)
	if !ok || len(missed) != 2 || missed[0].ID != 2 {
		t.Errorf("after 1: %v %v", missed, ok)
	}
	for i := range 10 {
		h.publish("x", i)
	}
	if _, _, ok := h.follow(2); ok {
		t.Error("a page 11 events behind a ring of 4 was not told to reload")
	}
	slow, _, _ := h.follow(h.last())
	for i := range maxQueued + 1 {
		h.publish("y", i)
	}
	select {
	case <-slow.cut:
	default:
		t.Error("a page that does not read was not cut off")
	}
	h.close()
}

// TestViews: a long text, long data and a long array are cut in the view,
// each cut said; a short result is passed on as it is.
func TestViews(t *testing.T) {
	long := strings.Repeat("é", maxTextShown) // two bytes each
	res := &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: long}, {Type: "image", MIMEType: "image/png", Data: mcp.BinaryFromBase64(strings.Repeat("A", maxDataShown+4))}, {Type: "text", Text: "short"}}}
	v, cut := toolView(res)
	var back struct {
		Content []map[string]any
	}
	json.Unmarshal(v, &back)
	if !cut || len(back.Content) != 3 || back.Content[0]["textCut"] != float64(len(long)) || back.Content[1]["dataOmitted"] != float64(maxDataShown+4) || back.Content[2]["text"] != "short" {
		t.Fatalf("view %.300s", v)
	}
	if s := back.Content[0]["text"].(string); len(s) > maxTextShown || !strings.HasPrefix(long, s) {
		t.Errorf("the cut text is %d bytes, or not the start", len(s))
	}
	arr, _ := json.Marshal(map[string]any{"items": make([]int, maxItemsShown+10), "pad": strings.Repeat("z", maxTextShown)})
	va, cut := viewOf(arr)
	if !cut || !strings.Contains(string(va), "10 more items") {
		t.Errorf("array view: %v %.200s", cut, va)
	}
	small := []byte(`{"content":[{"type":"text","text":"hi"}]}`)
	if vs, cut := viewOf(small); cut || string(vs) != string(small) {
		t.Errorf("a small result's view: %s %v", vs, cut)
	}
}

// TestViewsCutResources: an embedded resource's long text is cut and its
// large blob omitted, each said with the size it had (a blob of bytes, as
// gRPC hands it, counted as the base64 the page would show), and the
// caller's result is left as it was.
func TestViewsCutResources(t *testing.T) {
	line := "naïve \"quoted\" line\tand more\n"
	long := strings.Repeat(line, maxTextShown/len(line)+1)
	blob := mcp.BinaryFromBytes(make([]byte, maxDataShown)) // base64: 4/3 of it
	small := "small\nresource"
	res := &mcp.CallToolResult{Content: []mcp.Content{
		{Type: mcp.ContentResource, Resource: &mcp.ResourceContents{URI: "file:///log.txt", Text: &long}},
		{Type: mcp.ContentResource, Resource: &mcp.ResourceContents{URI: "file:///image.bin", Blob: &blob}},
		{Type: mcp.ContentResource, Resource: &mcp.ResourceContents{URI: "file:///note.txt", Text: &small}},
	}}
	v, cut := toolView(res)
	var back struct {
		Content []struct {
			Resource            map[string]any
			ResourceTextCut     *int
			ResourceBlobOmitted *int
		}
	}
	if err := json.Unmarshal(v, &back); err != nil || !cut || len(back.Content) != 3 {
		t.Fatalf("view (%v, cut %v): %.300s", err, cut, v)
	}
	if c := back.Content[0]; c.ResourceTextCut == nil || *c.ResourceTextCut != len(long) || len(c.Resource["text"].(string)) > maxTextShown || !strings.HasPrefix(long, c.Resource["text"].(string)) {
		t.Errorf("long resource text: %.300s", v)
	}
	if c := back.Content[1]; c.ResourceBlobOmitted == nil || *c.ResourceBlobOmitted != base64.StdEncoding.EncodedLen(maxDataShown) || c.Resource["blob"] != "" {
		t.Errorf("large resource blob: %.300s", v)
	}
	if c := back.Content[2]; c.ResourceTextCut != nil || c.ResourceBlobOmitted != nil || c.Resource["text"] != small {
		t.Errorf("small resource: %.300s", v)
	}
	if *res.Content[0].Resource.Text != long || res.Content[1].Resource.Blob.IsZero() {
		t.Error("the view changed the caller's result")
	}
}

// TestFlagsOf: "copy as a tako command" has the flags that reach the same
// server, secrets left out, words quoted for a shell.
func TestFlagsOf(t *testing.T) {
	f := flagsOf(&dial.Server{Command: "node", Args: []string{"my server.js", "it's"}, Env: []string{"API_KEY=k1", "MODE=dev"}})
	got := strings.Join(f, " | ")
	if want := `--stdio | node 'my server.js' 'it'\''s' | --env | API_KEY=… | --env | MODE=dev`; got != want {
		t.Errorf("stdio flags %q, want %q", got, want)
	}
	f = flagsOf(&dial.Server{URL: "https://x.test/mcp?key=1", Header: http.Header{"Authorization": {"Bearer t"}, "X-Team": {"blue"}}})
	got = strings.Join(f, " ")
	if !strings.HasPrefix(got, "--http https://x.test/mcp ") || strings.Contains(got, "Bearer t") || strings.Contains(got, "key=1") || !strings.Contains(got, "X-Team: blue") {
		t.Errorf("http flags %q", got)
	}
	f = flagsOf(&dial.Server{Kind: dial.GRPC, URL: "127.0.0.1:1", TLS: &dial.TLS{CAFile: "ca.pem"}})
	if got := strings.Join(f, " "); got != "--grpc 127.0.0.1:1 --ca ca.pem" {
		t.Errorf("grpc flags %q", got)
	}
}

// informedConn is a Conn with every optional interface the engine looks
// for, recording what it is told.
type informedConn struct {
	transport.Conn
	told []string
}

func (c *informedConn) SetProtocol(v string) { c.told = append(c.told, "protocol "+v) }
func (c *informedConn) NewSession()          { c.told = append(c.told, "new session") }
func (c *informedConn) ToolsListed(tools []mcp.Tool) map[string]error {
	c.told = append(c.told, fmt.Sprintf("%d tools", len(tools)))
	return map[string]error{"bad": io.EOF}
}
func (c *informedConn) WriteRequest(ctx context.Context, m *mcp.Message, info *transport.RequestInfo) error {
	c.told = append(c.told, "request "+m.Method)
	return nil
}
func (c *informedConn) Skipped() error { return io.ErrUnexpectedEOF }
func (c *informedConn) SwitchWire(ctx context.Context) error {
	c.told = append(c.told, "switch wire")
	return nil
}
func (c *informedConn) Abort() { c.told = append(c.told, "abort") }

// TestRecConnPassesThrough: the recording Conn records both ways and
// hands the engine every optional interface of the Conn it wraps.
func TestRecConnPassesThrough(t *testing.T) {
	client, server := transport.Pipe()
	defer server.Close()
	in := &informedConn{Conn: client}
	var recorded []string
	c := wrapConn(in, func(dir string, m *mcp.Message) { recorded = append(recorded, dir+" "+m.Method) })
	inf := c.(transport.Informed)
	inf.SetProtocol("2026-07-28")
	inf.NewSession()
	if err := inf.SwitchWire(context.Background()); err != nil {
		t.Errorf("SwitchWire: %v", err)
	}
	if rej := inf.ToolsListed([]mcp.Tool{{Name: "bad"}}); rej["bad"] == nil {
		t.Error("ToolsListed's answer was lost")
	}
	m, _ := mcp.NewRequest(mcp.Int64ID(1), "tools/list", nil)
	inf.WriteRequest(context.Background(), m, &transport.RequestInfo{})
	c.(interface{ Abort() }).Abort()
	if c.(transport.SkipReporter).Skipped() != io.ErrUnexpectedEOF {
		t.Error("Skipped was lost")
	}
	if got := strings.Join(in.told, ", "); got != "protocol 2026-07-28, new session, switch wire, 1 tools, request tools/list, abort" {
		t.Errorf("the wrapped Conn was told %q", got)
	}
	if got := strings.Join(recorded, ", "); got != "out tools/list" {
		t.Errorf("recorded %q", got)
	}
	c.Close()
}

// TestNetRecorderSeesSSE: the network view records a request's method,
// Mcp-* headers, the JSON-RPC method, the status and each SSE event, with
// the Authorization masked and the body passed on whole.
func TestNetRecorderSeesSSE(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "sess-1")
		io.WriteString(w, "id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1}\n\n: comment\n\nretry: 100\ndata: x\r\n\r\n")
	}))
	defer ts.Close()
	ins, _ := newInspector(&Config{})
	rt := &netRecorder{next: http.DefaultTransport, ins: ins, server: "s1"}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`
	req, _ := http.NewRequest("POST", ts.URL+"/mcp?key=secret", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-xyz")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Param-Region", "eu-west")
	req.Header.Set("X-Team-Key", "k-9f8e7d")
	req.Header.Set("User-Agent", "tako")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "data: x") {
		t.Errorf("the body was not passed on: %q", b)
	}
	list := ins.net.list("s1", 0)
	if len(list) != 1 {
		t.Fatalf("%d entries", len(list))
	}
	e := list[0]
	if e.RPC != "tools/call" || e.Status != 200 || e.Session != "sess-1" || !e.Done || e.Req["Mcp-Protocol-Version"] != "2025-11-25" || strings.Contains(e.Req["Authorization"], "tok-xyz") || strings.Contains(e.URL, "secret") {
		t.Errorf("entry %+v", e)
	}
	// Every Mcp-* header, as sent; a header the user configured named,
	// its value masked; Go's own left out.
	if e.Req["Mcp-Param-Region"] != "eu-west" || !strings.HasPrefix(e.Req["X-Team-Key"], "••••") || strings.Contains(e.Req["X-Team-Key"], "9f8e7d") || e.Req["User-Agent"] != "" {
		t.Errorf("request headers %q", e.Req)
	}
	if len(e.Events) != 2 || e.Events[0].ID != "7" || e.Events[0].Data != "{\"jsonrpc\":\"2.0\",\n\"id\":1}" || e.Events[1].Retry != "100" || e.Events[1].Data != "x" {
		t.Errorf("events %+v", e.Events)
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}
