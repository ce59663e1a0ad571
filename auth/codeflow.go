package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// codeFlow is the authorization code grant with PKCE (checklist §5.4,
// §5.8–§5.10).
func (c *Client) codeFlow(ctx context.Context, t *target, rec *Record, scopes []string) (*Token, error) {
	md := t.md
	var needed error = &LoginNeededError{Resource: c.canonical, Scopes: scopes, StepUp: IsStepUp(ctx)}
	if md.legacy {
		// Nothing says the server speaks OAuth: it refused the request
		// and publishes no metadata (the 2025-03-26 defaults are a guess).
		// It may want a credential of its own rather than a login.
		needed = fmt.Errorf("%w: the server refused the request and publishes no OAuth metadata (it may want a token of its own)", ErrNoMetadata)
	}
	if c.cfg.User == nil {
		return nil, needed
	}
	if md.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("%w: %s has no authorization endpoint", ErrNoMetadata, t.issuer)
	}
	for _, e := range []struct{ u, what string }{{md.AuthorizationEndpoint, "authorization endpoint"}, {md.TokenEndpoint, "token endpoint"}} {
		if err := checkEndpoint(e.u, e.what); err != nil {
			return nil, err // before any browser is opened
		}
	}
	if !md.legacy && !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("%w: %s", ErrPKCEUnsupported, t.issuer)
	}
	// A refresh token, so the user is not asked again within the hour:
	// from a server that follows OpenID Connect that takes offline_access,
	// which it drops unless the request asks for consent (Core §11).
	offline := slices.Contains(scopes, "offline_access")
	if !offline && slices.Contains(md.ScopesSupported, "offline_access") && c.refreshAllowed(md) {
		scopes = append(slices.Clip(scopes), "offline_access")
		offline = true
	}
	rd, err := c.startUserStep(ctx, rec)
	if errors.Is(err, ErrNoUserStep) {
		return nil, needed
	}
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	redirect := rd.URL()
	// Registered for every scope the resource and its server offer (a
	// strict server grants nothing outside the registration), so that a
	// later step-up is not refused for the registration's sake and does
	// not register again; for what was asked alone when that would be
	// more than maxScopes.
	regScopes := scopes
	if t.prm != nil {
		regScopes = union(regScopes, t.prm.ScopesSupported)
	}
	if all := union(regScopes, md.ScopesSupported); len(all) <= maxScopes {
		regScopes = all
	}
	if err := c.ensureClient(ctx, t, rec, redirect, scopes, regScopes); err != nil {
		return nil, err
	}
	oc := &oauth2.Config{
		ClientID:    rec.Client.ClientID,
		Endpoint:    oauth2.Endpoint{AuthURL: md.AuthorizationEndpoint, TokenURL: md.TokenEndpoint},
		RedirectURL: redirect,
		Scopes:      scopes,
	}
	verifier := oauth2.GenerateVerifier()
	state := randomString(24)
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", t.resource)}
	if offline {
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	q, err := rd.Wait(ctx, oc.AuthCodeURL(state, opts...))
	if err != nil {
		return nil, err
	}
	tok, err := c.redeemCode(ctx, t, rec, q, state, redirect, verifier)
	if f, ok := rd.(finisher); ok {
		f.finish(err)
	}
	if err != nil {
		return nil, err
	}
	if offline && tok.RefreshToken == "" {
		c.log.Warn("auth: the authorization server granted no refresh token: the user will be asked to log in again when the token expires",
			"issuer", t.issuer, "expiry", tok.Expiry)
	}
	return tok, nil
}

// redeemCode checks the authorization response and exchanges its code.
func (c *Client) redeemCode(ctx context.Context, t *target, rec *Record, q url.Values, state, redirect, verifier string) (*Token, error) {
	md := t.md
	// RFC 9207 before anything else in the response is believed,
	// error responses included (checklist §5.9).
	iss, hasIss := q.Get("iss"), q.Has("iss")
	switch {
	case md.AuthorizationResponseIssParameterSupported && !hasIss:
		return nil, fmt.Errorf("%w (%s)", ErrMissingIssuer, t.issuer)
	case hasIss && !md.legacy && iss != md.Issuer:
		return nil, fmt.Errorf("%w: the authorization response comes from %q, not %q", ErrIssuerMismatch, truncateText(iss, 200), md.Issuer)
	}
	if q.Get("state") != state {
		return nil, ErrStateMismatch
	}
	if e := q.Get("error"); e != "" {
		return nil, &ProtocolError{Endpoint: "authorization", Code: truncateText(e, 80), Description: q.Get("error_description")}
	}
	code := q.Get("code")
	if code == "" {
		return nil, &ProtocolError{Endpoint: "authorization", Description: "the response has no code"}
	}
	return c.requestToken(ctx, tokenParams{md: md, issuer: t.issuer, client: rec.Client, form: url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirect},
		"code_verifier": {verifier},
		"resource":      {t.resource},
	}})
}

// finisher is a Redirect that shows the user the outcome (Loopback's
// callback page waits for it, so that it says the truth).
type finisher interface{ finish(err error) }

// portStarter is a UserStep that can try a given port first (Loopback): a
// registration is then reused with the exact redirect URI it has.
type portStarter interface {
	startOn(ctx context.Context, port string) (Redirect, error)
}

// startUserStep starts the user step, on the port of the stored
// registration's loopback redirect URI when it can.
func (c *Client) startUserStep(ctx context.Context, rec *Record) (Redirect, error) {
	if ps, ok := c.cfg.User.(portStarter); ok && rec.Client.Registered {
		for _, r := range rec.Client.RedirectURIs {
			if u, err := url.Parse(r); err == nil && isLoopbackRedirect(u) && u.Port() != "" {
				return ps.startOn(ctx, u.Port())
			}
		}
	}
	return c.cfg.User.Start(ctx)
}

// ensureClient gives rec a client id for t's server, in the priority of
// checklist §5.5: pre-registered, a client ID metadata document, the one
// registered before (for this server, a matching redirect URI and the
// scopes asked for), dynamic registration with regScopes.
func (c *Client) ensureClient(ctx context.Context, t *target, rec *Record, redirect string, scopes, regScopes []string) error {
	if s := c.cfg.Client; s != nil && s.ID != "" && (s.Issuer == "" || s.Issuer == t.issuer) {
		rec.Client = ClientInfo{ClientID: s.ID, ClientSecret: s.Secret, AuthMethod: c.staticMethod(s, t.md)}
		return nil
	}
	if c.cfg.ClientMetadataURL != "" && t.md.ClientIDMetadataDocumentSupported {
		rec.Client = ClientInfo{ClientID: c.cfg.ClientMetadataURL, AuthMethod: methodNone, RedirectURIs: []string{redirect}}
		return nil
	}
	if rec.Client.ClientID != "" && rec.Client.Registered && redirectRegistered(rec.Client.RedirectURIs, redirect) && scopesCover(rec.Client.Scope, scopes) {
		return nil
	}
	if t.md.RegistrationEndpoint == "" {
		return fmt.Errorf("%w: %s has no registration endpoint and no client is configured for it", ErrNoRegistration, t.issuer)
	}
	ci, err := c.register(ctx, t.md, redirect, regScopes)
	if err != nil {
		return err
	}
	rec.Client = *ci
	return nil
}

// redirectRegistered reports whether redirect may be used with a client
// registered for uris: one of them exactly, or, for a native client's
// loopback redirect, one that differs only in its port (RFC 8252 §7.3:
// the server must allow any port, since a free one is picked at each run).
func redirectRegistered(uris []string, redirect string) bool {
	if slices.Contains(uris, redirect) {
		return true
	}
	ru, err := url.Parse(redirect)
	if err != nil || !isLoopbackRedirect(ru) {
		return false
	}
	for _, s := range uris {
		u, err := url.Parse(s)
		if err == nil && isLoopbackRedirect(u) && u.Hostname() == ru.Hostname() && u.EscapedPath() == ru.EscapedPath() && u.RawQuery == ru.RawQuery {
			return true
		}
	}
	return false
}

// isLoopbackRedirect: http to a loopback IP literal (RFC 8252 §7.3).
func isLoopbackRedirect(u *url.URL) bool {
	ip := net.ParseIP(u.Hostname())
	return u.Scheme == "http" && ip != nil && ip.IsLoopback()
}

// scopesCover reports whether a registration for the space-separated
// registered scopes allows asking for scopes. A registration that recorded
// none (made before registrations kept their scope) covers none.
func scopesCover(registered string, scopes []string) bool {
	have := strings.Fields(registered)
	for _, s := range scopes {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

// registration is an RFC 7591 client registration request.
type registration struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type"`
	Scope                   string   `json:"scope,omitempty"`
}

// register registers a client dynamically (RFC 7591).
func (c *Client) register(ctx context.Context, md *ServerMetadata, redirect string, scopes []string) (*ClientInfo, error) {
	if err := checkEndpoint(md.RegistrationEndpoint, "registration endpoint"); err != nil {
		return nil, err
	}
	method := methodNone
	if sup := md.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !slices.Contains(sup, methodNone) {
		switch {
		case slices.Contains(sup, methodBasic):
			method = methodBasic
		case slices.Contains(sup, methodPost):
			method = methodPost
		}
	}
	grants := []string{"authorization_code"}
	if c.refreshAllowed(md) {
		grants = append(grants, "refresh_token")
	}
	scope := strings.Join(scopes, " ")
	body, _ := json.Marshal(registration{
		ClientName:              c.cfg.ClientName,
		RedirectURIs:            []string{redirect},
		GrantTypes:              grants,
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: method,
		ApplicationType:         c.cfg.ApplicationType,
		Scope:                   scope,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, md.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("auth: registration: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: registration at %s: %w", redactURL(md.RegistrationEndpoint), err)
	}
	defer resp.Body.Close()
	b, err := readLimited(resp.Body, c.f.maxSize)
	if err != nil {
		return nil, fmt.Errorf("auth: registration: %w", err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, errorResponse("registration", resp, b)
	}
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
		Scope        string `json:"scope"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.ClientID == "" {
		return nil, &ProtocolError{Endpoint: "registration", Status: resp.StatusCode, Description: "the response has no client_id"}
	}
	ci := &ClientInfo{ClientID: out.ClientID, ClientSecret: Secret(out.ClientSecret), AuthMethod: out.AuthMethod,
		RedirectURIs: []string{redirect}, Registered: true, Scope: scope}
	if out.Scope != "" {
		ci.Scope = out.Scope
	}
	if ci.AuthMethod == "" {
		ci.AuthMethod = method
	}
	if ci.AuthMethod == methodNone {
		ci.ClientSecret = ""
	}
	return ci, nil
}
