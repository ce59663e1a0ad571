package interop

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The MCP server behind the strict authorization server: the official Go
// SDK's Streamable HTTP handler behind a resource server check of this
// file's, as strict as the authorization server. It validates each access
// token against the server's keys (its jwks_uri, as a separate resource
// server would): a JWT of type at+jwt (RFC 9068) signed with one of the
// server's keys, from the issuer, for this resource (aud), not expired (no
// leeway), with the scope the request needs; a DPoP-bound token (cnf.jkt)
// only with a valid DPoP proof of the same key (RFC 9449). It serves its
// protected resource metadata (RFC 9728), answers a request without a
// token 401 with WWW-Authenticate: Bearer resource_metadata=..., a bad
// token 401 invalid_token, and a call of write_note without mcp:write 403
// insufficient_scope (RFC 6750 §3.1) naming every scope the call needs.

const (
	scopeRead  = "mcp:read"  // every MCP request
	scopeWrite = "mcp:write" // write_note, for the step-up
)

// mcpResource is the running MCP resource server.
type mcpResource struct {
	URL string // the MCP endpoint, which is also the resource identifier
	PRM string // its protected resource metadata

	issuer  string
	jwksURI string

	mu       sync.Mutex
	keys     *jose.JSONWebKeySet
	proofs   map[string]bool // DPoP proof jti seen
	accepted []rsRequest
	refused  []rsRequest
}

// rsRequest is one MCP request as the resource server judged it.
type rsRequest struct {
	Method string // the JSON-RPC method, or the HTTP method for a bodiless request
	Tool   string
	Status int    // 0 when accepted
	Reason string // why refused
	Scope  string // the token's
	JTI    string
	DPoP   bool
}

func (r rsRequest) String() string {
	s := r.Method
	if r.Tool != "" {
		s += " " + r.Tool
	}
	if r.Status != 0 {
		s += fmt.Sprintf(" refused %d: %s", r.Status, r.Reason)
	}
	return s
}

// startMCPResource starts the resource server; its issuer is set by
// trust before the first request that needs it.
func startMCPResource(t *testing.T) *mcpResource {
	t.Helper()
	ln := listen(t)
	base := "http://" + ln.Addr().String()
	r := &mcpResource{URL: base + "/mcp", PRM: base + "/.well-known/oauth-protected-resource/mcp", proofs: map[string]bool{}}

	srv := mcp.NewServer(&mcp.Implementation{Name: "tako-strict-resource", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "read_note", Description: "Reads the note (mcp:read)."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "note: hello from the strict server"}}}, nil, nil
		})
	type writeArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "write_note", Description: "Writes the note (mcp:write)."},
		func(_ context.Context, _ *mcp.CallToolRequest, a writeArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written: " + a.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)

	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/mcp", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               r.URL,
			AuthorizationServers:   []string{r.issuer},
			ScopesSupported:        []string{scopeRead, scopeWrite},
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "tako strict MCP server",
		}).ServeHTTP(w, req)
	}))
	mux.Handle("/mcp", r.guard(h))
	serve(t, ln, mux)
	return r
}

// trust sets the authorization server whose tokens the server accepts.
func (r *mcpResource) trust(t *testing.T, ctx context.Context, issuer string) {
	t.Helper()
	var md struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if status := getJSON(t, ctx, issuer+"/.well-known/oauth-authorization-server", &md); status != http.StatusOK || md.JWKSURI == "" {
		t.Fatalf("authorization server metadata: status %d, jwks_uri %q", status, md.JWKSURI)
	}
	r.mu.Lock()
	r.issuer, r.jwksURI = md.Issuer, md.JWKSURI
	r.mu.Unlock()
}

// Accepted and Refused return the requests judged so far.
func (r *mcpResource) Accepted() []rsRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.accepted)
}

func (r *mcpResource) Refused() []rsRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.refused)
}

// guard is the bearer check in front of the MCP handler.
func (r *mcpResource) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := rsRequest{Method: req.Method}
		if req.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
				rec.Method, rec.Tool = msg.Method, msg.Params.Name
			}
		}
		need := []string{scopeRead}
		if rec.Method == "tools/call" && rec.Tool == "write_note" {
			need = append(need, scopeWrite)
		}
		refuse := func(status int, errCode, desc string) {
			rec.Status, rec.Reason = status, desc
			r.mu.Lock()
			r.refused = append(r.refused, rec)
			r.mu.Unlock()
			params := []string{}
			if errCode != "" {
				params = append(params, fmt.Sprintf("error=%q", errCode), fmt.Sprintf("error_description=%q", desc))
			}
			params = append(params, fmt.Sprintf("scope=%q", strings.Join(need, " ")), fmt.Sprintf("resource_metadata=%q", r.PRM))
			w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
			http.Error(w, desc, status)
		}

		scheme, token, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		if token == "" {
			refuse(http.StatusUnauthorized, "", "no access token")
			return
		}
		claims, err := r.verify(req.Context(), token)
		if err != nil {
			refuse(http.StatusUnauthorized, "invalid_token", err.Error())
			return
		}
		rec.Scope, rec.JTI = claims.Scope, claims.JTI
		switch {
		case strings.EqualFold(scheme, "DPoP") && claims.Cnf.JKT != "":
			if err := r.checkProof(req, token, claims.Cnf.JKT); err != nil {
				refuse(http.StatusUnauthorized, "invalid_token", "DPoP proof: "+err.Error())
				return
			}
			rec.DPoP = true
		case strings.EqualFold(scheme, "Bearer") && claims.Cnf.JKT == "":
		case claims.Cnf.JKT != "":
			refuse(http.StatusUnauthorized, "invalid_token", "the token is DPoP-bound: send it with the DPoP scheme and a proof")
			return
		default:
			refuse(http.StatusUnauthorized, "invalid_token", "unsupported authorization scheme "+scheme)
			return
		}
		have := strings.Fields(claims.Scope)
		for _, s := range need {
			if !slices.Contains(have, s) {
				refuse(http.StatusForbidden, "insufficient_scope", fmt.Sprintf("%s needs %s; the token has %q", rec.String(), strings.Join(need, " "), claims.Scope))
				return
			}
		}
		r.mu.Lock()
		r.accepted = append(r.accepted, rec)
		r.mu.Unlock()
		next.ServeHTTP(w, req)
	})
}

// accessClaims are the RFC 9068 claims the resource server reads.
type accessClaims struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	Audience audience `json:"aud"`
	Expiry   int64    `json:"exp"`
	IssuedAt int64    `json:"iat"`
	JTI      string   `json:"jti"`
	ClientID string   `json:"client_id"`
	Scope    string   `json:"scope"`
	Cnf      struct {
		JKT string `json:"jkt"`
	} `json:"cnf"`
}

// audience is aud, a string or an array of them.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*a = many
	return nil
}

// verify checks an access token and returns its claims.
func (r *mcpResource) verify(ctx context.Context, token string) (*accessClaims, error) {
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		return nil, errors.New("not a signed JWT")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "at+jwt" && typ != "application/at+jwt" {
		return nil, fmt.Errorf("token type %q, not at+jwt", typ)
	}
	key, err := r.key(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, errors.New("bad signature")
	}
	var c accessClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("claims: %v", err)
	}
	r.mu.Lock()
	issuer := r.issuer
	r.mu.Unlock()
	switch {
	case c.Issuer != issuer:
		return nil, fmt.Errorf("issuer %q, not %q", c.Issuer, issuer)
	case !slices.Contains(c.Audience, r.URL):
		return nil, fmt.Errorf("audience %q does not name %s", []string(c.Audience), r.URL)
	case c.Expiry == 0:
		return nil, errors.New("no expiry")
	case !time.Now().Before(time.Unix(c.Expiry, 0)):
		return nil, fmt.Errorf("expired %s ago", time.Since(time.Unix(c.Expiry, 0)).Round(time.Second))
	}
	return &c, nil
}

// key returns the server's signing key kid, fetching the key set again
// when it does not have that key.
func (r *mcpResource) key(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	r.mu.Lock()
	keys, uri := r.keys, r.jwksURI
	r.mu.Unlock()
	if keys != nil {
		if k := keys.Key(kid); len(k) == 1 {
			return &k[0], nil
		}
	}
	if uri == "" {
		return nil, errors.New("no authorization server is trusted yet")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the keys: %v", err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("the keys: %v", err)
	}
	r.mu.Lock()
	r.keys = &set
	r.mu.Unlock()
	if k := set.Key(kid); len(k) == 1 {
		return &k[0], nil
	}
	return nil, fmt.Errorf("no key %q at the authorization server", kid)
}

// checkProof verifies the request's DPoP proof (RFC 9449 §4.3) for an
// access token bound to the key thumbprint jkt.
func (r *mcpResource) checkProof(req *http.Request, token, jkt string) error {
	proofs := req.Header.Values("DPoP")
	if len(proofs) != 1 {
		return fmt.Errorf("%d DPoP headers, want 1", len(proofs))
	}
	jws, err := jose.ParseSignedCompact(proofs[0], []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA, jose.RS256, jose.PS256})
	if err != nil {
		return errors.New("not a signed JWT")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return fmt.Errorf("type %q, not dpop+jwt", typ)
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return errors.New("no public jwk in the header")
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return errors.New("bad signature")
	}
	var c struct {
		JTI string `json:"jti"`
		HTM string `json:"htm"`
		HTU string `json:"htu"`
		IAT int64  `json:"iat"`
		ATH string `json:"ath"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return err
	}
	thumb, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return err
	}
	ath := sha256.Sum256([]byte(token))
	skew := time.Since(time.Unix(c.IAT, 0))
	switch {
	case base64.RawURLEncoding.EncodeToString(thumb) != jkt:
		return errors.New("the proof's key is not the token's")
	case c.HTM != req.Method:
		return fmt.Errorf("htm %q, not %s", c.HTM, req.Method)
	case c.HTU != "http://"+req.Host+req.URL.Path:
		return fmt.Errorf("htu %q, not this URL", c.HTU)
	case skew > time.Minute || skew < -time.Minute:
		return fmt.Errorf("iat %s off", skew.Round(time.Second))
	case c.ATH != base64.RawURLEncoding.EncodeToString(ath[:]):
		return errors.New("ath is not this token's hash")
	case c.JTI == "":
		return errors.New("no jti")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proofs[c.JTI] {
		return errors.New("proof replayed")
	}
	r.proofs[c.JTI] = true
	return nil
}
