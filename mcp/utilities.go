package mcp

import "encoding/json"

// ProgressParams are the params of notifications/progress. Progress increases
// with each notification and may be fractional; Total is absent when unknown.
type ProgressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
	Meta          Meta            `json:"_meta,omitempty"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	RequestID ID     `json:"requestId"`
	Reason    string `json:"reason,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// InputRequiredResult is a 2026-07-28 result that asks the client for input
// before the server can finish (multi round-trip requests). The client
// fulfils every InputRequests entry and re-sends the original request with
// InputResponses and, byte for byte, RequestState.
type InputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	RequestState  *string                 `json:"requestState,omitempty"`
	Meta          Meta                    `json:"_meta,omitempty"`
}

// InputRequest is one entry of InputRequiredResult.InputRequests: a request
// the server would have sent as a server-to-client request in a legacy era
// (elicitation/create, sampling/createMessage or roots/list).
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Notification is a notification received from a server, as delivered to
// subscribers.
type Notification struct {
	Method string
	Params json.RawMessage
}
