package auth

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		in   string
		want []Challenge
	}{
		{`Bearer`, []Challenge{{Scheme: "Bearer", Params: map[string]string{}}}},
		{`Bearer realm="x"`, []Challenge{{Scheme: "Bearer", Params: map[string]string{"realm": "x"}}}},
		{`Bearer resource_metadata="https://a/.well-known/oauth-protected-resource/mcp", scope="a b"`,
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "https://a/.well-known/oauth-protected-resource/mcp", "scope": "a b"}}}},
		{`Bearer error=insufficient_scope,scope="x, y", Basic realm="r"`,
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"error": "insufficient_scope", "scope": "x, y"}}, {Scheme: "Basic", Params: map[string]string{"realm": "r"}}}},
		{`Negotiate abc+/=, Bearer Error="a\"b"`,
			[]Challenge{{Scheme: "Negotiate", Params: map[string]string{}, Token68: "abc+/="}, {Scheme: "Bearer", Params: map[string]string{"error": `a"b`}}}},
		{`DPoP error="use_dpop_nonce" , algs="ES256"`, []Challenge{{Scheme: "DPoP", Params: map[string]string{"error": "use_dpop_nonce", "algs": "ES256"}}}},
	}
	for _, tc := range tests {
		got, err := ParseChallenges([]string{tc.in})
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.in, got, tc.want)
		}
	}
}

// TestParseChallengesHostile: what a broken or malicious server sends is
// an error, never a guess.
func TestParseChallengesHostile(t *testing.T) {
	for _, in := range []string{
		`Bearer scope="a", scope="b"`,           // duplicate parameter
		`Bearer SCOPE="a", scope="b"`,           // duplicate, case-insensitively
		`Bearer resource_metadata="https://x/y`, // unterminated quoted string
		`Bearer scope="a\`,                      // unterminated escape
		`Bearer scope=, error="x"`,              // no value, then a parameter
		`Bearer scope="a" junk`,                 // stray token after a parameter
		`Bearer ="a"`,                           // no parameter name
		"Bearer scope=\"a\x00b\"",               // control character
		`Bearer, scope="a"`,                     // a parameter without a scheme
		`"Bearer"`,                              // no scheme
		`Bearer a b`,                            // two token68s
		"Bearer scope=\"" + strings.Repeat("a", maxChallengeLen) + "\"",
	} {
		if _, err := ParseChallenges([]string{in}); !errors.Is(err, ErrMalformedChallenge) {
			t.Errorf("%q: err = %v, want ErrMalformedChallenge", in, err)
		}
	}
}

func TestParseResourceChallenge(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="r"`)
	h.Add("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://s/prm", error_description="more"`)
	rc, err := ParseResourceChallenge(h)
	if err != nil {
		t.Fatal(err)
	}
	want := &ResourceChallenge{Scheme: "Bearer", ResourceMetadata: "https://s/prm", Scope: []string{"mcp:basic", "mcp:write"}, Error: "insufficient_scope", ErrorDescription: "more"}
	if !reflect.DeepEqual(rc, want) {
		t.Errorf("got %+v, want %+v", rc, want)
	}
	rc, err = ParseResourceChallenge(http.Header{})
	if err != nil || rc.Scheme != "" {
		t.Errorf("no header: %+v, %v", rc, err)
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://a/b", scope="x y"`,
		`Bearer error="insufficient_scope", scope="a", Basic realm="r"`,
		`Negotiate abc==`, `DPoP error="use_dpop_nonce"`, `Bearer scope="a\"b"`, `a=b`, `,,,`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseChallenges([]string{s})
		if err != nil {
			if !errors.Is(err, ErrMalformedChallenge) {
				t.Fatalf("error %v does not wrap ErrMalformedChallenge", err)
			}
			return
		}
		for _, c := range cs {
			if c.Scheme == "" {
				t.Fatalf("empty scheme from %q", s)
			}
			for k := range c.Params {
				if k != strings.ToLower(k) || k == "" {
					t.Fatalf("parameter name %q from %q", k, s)
				}
			}
		}
	})
}
