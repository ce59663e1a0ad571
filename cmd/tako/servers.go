package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/dial"
)

// serversTimeout bounds each server's check in `tako servers` unless
// --timeout says otherwise: a server that has not answered by then is
// reported as not answering, and the others are not kept waiting.
const serversTimeout = 10 * time.Second

// serversParallel bounds the servers checked at once: each may be a
// process tree (npx, uvx) that takes a core to start.
const serversParallel = 4

// runServers is `tako servers --config FILE`: every server of the file,
// its transport and target, and whether it answers (a handshake, which
// gives its name and revision). It exits with status 3 when one does not.
func runServers(ctx context.Context, inv *invocation, stdout io.Writer) error {
	o := &inv.opts
	switch {
	case len(inv.args) > 0:
		return usagef("servers takes no arguments, got %q (see tako help servers)", inv.args[0])
	case o.config == "":
		return usagef("servers needs --config FILE: a Claude Desktop, Cursor or VS Code MCP configuration")
	case o.server.kind != "" || o.name != "":
		return usagef("servers lists every server of --config FILE; give no other server")
	}
	list, err := loadConfig(o.config)
	if err != nil {
		return err
	}
	timeout := serversTimeout
	if o.timeout != defaultTimeout {
		timeout = o.timeout
	}
	rows := make([][]string, len(list))
	failed := 0
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, serversParallel)
	)
	for i := range list {
		so := options{env: o.env, timeout: timeout, picked: &list[i]}
		rows[i] = []string{cleanLine(list[i].Name), kindFlag(&list[i]), truncate(cleanLine(targetOf(&list[i])), 50), ""}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			status, ok := checkServer(ctx, &so, timeout)
			mu.Lock()
			defer mu.Unlock()
			rows[i][3] = status
			if !ok {
				failed++
			}
		}()
	}
	wg.Wait()
	if o.raw() {
		// --json: one object per server, the table's columns as members.
		type row struct {
			Name      string `json:"name"`
			Transport string `json:"transport"`
			Target    string `json:"target"`
			Status    string `json:"status"`
			OK        bool   `json:"ok"`
		}
		out := make([]row, len(rows))
		for i, r := range rows {
			out[i] = row{Name: list[i].Name, Transport: r[1], Target: targetOf(&list[i]), Status: r[3], OK: strings.HasPrefix(r[3], "ok")}
		}
		b, _ := json.Marshal(map[string]any{"servers": out})
		if err := writeRaw(stdout, b, o.format); err != nil {
			return err
		}
	} else if err := writeTable(stdout, "", []string{"NAME", "TRANSPORT", "TARGET", "STATUS"}, rows); err != nil {
		return err
	}
	if failed > 0 {
		return &failure{msg: fmt.Sprintf("%d of %d servers in %s did not answer (tako info --config FILE --server NAME -v shows why)", failed, len(list), o.config)}
	}
	return nil
}

// checkServer connects to one server and closes it again, within timeout,
// and says how it went in a few words.
func checkServer(ctx context.Context, o *options, timeout time.Duration) (status string, ok bool) {
	dial, err := chooseServer(o, nil)
	if err != nil {
		return "not usable: " + cleanLine(err.Error()), false
	}
	opCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		opCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	s, err := dial(opCtx)
	if err != nil {
		msg := explain(ctx, opCtx, timeout, "connect", err).Error()
		return truncate(cleanLine(strings.TrimPrefix(msg, "connect: ")), 120), false
	}
	info := s.ServerInfo()
	_ = closeWithin(ctx, opCtx, true, s)
	return fmt.Sprintf("ok: %s (%s)", serverLabel(info), cleanLine(info.ProtocolVersion)), true
}

// targetOf is what a server is reached at, for the table: its command
// line, or its URL without the values of its query.
func targetOf(s *dial.Server) string {
	if s.Command != "" {
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	return shownURL(s.URL)
}
