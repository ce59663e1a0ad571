package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// DefaultMaxDocumentSize bounds every metadata and registration document
// read, when Config.MaxDocumentSize is zero.
const DefaultMaxDocumentSize = 256 << 10

// maxRedirects bounds same-origin redirects followed for one metadata
// fetch.
const maxRedirects = 5

// ResourceMetadata is OAuth 2.0 Protected Resource Metadata (RFC 9728 §2),
// the fields a client uses.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
}

// ServerMetadata is OAuth 2.0 Authorization Server Metadata (RFC 8414 §2)
// or an OpenID Provider configuration, the fields a client uses.
type ServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                              string   `json:"token_endpoint,omitempty"`
	RegistrationEndpoint                       string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                            []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported                     []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported,omitempty"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
	DPoPSigningAlgValuesSupported              []string `json:"dpop_signing_alg_values_supported,omitempty"`
	RevocationEndpoint                         string   `json:"revocation_endpoint,omitempty"`

	// legacy marks endpoints made up from the 2025-03-26 defaults
	// (<origin>/authorize, /token, /register) when no metadata exists.
	legacy bool
}

// fetcher makes the client's metadata requests: each bounded by the
// caller's context and by a size limit, following redirects only within
// the same origin, and only over TLS or to loopback.
type fetcher struct {
	client  *http.Client
	maxSize int64
	// left, when not nil, is how many more documents may be fetched
	// (budgeted): a server's answers choose the URLs, so they must not
	// choose how many.
	left *int
}

// budgeted returns a fetcher like f that fetches at most n documents.
func (f *fetcher) budgeted(n int) *fetcher {
	g := *f
	g.left = &n
	return &g
}

func newFetcher(base *http.Client, maxSize int) *fetcher {
	if base == nil {
		base = http.DefaultClient
	}
	c := *base
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("auth: more than %d redirects", maxRedirects)
		}
		// Plain http first: a redirect that would carry a code or a
		// secret in clear says so, not merely that it leaves the origin.
		if err := checkEndpoint(req.URL.String(), "redirect target"); err != nil {
			return err
		}
		if !sameOrigin(req.URL, via[0].URL) {
			return fmt.Errorf("%w: %s to %s", ErrUnsafeRedirect, redactURL(via[0].URL.String()), redactURL(req.URL.String()))
		}
		return nil
	}
	if maxSize <= 0 {
		maxSize = DefaultMaxDocumentSize
	}
	return &fetcher{client: &c, maxSize: int64(maxSize)}
}

// getJSON GETs u and decodes a 200 JSON answer into v. found is false for
// a 4xx answer (the document is not there; try the next place), and err
// is set for anything else that went wrong.
func (f *fetcher) getJSON(ctx context.Context, u string, hdr http.Header, v any) (found bool, err error) {
	if err := checkEndpoint(u, "metadata URL"); err != nil {
		return false, err
	}
	if f.left != nil {
		if *f.left <= 0 {
			return false, fmt.Errorf("%w: more documents to fetch than one challenge may ask for", ErrNoMetadata)
		}
		*f.left--
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, fmt.Errorf("auth: metadata URL: %w", err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrUnsafeRedirect) {
			return false, err
		}
		return false, fmt.Errorf("auth: fetch %s: %w", redactURL(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("auth: fetch %s: HTTP %d", redactURL(u), resp.StatusCode)
	}
	body, err := readLimited(resp.Body, f.maxSize)
	if err != nil {
		return false, fmt.Errorf("auth: fetch %s: %w", redactURL(u), err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, &sentinelError{msg: fmt.Sprintf("auth: %s is not a JSON metadata document (%v)", redactURL(u), err), is: ErrNoMetadata}
	}
	return true, nil
}

// readLimited reads all of r, failing with ErrDocumentTooLarge past max.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrDocumentTooLarge, max)
	}
	return b, nil
}

// discoverResource finds the protected resource metadata of the MCP server
// at server (checklist §5.2): the challenge's resource_metadata URL when
// given, then the path-aware well-known URL, then the root one. It checks
// that the document's resource is the server (ErrResourceMismatch
// otherwise). It returns nil, nil when there is no metadata at all (a
// 2025-03-26 server).
func (f *fetcher) discoverResource(ctx context.Context, server *url.URL, challengeURL string) (*ResourceMetadata, error) {
	var candidates []string
	if challengeURL != "" {
		cu, err := url.Parse(challengeURL)
		if err != nil || (cu.Scheme != "https" && cu.Scheme != "http") || cu.Host == "" {
			return nil, fmt.Errorf("%w: resource_metadata %q is not an http(s) URL", ErrMalformedChallenge, challengeURL)
		}
		if cu.Scheme == "http" && server.Scheme == "https" {
			return nil, fmt.Errorf("%w: resource_metadata downgrades to http", ErrUnsafeRedirect)
		}
		candidates = append(candidates, cu.String())
	}
	origin := server.Scheme + "://" + server.Host
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	for _, c := range candidates {
		var md ResourceMetadata
		found, err := f.getJSON(ctx, c, nil, &md)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if err := checkResource(server, md.Resource); err != nil {
			return nil, err
		}
		return &md, nil
	}
	return nil, nil
}

// checkResource checks that the metadata's resource identifier covers the
// server URL: the same origin, and a path that is the server's or a parent
// of it on a segment boundary (RFC 9728 §3.3, §7.3).
func checkResource(server *url.URL, resource string) error {
	if resource == "" {
		return fmt.Errorf("%w: the metadata has no resource", ErrResourceMismatch)
	}
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" {
		return fmt.Errorf("%w: resource %q is not a valid URI", ErrResourceMismatch, resource)
	}
	if !sameOrigin(r, server) {
		return fmt.Errorf("%w: %q for server %s", ErrResourceMismatch, resource, server.Redacted())
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(server.EscapedPath(), "/")
	if rp != "" && sp != rp && !strings.HasPrefix(sp, rp+"/") {
		return fmt.Errorf("%w: %q for server %s", ErrResourceMismatch, resource, server.Redacted())
	}
	return nil
}

// serverMetadataURLs lists where the metadata of issuer is looked for, in
// order (checklist §5.3): RFC 8414 with the path inserted, OpenID
// Connect Discovery with the path inserted, then appended; for an issuer
// without a path, RFC 8414 then OpenID. The root is never probed for an
// issuer with a path.
func serverMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// discoverServer fetches the metadata of the authorization server issuer
// and checks its issuer is identical to the one the URL was built from
// (ErrIssuerMismatch otherwise). hdr is sent with each request.
func (f *fetcher) discoverServer(ctx context.Context, issuer string, hdr http.Header) (*ServerMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil || (iu.Scheme != "https" && iu.Scheme != "http") || iu.Host == "" || iu.RawQuery != "" || iu.Fragment != "" {
		return nil, fmt.Errorf("%w: authorization server %q is not a valid issuer URL", ErrNoMetadata, issuer)
	}
	var mismatch error
	for _, c := range serverMetadataURLs(iu) {
		var md ServerMetadata
		found, err := f.getJSON(ctx, c, hdr, &md)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if md.Issuer != issuer {
			// Discard it (RFC 8414 §3.3) and look further; say why if
			// nothing else turns up.
			mismatch = fmt.Errorf("%w: metadata at %s names issuer %q, not %q", ErrIssuerMismatch, c, md.Issuer, issuer)
			continue
		}
		if err := md.validate(); err != nil {
			return nil, err
		}
		return &md, nil
	}
	if mismatch != nil {
		return nil, mismatch
	}
	return nil, fmt.Errorf("%w: no authorization server metadata for %s", ErrNoMetadata, issuer)
}

// legacyServer is the 2025-03-26 discovery for a server without protected
// resource metadata (checklist §5.14): the authorization base URL is the
// MCP URL without its path; its RFC 8414 metadata is fetched with the
// MCP-Protocol-Version header, and when there is none the default
// endpoints are used.
func (f *fetcher) legacyServer(ctx context.Context, server *url.URL, protocolVersion string) (*ServerMetadata, error) {
	origin := server.Scheme + "://" + server.Host
	hdr := http.Header{}
	if protocolVersion != "" {
		hdr.Set("Mcp-Protocol-Version", protocolVersion)
	}
	var md ServerMetadata
	found, err := f.getJSON(ctx, origin+"/.well-known/oauth-authorization-server", hdr, &md)
	if err != nil {
		return nil, err
	}
	if found {
		// The 2025-03-26 revision has no issuer rule; the metadata's
		// issuer must at least be on the origin it was fetched from.
		if iu, err := url.Parse(md.Issuer); err != nil || !sameOrigin(iu, server) {
			return nil, fmt.Errorf("%w: metadata at %s names issuer %q", ErrIssuerMismatch, origin, md.Issuer)
		}
		if err := md.validate(); err != nil {
			return nil, err
		}
		return &md, nil
	}
	return &ServerMetadata{
		AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint:         origin + "/token",
		RegistrationEndpoint:  origin + "/register",
		legacy:                true,
	}, nil
}

// validate checks the endpoints a client will send secrets to are https
// URLs (or http to loopback).
func (md *ServerMetadata) validate() error {
	for _, e := range []string{md.AuthorizationEndpoint, md.TokenEndpoint, md.RegistrationEndpoint, md.RevocationEndpoint} {
		if e == "" {
			continue
		}
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%w: endpoint %q in the metadata of %s is not an http(s) URL", ErrNoMetadata, truncateText(e, 200), md.Issuer)
		}
		if err := checkEndpoint(e, "endpoint in the metadata of "+md.Issuer); err != nil {
			return err
		}
	}
	if md.TokenEndpoint == "" {
		return fmt.Errorf("%w: the metadata of %s has no token endpoint", ErrNoMetadata, md.Issuer)
	}
	return nil
}

// checkEndpoint refuses a URL that a code, token or secret would go to in
// clear: plain http to a host that is not loopback (OAuth 2.1 §1.5). A
// loopback host here is localhost or a loopback IP, not a name under
// .localhost: a browser keeps those on this machine, but Go's resolver
// may ask DNS for one, and whoever answers gets the code (RFC 8252 §8.3
// prefers IP literals for the same reason).
func checkEndpoint(raw, what string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: the %s is not a URL", ErrNoMetadata, what)
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "wss":
		return nil
	case "http", "ws":
		if isLoopbackEndpoint(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%w: the %s %s", ErrInsecureEndpoint, what, redactURL(raw))
	}
	return fmt.Errorf("%w: the %s %s is not an http(s) URL", ErrInsecureEndpoint, what, redactURL(raw))
}

// isLoopbackEndpoint reports whether host names this machine without a
// DNS query: localhost (the hosts file's) or a loopback IP.
func isLoopbackEndpoint(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	ip := net.ParseIP(h)
	return h == "localhost" || ip != nil && ip.IsLoopback()
}

// isLoopbackHost reports whether host names this machine for a browser:
// localhost, a name under .localhost, or a loopback IP.
func isLoopbackHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

func hostPort(u *url.URL) string {
	h, p := u.Hostname(), u.Port()
	if p == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			p = "443"
		case "http":
			p = "80"
		}
	}
	return strings.ToLower(h) + ":" + p
}

// redactURL drops the query of a URL for error messages: a query can hold
// a code or a state.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(bad URL)"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// CanonicalResource returns the canonical URI of an MCP server (checklist
// §5.8): scheme and host lower-cased, no fragment, no query, no trailing
// slash on the path (a bare origin keeps none).
func CanonicalResource(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("auth: %q is not an absolute URL", server)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment, u.RawQuery, u.User = "", "", "", nil
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u.String(), nil
}

// sentinelError is an error with words of its own that is one of the
// package's sentinels for errors.Is, without repeating the sentinel's.
type sentinelError struct {
	msg string
	is  error
}

func (e *sentinelError) Error() string { return e.msg }
func (e *sentinelError) Unwrap() error { return e.is }
