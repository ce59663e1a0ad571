package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/internal/testserve"
)

// TestAgentAPIKeyInCLIWords: a missing key is told in the CLI's words
// (the variable, or --api-key-env), not the library's Options.APIKey.
func TestAgentAPIKeyInCLIWords(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	r := tako(t, "agent", "--provider", "anthropic", "--model", "m", "--stdio", demoCommand(t), "hi")
	r.wantFailure(t, exitUsage, "tako: the anthropic provider needs an API key: set ANTHROPIC_API_KEY, or name another variable with --api-key-env VAR")
	if strings.Contains(r.stderr, "Options") {
		t.Errorf("the library's field is named: %q", r.stderr)
	}
	r = tako(t, "agent", "--provider", "anthropic", "--model", "m", "--api-key-env", "TAKO_TEST_NO_SUCH_KEY", "--stdio", demoCommand(t), "hi")
	r.wantFailure(t, exitUsage, "$TAKO_TEST_NO_SUCH_KEY, which is not set")
}

// TestAgentAPIKeyEnv: --api-key-env VAR sends the key VAR holds.
func TestAgentAPIKeyEnv(t *testing.T) {
	t.Setenv("TAKO_TEST_KEY", "sekrit")
	var mu sync.Mutex
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = r.Header.Get("Authorization")
		mu.Unlock()
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"done"}}]}`)
	}))
	defer srv.Close()
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--api-key-env", "TAKO_TEST_KEY", "--stdio", demoCommand(t), "hi")
	mu.Lock()
	defer mu.Unlock()
	if r.code != 0 || r.stdout != "done\n" || auth != "Bearer sekrit" {
		t.Errorf("exit %d, stdout %q, Authorization %q", r.code, r.stdout, auth)
	}
}

// TestAgentBaseURLPageNotDumped: a --base-url that answers with a web page
// is one line with the status and what to check, as --http has it.
func TestAgentBaseURLPageNotDumped(t *testing.T) {
	t.Parallel()
	u := pageServer(t, http.StatusNotFound, errorPage)
	r := tako(t, "agent", "--provider", "openai", "--base-url", u+"/v2", "--model", "m", "--stdio", demoCommand(t), "hi")
	r.wantFailure(t, exitFailure, "agent: the model's API answered HTTP 404 Not Found: is --base-url the API's root (often ending in /v1)?")
	wantNoPage(t, r)
}

// TestAgentModelUnreachable: the model's API not running is said once,
// with the URL, not as "orchestrator: turn 1: openai: Post ...: dial tcp".
func TestAgentModelUnreachable(t *testing.T) {
	t.Parallel()
	addr := testserve.ClosedAddr(t)
	r := tako(t, "agent", "--provider", "openai", "--base-url", "http://"+addr+"/v1", "--model", "m", "--stdio", demoCommand(t), "hi")
	r.wantFailure(t, exitFailure, "agent: cannot reach the model's API at http://"+addr+"/v1/chat/completions: connection refused (is it running, and is --base-url right?)")
	for _, s := range []string{"orchestrator", "dial tcp", "Post"} {
		if strings.Contains(r.stderr, s) {
			t.Errorf("the layers show (%q): %q", s, r.stderr)
		}
	}
}

// TestAgentServerFailureExplained: a server the agent cannot start is
// explained as the other commands explain it, named.
func TestAgentServerFailureExplained(t *testing.T) {
	t.Parallel()
	r := tako(t, "agent", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "m",
		"--stdio", "/nonexistent/tako-test/server", "hi")
	r.wantFailure(t, exitFailure, "agent: server server: cannot start /nonexistent/tako-test/server: no such file")
}

// TestAgentTurnLimitEndsWithPartialAnswer: a model that keeps calling
// tools until --max-turns gets one last turn without tools, and the run
// ends with its answer so far, and a line that says it is partial.
func TestAgentTurnLimitEndsWithPartialAnswer(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var choices []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ToolChoice string `json:"tool_choice"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		choices = append(choices, req.ToolChoice)
		n := len(choices)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if req.ToolChoice == "none" {
			io.WriteString(w, `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"partial: echoed twice"}}]}`)
			return
		}
		fmt.Fprintf(w, `{"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"echo","arguments":"{\"message\":\"again\"}"}}]}}]}`, n)
	}))
	defer srv.Close()
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--max-turns", "2", "--stdio", demoCommand(t), "echo forever")
	if r.stdout != "partial: echoed twice\n" {
		t.Errorf("stdout %q, want the partial answer", r.stdout)
	}
	if r.code != exitFailure || !strings.HasSuffix(r.stderr, "tako: agent: the model used its 2 turns (--max-turns) before it finished; the answer above is what it had by then\n") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(choices) != 3 || choices[2] != "none" {
		t.Errorf("the model was asked %d times, with tool_choice %q", len(choices), choices)
	}
}

// TestAgentRoots: --root reaches the agent's servers too.
func TestAgentRoots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	var results []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		last := req.Messages[len(req.Messages)-1]
		if last.Role != "tool" {
			io.WriteString(w, `{"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"roots","arguments":"{}"}}]}}]}`)
			return
		}
		mu.Lock()
		results = append(results, fmt.Sprint(last.Content))
		mu.Unlock()
		io.WriteString(w, `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`)
	}))
	defer srv.Close()
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--root", dir, "--stdio", demoCommand(t), "list the roots")
	mu.Lock()
	defer mu.Unlock()
	if r.code != 0 || len(results) != 1 || !strings.Contains(results[0], "file://"+dir) {
		t.Errorf("exit %d, the tool said %q", r.code, results)
	}
}
