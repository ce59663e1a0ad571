package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ResultError says why a result is not of the type its method returns: a
// member the type requires is missing, or a member has the wrong type. It
// wraps ErrBadResult.
type ResultError struct {
	Method string // the method answered, e.g. "server/discover"
	Type   string // the result type expected, e.g. "DiscoverResult"
	Member string // the member at fault; "" when the result is not an object
	Reason string // what is wrong with it: "is missing", "is not an object"
}

func (e *ResultError) Error() string {
	what := e.Member
	if what == "" {
		what = "the result"
	}
	return fmt.Sprintf("mcp: the %s result is not a %s: %s %s", e.Method, e.Type, what, e.Reason)
}

// Unwrap returns ErrBadResult.
func (e *ResultError) Unwrap() error { return ErrBadResult }

// DecodeDiscoverResult decodes a server/discover result, and checks that it
// is a DiscoverResult: an object whose supportedVersions is an array of
// strings and whose capabilities is an object, and whose other members, when
// present, have their types. Anything else is a *ResultError.
//
// The check is what tells a 2026-07-28 server from a legacy one that answers
// every method it does not know with a success (some answer {}): such an
// answer is not a DiscoverResult, and taking it for one would leave a
// session with no capabilities that lists no tools. The schema also lists
// resultType, ttlMs and cacheScope as required, but a missing resultType
// means "complete" (checklist §1B.9) and a missing ttlMs a stale entry
// (§6B), so their absence is tolerated; their presence with another type,
// or a resultType other than "complete", is not.
func DecodeDiscoverResult(data []byte) (*DiscoverResult, error) {
	fail := func(member, reason string) (*DiscoverResult, error) {
		return nil, &ResultError{Method: MethodDiscover, Type: "DiscoverResult", Member: member, Reason: reason}
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return fail("", "is not a JSON object")
	}
	versions, ok := members["supportedVersions"]
	switch {
	case !ok:
		return fail("supportedVersions", "is missing")
	case !isArrayOfStrings(versions):
		return fail("supportedVersions", "is not an array of strings")
	}
	caps, ok := members["capabilities"]
	switch {
	case !ok:
		return fail("capabilities", "is missing")
	case !startsWith(caps, '{'):
		return fail("capabilities", "is not an object")
	}
	if rt, ok := members["resultType"]; ok {
		var s string
		if json.Unmarshal(rt, &s) != nil {
			return fail("resultType", "is not a string")
		}
		if s != ResultTypeComplete {
			return fail("resultType", fmt.Sprintf("is %q, not %q", s, ResultTypeComplete))
		}
	}
	var r DiscoverResult
	if err := json.Unmarshal(data, &r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fail(te.Field, "is a JSON "+te.Value+", not of its type")
		}
		return fail("", "does not decode: "+err.Error())
	}
	return &r, nil
}

func isArrayOfStrings(raw json.RawMessage) bool {
	var vs []json.RawMessage
	if !startsWith(raw, '[') || json.Unmarshal(raw, &vs) != nil {
		return false
	}
	for _, v := range vs {
		if !startsWith(v, '"') {
			return false
		}
	}
	return true
}

func startsWith(raw json.RawMessage, c byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == c
}
