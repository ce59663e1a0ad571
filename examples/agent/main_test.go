package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAgentExample runs the example against a fake OpenAI-compatible model
// that calls one tool of each server and the local tool in one turn.
func TestAgentExample(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "demo-server")
	build := exec.Command("go", "build", "-o", bin, "../demo-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the demo server: %v\n%s", err, out)
	}
	turn := 0
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		turn++
		w.Header().Set("Content-Type", "application/json")
		if turn == 1 {
			fmt.Fprint(w, `{"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[
			  {"id":"a","type":"function","function":{"name":"s1__add","arguments":"{\"a\":17,\"b\":25}"}},
			  {"id":"b","type":"function","function":{"name":"s2__echo","arguments":"{\"message\":\"hello\"}"}},
			  {"id":"c","type":"function","function":{"name":"word_count","arguments":"{\"text\":\"one two three\"}"}}]}}]}`)
			return
		}
		var results []string
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results = append(results, fmt.Sprint(m.Content))
			}
		}
		answer, _ := json.Marshal(strings.Join(results, ","))
		fmt.Fprintf(w, `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`, answer)
	}))
	defer model.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"-model", "m", "-base-url", model.URL + "/v1", "-server", bin, "-server", bin + " -name second", "go"}, &stdout, &stderr)
	t.Logf("stderr:\n%s", stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stdout.String(), "42,hello,3\n"; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}
