package inspect

import (
	"crypto/rand"
	"net/http"
	"strings"
	"time"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/internal/localguard"
)

// Servers given in the page. A URL is reached at once: reaching it runs
// nothing on this machine. A command runs only once the person has
// confirmed that very command: the first request returns what would run
// and a single-use confirmation id; the second, which sends the id back,
// starts it. The id is bound to the server as checked, expires after
// confirmTTL, and is good once.

// connectRequest is the page's connect form.
type connectRequest struct {
	Kind    string     `json:"kind"` // stdio, http, sse, ws, grpc
	Command string     `json:"command"`
	URL     string     `json:"url"`
	Name    string     `json:"name"`
	Headers [][]string `json:"headers"` // [name, value] pairs
	Env     []string   `json:"env"`     // KEY=VALUE
	TLS     *struct {
		CA         string `json:"ca"`
		Cert       string `json:"cert"`
		Key        string `json:"key"`
		ServerName string `json:"serverName"`
		Plaintext  bool   `json:"plaintext"`
	} `json:"tls"`
}

// confirm is a command waiting for the person's confirmation.
type confirm struct {
	ID      string    `json:"id"`
	Argv    []string  `json:"argv"`
	Env     []string  `json:"env"` // names only: values may be secrets
	Expires time.Time `json:"expires"`
	target  Target
}

// serverOf builds and checks the dial.Server of a connect form.
func (ins *Inspector) serverOf(c *connectRequest) (dial.Server, error) {
	var s dial.Server
	s.Name = strings.TrimSpace(c.Name)
	switch c.Kind {
	case "stdio":
		split := ins.cfg.Split
		if split == nil {
			split = func(s string) ([]string, error) { return strings.Fields(s), nil }
		}
		argv, err := split(c.Command)
		if err != nil {
			return s, &apiError{status: 400, msg: "the command: " + err.Error()}
		}
		if len(argv) == 0 || argv[0] == "" {
			return s, &apiError{status: 400, msg: "a stdio server needs a command"}
		}
		s.Kind, s.Command, s.Args = dial.Stdio, argv[0], argv[1:]
		for _, e := range c.Env {
			if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
				return s, &apiError{status: 400, msg: "an environment variable is KEY=VALUE"}
			}
			s.Env = append(s.Env, e)
		}
	case "http", "sse", "ws", "grpc":
		s.Kind, s.URL = dial.Kind(c.Kind), strings.TrimSpace(c.URL)
	default:
		return s, &apiError{status: 400, msg: "the kind is stdio, http, sse, ws or grpc"}
	}
	for _, h := range c.Headers {
		if len(h) != 2 || strings.TrimSpace(h[0]) == "" {
			continue
		}
		if s.Header == nil {
			s.Header = http.Header{}
		}
		s.Header.Add(strings.TrimSpace(h[0]), strings.TrimSpace(h[1]))
	}
	if t := c.TLS; t != nil && (t.CA != "" || t.Cert != "" || t.Key != "" || t.ServerName != "" || t.Plaintext) {
		s.TLS = &dial.TLS{CAFile: t.CA, CertFile: t.Cert, KeyFile: t.Key, ServerName: t.ServerName, Plaintext: t.Plaintext}
	}
	if err := s.Check(); err != nil {
		return s, &apiError{status: 400, msg: describe(err)}
	}
	return s, nil
}

// connectFromPage is POST /api/servers: a URL is connected at once; a
// command comes back to be confirmed.
func (ins *Inspector) connectFromPage(c *connectRequest) (any, error) {
	s, err := ins.serverOf(c)
	if err != nil {
		return nil, err
	}
	return ins.connectServer(s)
}

// connectServer connects to a checked server given in the page (typed or
// imported from a server.json): a URL at once, a command once confirmed.
func (ins *Inspector) connectServer(s dial.Server) (any, error) {
	t := Target{Server: s}
	if s.Kind != dial.Stdio {
		srv := ins.addServer(t)
		if srv == nil {
			return nil, &apiError{status: 503, msg: "the inspector is closing"}
		}
		return srv.summary(), nil
	}
	cf := &confirm{ID: localguard.NewToken(), Argv: append([]string{s.Command}, s.Args...), Expires: time.Now().Add(confirmTTL), target: t}
	for _, e := range s.Env {
		k, _, _ := strings.Cut(e, "=")
		cf.Env = append(cf.Env, k)
	}
	ins.mu.Lock()
	for id, old := range ins.confirms {
		if time.Now().After(old.Expires) {
			delete(ins.confirms, id)
		}
	}
	if len(ins.confirms) >= 16 {
		ins.mu.Unlock()
		return nil, &apiError{status: 429, msg: "too many commands wait for a confirmation"}
	}
	ins.confirms[cf.ID] = cf
	ins.mu.Unlock()
	return map[string]any{"confirm": cf}, nil
}

// confirmCommand is POST /api/confirm: the person confirmed the command
// with that id, which then runs.
func (ins *Inspector) confirmCommand(id string) (any, error) {
	ins.mu.Lock()
	cf := ins.confirms[id]
	delete(ins.confirms, id)
	ins.mu.Unlock()
	if cf == nil || time.Now().After(cf.Expires) {
		return nil, &apiError{status: 404, msg: "no command waits for that confirmation (it ran, expired, or was never asked for)"}
	}
	srv := ins.addServer(cf.target)
	if srv == nil {
		return nil, &apiError{status: 503, msg: "the inspector is closing"}
	}
	return srv.summary(), nil
}

// cancelConfirm forgets a command the person did not confirm.
func (ins *Inspector) cancelConfirm(id string) {
	ins.mu.Lock()
	delete(ins.confirms, id)
	ins.mu.Unlock()
}

// newID is a random identifier for things the page names (frames).
func newID() string { return rand.Text() }
