package inspect

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// routes are the page's API: GET reads, POST (and PUT) acts; every one is
// behind the gate (http.go). Server routes name the server by its id.
func (ins *Inspector) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/state", handle(ins.apiState))
	mux.HandleFunc("POST /api/servers", handle(func(r *http.Request) (any, error) {
		var c connectRequest
		if err := readJSON(r, &c); err != nil {
			return nil, err
		}
		return ins.connectFromPage(&c)
	}))
	mux.HandleFunc("POST /api/registry", handle(ins.apiRegistry))
	mux.HandleFunc("POST /api/confirm", handle(func(r *http.Request) (any, error) {
		var c struct {
			ID     string `json:"id"`
			Cancel bool   `json:"cancel"`
		}
		if err := readJSON(r, &c); err != nil {
			return nil, err
		}
		if c.Cancel {
			ins.cancelConfirm(c.ID)
			return nil, nil
		}
		return ins.confirmCommand(c.ID)
	}))
	mux.HandleFunc("GET /api/history", handle(ins.apiHistory))
	mux.HandleFunc("GET /api/history/{seq}", ins.apiMessage)
	mux.HandleFunc("GET /api/network", handle(func(r *http.Request) (any, error) {
		after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
		return map[string]any{"entries": nonNil(ins.net.list(r.URL.Query().Get("server"), after))}, nil
	}))
	mux.HandleFunc("GET /api/auth", handle(func(r *http.Request) (any, error) {
		return map[string]any{"steps": nonNil(ins.steps.list(r.URL.Query().Get("server")))}, nil
	}))
	mux.HandleFunc("GET /api/export", ins.apiExport)
	mux.HandleFunc("GET /api/runs/{run}", handle(func(r *http.Request) (any, error) {
		rn := ins.runs.get(r.PathValue("run"))
		if rn == nil {
			return nil, &apiError{status: 404, msg: "no such run"}
		}
		return ins.runs.snapshot(rn), nil
	}))
	mux.HandleFunc("GET /api/runs/{run}/download", ins.apiDownload)
	mux.HandleFunc("POST /api/runs/{run}/cancel", handle(func(r *http.Request) (any, error) {
		return nil, ins.cancelRun(r.PathValue("run"))
	}))
	mux.HandleFunc("POST /api/frames", handle(ins.apiFrame))

	srv := func(method, path string, f func(s *server, r *http.Request) (any, error)) {
		mux.HandleFunc(method+" /api/servers/{id}"+path, handle(func(r *http.Request) (any, error) {
			s := ins.server(r.PathValue("id"))
			if s == nil {
				return nil, &apiError{status: 404, msg: "no such server"}
			}
			return f(s, r)
		}))
	}
	srv("GET", "", func(s *server, _ *http.Request) (any, error) { return s.summary(), nil })
	srv("POST", "/close", func(s *server, _ *http.Request) (any, error) {
		ins.remove(s)
		return nil, nil
	})
	srv("POST", "/disconnect", func(s *server, _ *http.Request) (any, error) {
		s.disconnect(stateClosed)
		return nil, nil
	})
	srv("POST", "/reconnect", func(s *server, _ *http.Request) (any, error) {
		s.disconnect(stateClosed)
		s.connect()
		return s.summary(), nil
	})
	srv("POST", "/login", ins.apiLogin)
	srv("POST", "/ping", ins.apiPing)
	srv("GET", "/tools", ins.apiTools)
	srv("POST", "/call", func(s *server, r *http.Request) (any, error) {
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Task      bool            `json:"task"`
		}
		if err := readJSON(r, &c); err != nil {
			return nil, err
		}
		if c.Name == "" {
			return nil, &apiError{status: 400, msg: "which tool?"}
		}
		rn, err := s.callTool(c.Name, c.Arguments, c.Task)
		if err != nil {
			return nil, err
		}
		return ins.runs.snapshot(rn), nil
	})
	srv("GET", "/resources", ins.apiResources)
	srv("POST", "/read", ins.apiRead)
	srv("POST", "/subscribe", ins.apiSubscribe)
	srv("GET", "/prompts", ins.apiPrompts)
	srv("POST", "/prompt", ins.apiGetPrompt)
	srv("POST", "/complete", ins.apiComplete)
	srv("POST", "/loglevel", ins.apiLogLevel)
	srv("POST", "/pause", func(s *server, r *http.Request) (any, error) {
		var p struct {
			On bool `json:"on"`
		}
		if err := readJSON(r, &p); err != nil {
			return nil, err
		}
		s.setPause(p.On)
		return s.summary(), nil
	})
	srv("PUT", "/roots", func(s *server, r *http.Request) (any, error) {
		var roots []mcp.Root
		if err := readJSON(r, &roots); err != nil {
			return nil, err
		}
		ctx, cancel := ins.opCtx(r)
		defer cancel()
		if err := s.setRoots(ctx, roots); err != nil {
			return nil, err
		}
		return s.summary(), nil
	})
	srv("POST", "/requests/{req}", func(s *server, r *http.Request) (any, error) {
		var a answer
		if err := readJSON(r, &a); err != nil {
			return nil, err
		}
		return nil, s.answerRequest(r.PathValue("req"), a)
	})
	srv("GET", "/tasks", ins.apiTasks)
	srv("POST", "/tasks/{task}/{op}", ins.apiTask)
}

// apiState is everything the page needs to draw itself: the servers,
// and where the event stream stands.
func (ins *Inspector) apiState(*http.Request) (any, error) {
	var sums []summary
	for _, s := range ins.serverList() {
		sums = append(sums, s.summary())
	}
	return map[string]any{"servers": nonNil(sums), "event": ins.events.last(), "historySeq": ins.hist.lastSeq(), "version": version, "started": ins.started}, nil
}

// version is the inspector's, shown in the page.
const version = "tako inspect (tako " + transport.Version + ")"

func (ins *Inspector) apiHistory(r *http.Request) (any, error) {
	q := r.URL.Query()
	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 || limit > 5000 {
		limit = 5000
	}
	list, dropped := ins.hist.list(q.Get("server"), after, limit)
	return map[string]any{"entries": nonNil(list), "dropped": dropped}, nil
}

// apiMessage is one history entry's message, as JSON (truncated ones as
// text).
func (ins *Inspector) apiMessage(w http.ResponseWriter, r *http.Request) {
	seq, _ := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	e, body := ins.hist.get(seq)
	if e == nil {
		writeError(w, &apiError{status: 404, msg: "that message is no longer in the history"})
		return
	}
	if e.Truncated || !json.Valid(body) {
		writeJSON(w, http.StatusOK, map[string]any{"entry": e, "partial": string(body)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"entry": e, "message": json.RawMessage(body)})
}

// apiDownload is a run's whole result, as a file.
func (ins *Inspector) apiDownload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("run")
	b := ins.runs.result(id)
	if b == nil {
		writeError(w, &apiError{status: 404, msg: "that result is no longer kept"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="tako-`+id+`.json"`)
	w.Write(b)
}

// apiExport is the session as one JSON file: the servers, every message
// of the history, the network entries and the OAuth steps (secrets
// masked as everywhere).
func (ins *Inspector) apiExport(w http.ResponseWriter, r *http.Request) {
	var sums []summary
	for _, s := range ins.serverList() {
		sums = append(sums, s.summary())
	}
	w.Header().Set("Content-Disposition", `attachment; filename="tako-inspect-`+time.Now().Format("20060102-150405")+`.json"`)
	writeJSON(w, http.StatusOK, map[string]any{
		"exported": time.Now(), "version": version,
		"servers": nonNil(sums), "history": ins.hist.all(), "network": nonNil(ins.net.list("", 0)), "auth": nonNil(ins.steps.list("")),
	})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
