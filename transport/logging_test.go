package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// logTool logs at debug and warning, then an error-level "end" marker, so
// that a test knows when the tool's messages have all arrived.
func logTool(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
	for _, l := range []mcp.LoggingLevel{mcp.LevelDebug, mcp.LevelWarning} {
		if err := req.Log(ctx, l, "at "+string(l)); err != nil {
			return nil, err
		}
	}
	if err := req.Log(ctx, mcp.LevelError, "end"); err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{}, nil
}

func logServer(t *testing.T, version string) (*mcptest.Server, *transport.Session) {
	t.Helper()
	srv := mcptest.New(mcptest.Options{})
	if err := srv.AddTool(mcp.Tool{Name: "log"}, logTool); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(ctx)
	s := connect(t, conn, &transport.Options{ProtocolVersion: version})
	t.Cleanup(func() { s.Close(); cancel(); wait() })
	return srv, s
}

// collectLogs returns the data of the log messages up to the "end" marker.
func collectLogs(t *testing.T, logs <-chan *mcp.LoggingMessageParams) []string {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p := <-logs:
			var text string
			_ = json.Unmarshal(p.Data, &text)
			if text == "end" {
				return got
			}
			got = append(got, string(p.Level)+":"+text)
		case <-timeout:
			t.Fatalf("no end marker; got %v", got)
		}
	}
}

func TestSetLogLevelAtRunTime(t *testing.T) {
	for _, v := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(v, func(t *testing.T) {
			srv, s := logServer(t, v)
			ctx := context.Background()
			logs := make(chan *mcp.LoggingMessageParams, 16)
			defer s.OnLog(func(p *mcp.LoggingMessageParams) { logs <- p })()

			if err := s.SetLogLevel(ctx, mcp.LevelWarning); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "log"}); err != nil {
				t.Fatal(err)
			}
			if got := collectLogs(t, logs); strings.Join(got, ",") != "warning:at warning" {
				t.Fatalf("at warning: %v", got)
			}
			if err := s.SetLogLevel(ctx, mcp.LevelDebug); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "log"}); err != nil {
				t.Fatal(err)
			}
			if got := collectLogs(t, logs); strings.Join(got, ",") != "debug:at debug,warning:at warning" {
				t.Fatalf("at debug: %v", got)
			}
			if s.LogLevel() != mcp.LevelDebug {
				t.Fatalf("LogLevel = %q", s.LogLevel())
			}
			if v == mcp.Version20260728 {
				// The level travels in each request's _meta; no setLevel.
				for _, r := range srv.Received() {
					if r.Msg.Method == mcp.MethodLoggingSetLevel {
						t.Fatal("logging/setLevel sent on 2026-07-28")
					}
				}
				calls := 0
				for _, r := range srv.Received() {
					if r.Msg.Method == mcp.MethodToolsCall {
						calls++
						want := []string{`"warning"`, `"debug"`}[calls-1]
						if got := string(r.Meta()[mcp.MetaLogLevel]); got != want {
							t.Errorf("call %d: _meta log level %s, want %s", calls, got, want)
						}
					}
				}
			}
		})
	}
}

func TestSetLogLevelRefusesUnknownLevels(t *testing.T) {
	srv, s := logServer(t, mcp.Version20260728)
	if err := s.SetLogLevel(context.Background(), "verbose"); err == nil {
		t.Fatal("an unknown level was accepted")
	}
	// What reached the server is judged by what it holds once a call made
	// after the refusal has been answered, not by counting messages at one
	// moment: the session opens its listen stream in the background, so
	// the count alone moves on its own.
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "log"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Received() {
		if r.Msg.Method == mcp.MethodLoggingSetLevel {
			t.Fatal("logging/setLevel sent on 2026-07-28")
		}
		if got, ok := r.Meta()[mcp.MetaLogLevel]; ok {
			t.Fatalf("%s carries _meta log level %s after the level was refused", r.Msg.Method, got)
		}
	}
	if s.LogLevel() != "" {
		t.Fatalf("LogLevel = %q after a refused level", s.LogLevel())
	}
	// A bad Options.LogLevel fails Connect before anything is sent.
	conn, wait := mcptest.New(mcptest.Options{}).Pipe(context.Background())
	defer wait()
	if _, err := transport.Connect(context.Background(), conn, &transport.Options{LogLevel: "loud"}); err == nil {
		t.Fatal("Connect accepted LogLevel \"loud\"")
	}
}

func TestSetLogLevelWithoutLoggingCapability(t *testing.T) {
	srv := mcptest.New(mcptest.Options{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ListChangedCapability{}}})
	conn, wait := srv.Pipe(context.Background())
	defer wait()
	s := connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	defer s.Close()
	if err := s.SetLogLevel(context.Background(), mcp.LevelInfo); !errors.Is(err, transport.ErrCapability) {
		t.Fatalf("err = %v", err)
	}
}

func TestLogToSlog(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fn := transport.LogToSlog(logger)
	fn(&mcp.LoggingMessageParams{Level: mcp.LevelCritical, Logger: "db", Data: json.RawMessage(`"disk full"`)})
	fn(&mcp.LoggingMessageParams{Level: mcp.LevelNotice, Data: json.RawMessage(`{"rows":3}`)})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines = %q", lines)
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	if first["msg"] != "disk full" || first["level"] != "ERROR+1" || first["logger"] != "db" {
		t.Errorf("critical: %v", first)
	}
	data, _ := second["data"].(map[string]any)
	if second["level"] != "INFO" || data["rows"] != 3.0 {
		t.Errorf("notice: %v", second)
	}
}

// OnLog with LogToSlog forwards a server's log messages to a slog.Logger.
func ExampleLogToSlog() {
	ctx := context.Background()
	srv := mcptest.New(mcptest.Options{})
	err := srv.AddTool(mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, req.Log(ctx, mcp.LevelWarning, "cache cold")
	})
	if err != nil {
		log.Fatal(err)
	}
	conn, wait := srv.Pipe(ctx)
	defer wait()
	s, err := transport.Connect(ctx, conn, &transport.Options{LogLevel: mcp.LevelInfo})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // stable output
			}
			return a
		},
	}))
	toSlog := transport.LogToSlog(logger)
	got := make(chan struct{})
	defer s.OnLog(func(p *mcp.LoggingMessageParams) {
		toSlog(p)
		close(got)
	})()

	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "work"}); err != nil {
		log.Fatal(err)
	}
	<-got
	fmt.Println("done")
	// Output:
	// level=WARN msg="cache cold" logger=mcptest
	// done
}
