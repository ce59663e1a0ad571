package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDecodeDiscoverResultRefusesWhatIsNotOne: a legacy server that answers
// server/discover with {} (or any other success) must not be taken for a
// 2026-07-28 server, so only a result with the members a DiscoverResult
// requires, of their types, decodes; everything else is a *ResultError that
// names the member at fault.
func TestDecodeDiscoverResultRefusesWhatIsNotOne(t *testing.T) {
	bad := []struct {
		name, result, member, reason string
	}{
		{"empty object", `{}`, "supportedVersions", "is missing"},
		{"null", `null`, "", "is not a JSON object"},
		{"array", `[]`, "", "is not a JSON object"},
		{"string", `"ok"`, "", "is not a JSON object"},
		{"an initialize result", `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`, "supportedVersions", "is missing"},
		{"versions null", `{"supportedVersions":null,"capabilities":{}}`, "supportedVersions", "is not an array of strings"},
		{"versions a string", `{"supportedVersions":"2026-07-28","capabilities":{}}`, "supportedVersions", "is not an array of strings"},
		{"versions with a number", `{"supportedVersions":["2026-07-28",1],"capabilities":{}}`, "supportedVersions", "is not an array of strings"},
		{"versions with a null", `{"supportedVersions":["2026-07-28",null],"capabilities":{}}`, "supportedVersions", "is not an array of strings"},
		{"no capabilities", `{"supportedVersions":["2026-07-28"]}`, "capabilities", "is missing"},
		{"capabilities null", `{"supportedVersions":["2026-07-28"],"capabilities":null}`, "capabilities", "is not an object"},
		{"capabilities an array", `{"supportedVersions":["2026-07-28"],"capabilities":[]}`, "capabilities", "is not an object"},
		{"resultType a number", `{"resultType":1,"supportedVersions":["2026-07-28"],"capabilities":{}}`, "resultType", "is not a string"},
		{"resultType input_required", `{"resultType":"input_required","supportedVersions":["2026-07-28"],"capabilities":{}}`, "resultType", `is "input_required", not "complete"`},
		{"instructions a number", `{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":5}`, "instructions", "is a JSON number, not of its type"},
		{"ttlMs a string", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":"60"}`, "ttlMs", "is a JSON string, not of its type"},
		{"a capability of the wrong type", `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":true}}`, "capabilities.tools", "is a JSON bool, not of its type"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeDiscoverResult([]byte(c.result))
			var re *ResultError
			if !errors.As(err, &re) {
				t.Fatalf("DecodeDiscoverResult(%s) = %+v, %v; want a *ResultError", c.result, r, err)
			}
			if !errors.Is(err, ErrBadResult) {
				t.Errorf("%v does not wrap ErrBadResult", err)
			}
			if re.Method != MethodDiscover || re.Type != "DiscoverResult" || re.Member != c.member || re.Reason != c.reason {
				t.Errorf("ResultError %+v, want member %q reason %q", re, c.member, c.reason)
			}
			if msg := err.Error(); !strings.Contains(msg, "server/discover result is not a DiscoverResult") {
				t.Errorf("message %q", msg)
			}
		})
	}
}

func TestDecodeDiscoverResultTakesOne(t *testing.T) {
	ttl := int64(60000)
	full := DiscoverResult{
		ResultType:        ResultTypeComplete,
		SupportedVersions: []string{Version20260728},
		Capabilities:      ServerCapabilities{Tools: &ListChangedCapability{ListChanged: true}},
		Instructions:      "be nice",
		TTLMs:             &ttl,
		CacheScope:        "public",
		Meta:              Meta{MetaServerInfo: json.RawMessage(`{"name":"s","version":"1"}`)},
	}
	fullJSON, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, result string }{
		{"every member", string(fullJSON)},
		// resultType, ttlMs and cacheScope absent: "complete", stale.
		{"the two members that tell", `{"supportedVersions":["2026-07-28"],"capabilities":{}}`},
		{"an empty list of versions", " {\n\"capabilities\": {}, \"supportedVersions\": [] }"},
		{"members no revision defines", `{"supportedVersions":["2099-01-01"],"capabilities":{"x-new":{}},"x-vendor":1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeDiscoverResult([]byte(c.result))
			if err != nil {
				t.Fatalf("DecodeDiscoverResult(%s): %v", c.result, err)
			}
			var want DiscoverResult
			if err := json.Unmarshal([]byte(c.result), &want); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(r)
			wantJSON, _ := json.Marshal(want)
			if string(got) != string(wantJSON) {
				t.Errorf("decoded %s, json.Unmarshal gives %s", got, wantJSON)
			}
		})
	}
}
