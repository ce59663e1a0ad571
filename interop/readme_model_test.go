package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// readmeModel plays the model behind the Chat Completions API for the
// README's agent program, and refuses (400, which the program reports as
// it would a real model's refusal) whatever a program that follows the
// README would not send: turn 1 must offer the local word_count tool and
// get-sum of server-everything under the README's naming policy, and gets
// a call of it; turn 2 must carry get-sum's result, and gets the answer.
type readmeModel struct{}

func (readmeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
		refuse(w, fmt.Sprintf("the request is not a chat completion: %v", err))
		return
	}
	var tools []string
	for _, t := range body.Tools {
		tools = append(tools, t.Function.Name)
	}
	last := body.Messages[len(body.Messages)-1]
	var reply string
	switch last.Role {
	case "user":
		for _, want := range []string{"word_count", "server-everything__get-sum"} {
			if !slices.Contains(tools, want) {
				refuse(w, fmt.Sprintf("the tools offered %v lack %s", tools, want))
				return
			}
		}
		reply = `{"id":"r1","object":"chat.completion","model":"qwen3","choices":[{"index":0,"finish_reason":"tool_calls",
		  "message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"server-everything__get-sum","arguments":"{\"a\":17,\"b\":25}"}}]}}],
		  "usage":{"prompt_tokens":10,"completion_tokens":5}}`
	case "tool":
		if last.ToolCallID != "call_1" || !strings.Contains(fmt.Sprint(last.Content), "The sum of 17 and 25 is 42.") {
			refuse(w, fmt.Sprintf("the tool message is %+v, want get-sum's result for call_1", last))
			return
		}
		reply = `{"id":"r2","object":"chat.completion","model":"qwen3","choices":[{"index":0,"finish_reason":"stop",
		  "message":{"role":"assistant","content":"17 + 25 = 42"}}],"usage":{"prompt_tokens":20,"completion_tokens":5}}`
	default:
		refuse(w, "the last message is from "+last.Role)
		return
	}
	if body.Stream {
		refuse(w, "a program without OnEvent asks for no stream")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, reply)
}

func refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": "readme model: " + msg, "type": "invalid_request_error"}})
	w.Write(b)
}
