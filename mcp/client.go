package mcp

import "encoding/json"

// Root is a directory or file the client exposes to the server. URI is a
// file:// URI.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// SamplingMessage is one message of a sampling conversation. Content is a
// single block or, from 2025-11-25, an array of blocks; it is kept raw so
// that both shapes survive. Use Blocks to read it.
type SamplingMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Meta    Meta            `json:"_meta,omitempty"`
}

// Blocks returns the message's content as a list of blocks, whichever shape
// the server sent.
func (m *SamplingMessage) Blocks() ([]Content, error) {
	return decodeBlocks(m.Content)
}

func decodeBlocks(raw json.RawMessage) ([]Content, error) {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			var blocks []Content
			err := json.Unmarshal(raw, &blocks)
			return blocks, err
		}
		break
	}
	var one Content
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, err
	}
	return []Content{one}, nil
}

// ModelPreferences are the server's advisory wishes about the model.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint is a substring of a model name the server would like.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	MaxTokens        int               `json:"maxTokens"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
	Tools            []Tool            `json:"tools,omitempty"`
	ToolChoice       *ToolChoice       `json:"toolChoice,omitempty"`
	Task             *TaskParams       `json:"task,omitempty"`
	Meta             Meta              `json:"_meta,omitempty"`
}

// ToolChoice says whether a sampled model may, must or must not use tools.
type ToolChoice struct {
	Mode string `json:"mode,omitempty"` // "auto", "required" or "none"
}

// CreateMessageResult is the client's answer to sampling/createMessage.
// Content is one block or an array of blocks (for tool use).
type CreateMessageResult struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
	Meta       Meta            `json:"_meta,omitempty"`
}

// Sampling stop reasons.
const (
	StopEndTurn      = "endTurn"
	StopStopSequence = "stopSequence"
	StopMaxTokens    = "maxTokens"
	StopToolUse      = "toolUse"
)

// ElicitParams are the params of elicitation/create. Mode "" or "form" asks
// for RequestedSchema's fields; "url" asks the user to visit URL.
type ElicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	// Task asks a 2025-11-25 client that declared
	// tasks.requests.elicitation.create to run the elicitation as a task.
	Task *TaskParams `json:"task,omitempty"`
	Meta Meta        `json:"_meta,omitempty"`
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the client's answer to elicitation/create. Content holds
// the accepted form's values.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}
