package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// NewError returns a JSON-RPC error. data, if not nil, is marshalled into
// Data; should that fail, Data is left out and the message says why, so that
// building an error never fails and never panics.
func NewError(code int64, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data == nil {
		return e
	}
	raw, err := marshalParams(data)
	if err != nil {
		e.Message = fmt.Sprintf("%s [data dropped: %v]", message, err)
		return e
	}
	e.Data = raw
	return e
}

// NewParseError returns a -32700 error: the message was not valid JSON.
func NewParseError(message string) *Error {
	return &Error{Code: CodeParseError, Message: orDefault(message, "Parse error")}
}

// NewInvalidRequestError returns a -32600 error: valid JSON, but not a valid
// request.
func NewInvalidRequestError(message string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: orDefault(message, "Invalid request")}
}

// NewMethodNotFoundError returns a -32601 error naming method: the answer to
// a request for a feature that is not offered (for a client, a server
// request for roots, sampling or elicitation it did not declare).
func NewMethodNotFoundError(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + method}
}

// NewInvalidParamsError returns a -32602 error.
func NewInvalidParamsError(message string) *Error {
	return &Error{Code: CodeInvalidParams, Message: orDefault(message, "Invalid params")}
}

// NewInternalError returns a -32603 error.
func NewInternalError(message string) *Error {
	return &Error{Code: CodeInternalError, Message: orDefault(message, "Internal error")}
}

// ResourceNotFoundData is the data of a resource-not-found error.
type ResourceNotFoundData struct {
	URI string `json:"uri"`
}

// NewResourceNotFoundError returns the error for an unknown resource as the
// given protocol revision spells it: -32002 up to 2025-11-25, -32602 from
// 2026-07-28 on; both carry data {uri}.
func NewResourceNotFoundError(version, uri string) *Error {
	code := int64(CodeResourceNotFound)
	if IsModernVersion(version) {
		code = CodeInvalidParams
	}
	return NewError(code, "Resource not found", ResourceNotFoundData{URI: uri})
}

// URLElicitationRequiredData is the data of a -32042 error (2025-11-25): URL
// elicitations the user must complete before the request can succeed. Each
// has Mode "url", a URL and an ElicitationID.
type URLElicitationRequiredData struct {
	Elicitations []ElicitParams `json:"elicitations"`
}

// NewURLElicitationRequiredError returns a -32042 error listing
// elicitations; an entry without a Mode gets "url".
func NewURLElicitationRequiredError(message string, elicitations ...ElicitParams) *Error {
	data := URLElicitationRequiredData{Elicitations: make([]ElicitParams, len(elicitations))}
	for i, e := range elicitations {
		if e.Mode == "" {
			e.Mode = ElicitModeURL
		}
		data.Elicitations[i] = e
	}
	return NewError(CodeURLElicitationRequired, orDefault(message, "URL elicitation required"), data)
}

// NewHeaderMismatchError returns a -32020 error (2026-07-28): an HTTP
// header disagrees with the body, or a required header is missing.
func NewHeaderMismatchError(message string) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: orDefault(message, "Header mismatch")}
}

// MissingCapabilityData is the data of a -32021 error (2026-07-28): the
// capabilities the request needs the client to declare.
type MissingCapabilityData struct {
	RequiredCapabilities ClientCapabilities `json:"requiredCapabilities"`
}

// NewMissingCapabilityError returns a -32021 error asking for required.
func NewMissingCapabilityError(required ClientCapabilities) *Error {
	return NewError(CodeMissingRequiredClientCapability, "Missing required client capability",
		MissingCapabilityData{RequiredCapabilities: required})
}

// NewUnsupportedVersionError returns a -32022 error (2026-07-28) that lists
// the supported revisions, from which the client picks one and retries.
func NewUnsupportedVersionError(requested string, supported []string) *Error {
	if supported == nil {
		supported = []string{}
	}
	return NewError(CodeUnsupportedProtocolVersion, "Unsupported protocol version",
		UnsupportedVersionData{Supported: supported, Requested: requested})
}

// NewUserRejectedError returns the -1 error a client sends when its user
// refuses a sampling request.
func NewUserRejectedError(message string) *Error {
	return &Error{Code: CodeUserRejected, Message: orDefault(message, "User rejected sampling request")}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ErrNoData is returned by Error.DecodeData for an error without data.
var ErrNoData = errors.New("mcp: error has no data")

// DecodeData unmarshals e.Data into v.
func (e *Error) DecodeData(v any) error {
	if len(e.Data) == 0 || string(e.Data) == "null" {
		return ErrNoData
	}
	return json.Unmarshal(e.Data, v)
}

// UnsupportedVersion returns the supported revisions a server listed when
// it refused the requested one: code -32022 (2026-07-28), or -32602 with
// the same data (legacy servers answering initialize). It reports false for
// any other error, so the caller can tell "pick another version" from
// "something else went wrong".
func (e *Error) UnsupportedVersion() (*UnsupportedVersionData, bool) {
	if e.Code != CodeUnsupportedProtocolVersion && e.Code != CodeInvalidParams {
		return nil, false
	}
	var d struct {
		Supported *[]string `json:"supported"`
		Requested string    `json:"requested"`
	}
	if e.DecodeData(&d) != nil || d.Supported == nil {
		return nil, false
	}
	return &UnsupportedVersionData{Supported: *d.Supported, Requested: d.Requested}, true
}

// MissingCapabilities returns the capabilities a -32021 error asks the
// client to declare.
func (e *Error) MissingCapabilities() (*ClientCapabilities, bool) {
	if e.Code != CodeMissingRequiredClientCapability {
		return nil, false
	}
	var d MissingCapabilityData
	if e.DecodeData(&d) != nil {
		return nil, false
	}
	return &d.RequiredCapabilities, true
}

// URLElicitations returns the elicitations of a -32042 error. Show each to
// the user, then retry the original request.
func (e *Error) URLElicitations() ([]ElicitParams, bool) {
	if e.Code != CodeURLElicitationRequired {
		return nil, false
	}
	var d URLElicitationRequiredData
	if e.DecodeData(&d) != nil {
		return nil, false
	}
	return d.Elicitations, true
}
