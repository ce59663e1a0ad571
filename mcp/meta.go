package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tako-mcp/tako/internal/jsonscan"
)

// RequestMeta is the per-request metadata every 2026-07-28 request carries
// in params._meta, in place of the legacy initialize handshake. It marshals
// to the reserved keys (MetaProtocolVersion, MetaClientCapabilities,
// MetaClientInfo, MetaLogLevel, MetaProgressToken); use MergeInto to add
// them to a params' Meta next to keys owned by others.
type RequestMeta struct {
	// ProtocolVersion is required; on HTTP it must equal the
	// MCP-Protocol-Version header. Empty is left out.
	ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion,omitempty"`
	// ClientCapabilities is required: capabilities are declared per request
	// and a server may not infer them from earlier ones. Nil is sent as {},
	// "no optional capabilities".
	ClientCapabilities *ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
	// ClientInfo should be on every request; conformance warns without it.
	ClientInfo *Implementation `json:"io.modelcontextprotocol/clientInfo,omitempty"`
	// LogLevel opts in to notifications/message for this request only;
	// without it the server sends no logs.
	LogLevel LoggingLevel `json:"io.modelcontextprotocol/logLevel,omitempty"`
	// ProgressToken, a JSON string or integer, asks for
	// notifications/progress.
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`
}

// MarshalJSON implements json.Marshaler, writing a nil ClientCapabilities
// as {} because the key is required.
func (rm RequestMeta) MarshalJSON() ([]byte, error) {
	type wire RequestMeta
	if rm.ClientCapabilities == nil {
		rm.ClientCapabilities = &ClientCapabilities{}
	}
	return marshalPlain(wire(rm))
}

// MergeInto sets rm's keys in m, replacing any already there and leaving the
// others alone, and returns m (a new Meta if m is nil).
func (rm RequestMeta) MergeInto(m Meta) (Meta, error) {
	raw, err := json.Marshal(rm)
	if err != nil {
		return m, fmt.Errorf("mcp: marshal request meta: %w", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return m, fmt.Errorf("mcp: marshal request meta: %w", err)
	}
	if m == nil {
		m = make(Meta, len(keys))
	}
	for k, v := range keys {
		m[k] = v
	}
	return m, nil
}

// ParseRequestMeta reads the reserved request keys from m; keys that are
// absent stay zero. It fails if a present key has the wrong shape, which a
// server answers with -32602.
func ParseRequestMeta(m Meta) (RequestMeta, error) {
	var rm RequestMeta
	if err := getMeta(m, MetaProtocolVersion, &rm.ProtocolVersion); err != nil {
		return rm, err
	}
	if _, ok := m[MetaClientCapabilities]; ok {
		rm.ClientCapabilities = new(ClientCapabilities)
		if err := getMeta(m, MetaClientCapabilities, rm.ClientCapabilities); err != nil {
			return rm, err
		}
	}
	if _, ok := m[MetaClientInfo]; ok {
		rm.ClientInfo = new(Implementation)
		if err := getMeta(m, MetaClientInfo, rm.ClientInfo); err != nil {
			return rm, err
		}
	}
	if err := getMeta(m, MetaLogLevel, &rm.LogLevel); err != nil {
		return rm, err
	}
	if tok, ok := m[MetaProgressToken]; ok {
		rm.ProgressToken = tok
	}
	return rm, nil
}

func getMeta(m Meta, key string, v any) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("mcp: _meta[%q]: %w", key, err)
	}
	return nil
}

// ProgressToken returns the request's progress token (a JSON string or
// integer), if any.
func (m Meta) ProgressToken() (json.RawMessage, bool) {
	tok, ok := m[MetaProgressToken]
	return tok, ok && len(tok) > 0 && string(tok) != "null"
}

// SubscriptionID returns the id of the subscriptions/listen stream a
// 2026-07-28 notification or listen result belongs to; false if the key is
// absent or not an id.
func (m Meta) SubscriptionID() (ID, bool) {
	raw, ok := m[MetaSubscriptionID]
	if !ok {
		return ID{}, false
	}
	var id ID
	if err := json.Unmarshal(raw, &id); err != nil || !id.IsValid() {
		return ID{}, false
	}
	return id, true
}

// ServerInfo returns the 2026-07-28 result key MetaServerInfo. Use it for
// display and logs only: it is self-reported and unverified.
func (m Meta) ServerInfo() (*Implementation, bool) {
	var impl Implementation
	raw, ok := m[MetaServerInfo]
	if !ok || json.Unmarshal(raw, &impl) != nil {
		return nil, false
	}
	return &impl, true
}

// RelatedTask returns the task id of the 2025-11-25 key MetaRelatedTask,
// which ties a message (a tasks/result answer, or a request the server
// sends while a task waits for input) to its task.
func (m Meta) RelatedTask() (string, bool) {
	var rt RelatedTask
	raw, ok := m[MetaRelatedTask]
	if !ok || json.Unmarshal(raw, &rt) != nil || rt.TaskID == "" {
		return "", false
	}
	return rt.TaskID, true
}

// ErrBadResult is wrapped by ParseResultType when a result is not a JSON
// object or its resultType is not a string.
var ErrBadResult = errors.New("mcp: malformed result")

// ParseResultType returns the resultType of a raw result: "complete",
// "input_required", "task" or whatever else the server sent. A result
// without one (every legacy server, and 2026-07-28 servers that forget) is
// complete, as the spec requires; so, leniently, is a null or empty one. The caller decides whether a value it did
// not opt in to (an unknown one, or "task" without the tasks extension)
// makes the response invalid.
//
// It reads the result's members without decoding them (a tools/call result
// may hold megabytes of text, and every 2026-07-28 result is asked its
// resultType before it is decoded); a member name with escapes, or one
// that matches "resultType" only ignoring case, takes encoding/json's path,
// whose matching rules the answer then follows.
func ParseResultType(raw json.RawMessage) (string, error) {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return "", fmt.Errorf("%w: not a JSON object", ErrBadResult)
	}
	rt, found, ok := resultTypeMember(trimmed)
	if !ok {
		var r struct {
			ResultType *json.RawMessage `json:"resultType"`
		}
		if err := json.Unmarshal(trimmed, &r); err != nil {
			return "", fmt.Errorf("%w: %w", ErrBadResult, err)
		}
		if r.ResultType != nil {
			rt, found = *r.ResultType, true
		}
	}
	if !found || string(rt) == "null" {
		return ResultTypeComplete, nil
	}
	var s string
	if err := json.Unmarshal(rt, &s); err != nil {
		return "", fmt.Errorf("%w: resultType is %s, not a string", ErrBadResult, rt)
	}
	if s == "" {
		return ResultTypeComplete, nil
	}
	return s, nil
}

// resultTypeMember returns the raw value of data's resultType member (the
// last one, as encoding/json keeps), scanning the other members without
// decoding them. ok is false when data is not valid JSON or a member name
// needs encoding/json's rules (escapes, or a match ignoring case).
func resultTypeMember(data []byte) (rt []byte, found, ok bool) {
	i, empty := jsonscan.Open(data, 0)
	for more := !empty; more; {
		key, f, v, err := jsonscan.Key(data, i)
		if err != nil || f != 0 {
			return nil, false, false
		}
		end, _, err := jsonscan.Value(data, v, 1)
		if err != nil {
			return nil, false, false
		}
		if equalFoldLower(key, "resulttype") {
			if string(key) != "resultType" {
				return nil, false, false
			}
			rt, found = data[v:end], true
		}
		if i, more, err = jsonscan.Next(data, end, '}'); err != nil {
			return nil, false, false
		}
	}
	return rt, found, jsonscan.Finish(data, i) == nil
}

// marshalPlain marshals v like json.Marshal but without escaping <, > and &,
// so that a MarshalJSON method defers that choice to the outer encoder (which
// escapes them again unless told otherwise).
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
