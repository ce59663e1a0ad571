package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Token endpoint authentication methods.
const (
	methodBasic = "client_secret_basic"
	methodPost  = "client_secret_post"
	methodNone  = "none"
	methodJWT   = "private_key_jwt"
)

// target is what discovery found: the authorization server to use and the
// resource indicator to send.
type target struct {
	md       *ServerMetadata
	issuer   string // md.Issuer, or the token endpoint for a legacy server
	resource string // the resource parameter (RFC 8707)
	prm      *ResourceMetadata
}

// discover finds the authorization server for the challenge (checklist
// §5.2, §5.3, §5.14).
func (c *Client) discover(ctx context.Context, ch *ResourceChallenge) (*target, error) {
	prm, err := c.f.discoverResource(ctx, c.server, ch.ResourceMetadata)
	if err != nil {
		return nil, err
	}
	if prm == nil {
		if ch.ResourceMetadata != "" {
			return nil, fmt.Errorf("%w: resource metadata %s not found", ErrNoMetadata, redactURL(ch.ResourceMetadata))
		}
		md, err := c.f.legacyServer(ctx, c.server, c.cfg.LegacyProtocolVersion)
		if err != nil {
			return nil, err
		}
		t := &target{md: md, issuer: md.Issuer, resource: c.canonical}
		if md.legacy {
			t.issuer = md.TokenEndpoint
		}
		return t, nil
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("%w: the resource metadata lists no authorization server", ErrNoMetadata)
	}
	// The first listed server the client can use (checklist §5.2: the
	// client picks one).
	var firstErr error
	for _, as := range prm.AuthorizationServers {
		md, err := c.f.discoverServer(ctx, as, nil)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return &target{md: md, issuer: md.Issuer, resource: prm.Resource, prm: prm}, nil
	}
	return nil, firstErr
}

// authorize runs discovery and a grant, or a refresh when that is enough,
// and saves the result. Called with c.flow held.
func (c *Client) authorize(ctx context.Context, ch *ResourceChallenge, stepUp bool, refused string) error {
	t, err := c.discover(ctx, ch)
	if err != nil {
		return err
	}
	rec, _ := c.store.Load(ctx, c.canonical, t.issuer)
	if rec == nil {
		rec = &Record{Resource: c.canonical, Issuer: t.issuer}
	}

	var scopes []string
	switch {
	case c.cfg.Scopes != nil:
		scopes = c.cfg.Scopes
	case len(ch.Scope) > 0:
		scopes = ch.Scope
	case t.prm != nil && len(t.prm.ScopesSupported) > 0:
		scopes = t.prm.ScopesSupported
	}
	if stepUp {
		// The union of what was asked before and what the server asks
		// for now (SEP-2350).
		c.mu.Lock()
		prev := c.scopes
		c.mu.Unlock()
		if rec.Token != nil {
			prev = append(prev, strings.Fields(rec.Token.Scope)...)
		}
		scopes = union(prev, ch.Scope)
	}

	if !stepUp && rec.Token != nil && rec.Token.RefreshToken != "" && (refused == "" || refused == rec.Token.AccessToken.Reveal()) {
		if err := c.refresh(ctx, t, rec); err == nil {
			return nil
		} else {
			c.log.Debug("auth: refresh failed; authorizing again", "err", err)
		}
	}

	if !c.countAttempt(t.issuer + " " + strings.Join(sorted(scopes), " ")) {
		return fmt.Errorf("%w (%d within %s)", ErrStepUpLimit, c.cfg.MaxAttempts, c.cfg.AttemptWindow)
	}
	c.mu.Lock()
	c.scopes = scopes
	c.mu.Unlock()

	var tok *Token
	switch g := c.cfg.Grant.(type) {
	case nil, AuthorizationCode, *AuthorizationCode:
		tok, err = c.codeFlow(ctx, t, rec, scopes)
	case ClientCredentials, *ClientCredentials:
		tok, err = c.clientCredentials(ctx, t, rec, scopes)
	case JWTBearer:
		tok, err = c.jwtBearer(ctx, t, rec, scopes, g)
	case *JWTBearer:
		tok, err = c.jwtBearer(ctx, t, rec, scopes, *g)
	case EnterpriseManaged:
		tok, err = c.enterprise(ctx, t, rec, scopes, g)
	case *EnterpriseManaged:
		tok, err = c.enterprise(ctx, t, rec, scopes, *g)
	default:
		err = fmt.Errorf("auth: unknown grant %T", g)
	}
	if err != nil {
		return err
	}
	if tok.Scope == "" {
		tok.Scope = strings.Join(scopes, " ")
	}
	rec.Token = tok
	rec.Indicator = t.resource
	rec.Grant = grantName(c.cfg.Grant)
	return c.save(ctx, rec, t.md)
}

// codeFlow is the authorization code grant with PKCE (checklist §5.4,
// §5.8–§5.10).
func (c *Client) codeFlow(ctx context.Context, t *target, rec *Record, scopes []string) (*Token, error) {
	md := t.md
	if c.cfg.User == nil {
		return nil, ErrNoUserStep
	}
	if md.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("%w: %s has no authorization endpoint", ErrNoMetadata, t.issuer)
	}
	if !md.legacy && !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("%w: %s", ErrPKCEUnsupported, t.issuer)
	}
	rd, err := c.cfg.User.Start(ctx)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	redirect := rd.URL()
	if err := c.ensureClient(ctx, t, rec, redirect, scopes); err != nil {
		return nil, err
	}
	if slices.Contains(md.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") && c.refreshAllowed(md) {
		scopes = append(slices.Clip(scopes), "offline_access")
	}
	oc := c.oauthConfig(md, rec.Client, redirect, scopes)
	verifier := oauth2.GenerateVerifier()
	state := randomString(24)
	authURL := oc.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", t.resource))
	q, err := rd.Wait(ctx, authURL)
	if err != nil {
		return nil, err
	}
	// RFC 9207 before anything else in the response is believed,
	// error responses included (checklist §5.9).
	iss, hasIss := q.Get("iss"), q.Has("iss")
	switch {
	case md.AuthorizationResponseIssParameterSupported && !hasIss:
		return nil, fmt.Errorf("%w (%s)", ErrMissingIssuer, t.issuer)
	case hasIss && !md.legacy && iss != md.Issuer:
		return nil, fmt.Errorf("%w: the authorization response comes from %q, not %q", ErrIssuerMismatch, iss, md.Issuer)
	}
	if q.Get("state") != state {
		return nil, ErrStateMismatch
	}
	if e := q.Get("error"); e != "" {
		return nil, &ProtocolError{Endpoint: "authorization", Code: e, Description: q.Get("error_description")}
	}
	code := q.Get("code")
	if code == "" {
		return nil, &ProtocolError{Endpoint: "authorization", Description: "the response has no code"}
	}
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", t.resource)}
	extra, err := c.clientAuthParams(rec.Client, md, t.issuer)
	if err != nil {
		return nil, err
	}
	for k := range extra {
		opts = append(opts, oauth2.SetAuthURLParam(k, extra.Get(k)))
	}
	ot, err := oc.Exchange(c.tokenContext(ctx, md), code, opts...)
	if err != nil {
		return nil, tokenError(err)
	}
	return fromOAuth2(ot), nil
}

// refreshAllowed: refresh tokens only where the server does not rule them
// out (checklist §5.7, §5.12).
func (c *Client) refreshAllowed(md *ServerMetadata) bool {
	return len(md.GrantTypesSupported) == 0 || slices.Contains(md.GrantTypesSupported, "refresh_token")
}

// oauthConfig is the x/oauth2 view of a client at md.
func (c *Client) oauthConfig(md *ServerMetadata, ci ClientInfo, redirect string, scopes []string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     ci.ClientID,
		ClientSecret: ci.ClientSecret.Reveal(),
		Endpoint: oauth2.Endpoint{
			AuthURL:   md.AuthorizationEndpoint,
			TokenURL:  md.TokenEndpoint,
			AuthStyle: authStyle(ci.AuthMethod),
		},
		RedirectURL: redirect,
		Scopes:      scopes,
	}
}

// authStyle maps a token endpoint authentication method to x/oauth2's.
func authStyle(method string) oauth2.AuthStyle {
	if method == methodBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// clientAuthParams are the body parameters of private_key_jwt.
func (c *Client) clientAuthParams(ci ClientInfo, md *ServerMetadata, issuer string) (url.Values, error) {
	if ci.AuthMethod != methodJWT {
		return nil, nil
	}
	s := c.cfg.Client
	if s == nil || s.PrivateKey == nil {
		return nil, errors.New("auth: private_key_jwt without a private key")
	}
	aud := md.Issuer
	if aud == "" {
		aud = issuer
	}
	a, err := clientAssertion(s.PrivateKey, s.SigningAlg, ci.ClientID, aud)
	if err != nil {
		return nil, err
	}
	return url.Values{"client_assertion_type": {clientAssertionType}, "client_assertion": {a}}, nil
}

// tokenContext carries the HTTP client x/oauth2 uses for token requests:
// the Config's, with DPoP proofs added when the server takes them.
func (c *Client) tokenContext(ctx context.Context, md *ServerMetadata) context.Context {
	hc := c.f.client
	if c.dp != nil && c.dp.supported(md) {
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		v := *hc
		v.Transport = &tokenTransport{d: c.dp, base: base}
		hc = &v
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// tokenRequest sends a token request x/oauth2 has no call for, through
// its clientcredentials package: params may set grant_type.
func (c *Client) tokenRequest(ctx context.Context, md *ServerMetadata, issuer string, ci ClientInfo, params url.Values, scopes []string) (*Token, error) {
	params = cloneValues(params)
	extra, err := c.clientAuthParams(ci, md, issuer)
	if err != nil {
		return nil, err
	}
	for k, v := range extra {
		params[k] = v
	}
	cc := clientcredentials.Config{
		ClientID:       ci.ClientID,
		ClientSecret:   ci.ClientSecret.Reveal(),
		TokenURL:       md.TokenEndpoint,
		Scopes:         scopes,
		EndpointParams: params,
		AuthStyle:      authStyle(ci.AuthMethod),
	}
	ot, err := cc.Token(c.tokenContext(ctx, md))
	if err != nil {
		return nil, tokenError(err)
	}
	return fromOAuth2(ot), nil
}

// refresh redeems rec's refresh token at t's server (with the resource
// indicator) and saves the result.
func (c *Client) refresh(ctx context.Context, t *target, rec *Record) error {
	params := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {rec.Token.RefreshToken.Reveal()},
		"resource":      {t.resource},
	}
	tok, err := c.tokenRequest(ctx, t.md, t.issuer, rec.Client, params, nil)
	if err != nil {
		return err
	}
	if tok.Scope == "" {
		tok.Scope = rec.Token.Scope
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = rec.Token.RefreshToken
	}
	next := cloneRecord(rec)
	next.Token = tok
	next.Indicator = t.resource
	return c.save(ctx, next, t.md)
}

// refreshCurrent refreshes the record in use before it expires, finding
// its server's metadata when it came from the store. Called with c.flow
// held.
func (c *Client) refreshCurrent(ctx context.Context, rec *Record) error {
	c.mu.Lock()
	cur, md := c.rec, c.md
	c.mu.Unlock()
	if cur != rec {
		return nil // someone else refreshed meanwhile
	}
	if md == nil {
		var err error
		if md, err = c.f.discoverServer(ctx, rec.Issuer, nil); err != nil {
			return err
		}
	}
	ind := rec.Indicator
	if ind == "" {
		ind = c.canonical
	}
	return c.refresh(ctx, &target{md: md, issuer: rec.Issuer, resource: ind}, rec)
}

// clientCredentials is the client credentials grant.
func (c *Client) clientCredentials(ctx context.Context, t *target, rec *Record, scopes []string) (*Token, error) {
	ci, err := c.staticClient(t)
	if err != nil {
		return nil, err
	}
	rec.Client = ci
	return c.tokenRequest(ctx, t.md, t.issuer, ci, url.Values{"resource": {t.resource}}, scopes)
}

// jwtBearer is the RFC 7523 JWT bearer grant with a workload identity.
func (c *Client) jwtBearer(ctx context.Context, t *target, rec *Record, scopes []string, g JWTBearer) (*Token, error) {
	if g.Assertion == nil {
		return nil, errors.New("auth: JWTBearer has no Assertion")
	}
	a, err := g.Assertion(ctx, t.issuer)
	if err != nil {
		return nil, fmt.Errorf("auth: workload assertion: %w", err)
	}
	ci := ClientInfo{AuthMethod: methodNone}
	if s := c.cfg.Client; s != nil {
		if ci, err = c.staticClient(t); err != nil {
			return nil, err
		}
	}
	rec.Client = ci
	params := url.Values{"grant_type": {grantJWTBearer}, "assertion": {a}, "resource": {t.resource}}
	return c.tokenRequest(ctx, t.md, t.issuer, ci, params, scopes)
}

// enterprise is the enterprise-managed flow: token exchange at the
// identity provider for an ID-JAG, then the JWT bearer grant with it.
func (c *Client) enterprise(ctx context.Context, t *target, rec *Record, scopes []string, g EnterpriseManaged) (*Token, error) {
	if g.IDToken == nil || g.IDPTokenEndpoint == "" {
		return nil, errors.New("auth: EnterpriseManaged needs IDToken and IDPTokenEndpoint")
	}
	idt, err := g.IDToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: identity token: %w", err)
	}
	idp := &ServerMetadata{TokenEndpoint: g.IDPTokenEndpoint}
	idpClient := ClientInfo{ClientID: g.IDPClientID, ClientSecret: g.IDPClientSecret, AuthMethod: methodPost}
	if g.IDPClientSecret == "" {
		idpClient.AuthMethod = methodNone
	}
	ex := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"subject_token":        {idt},
		"subject_token_type":   {tokenTypeIDToken},
		"audience":             {t.issuer},
		"resource":             {t.resource},
	}
	jag, err := c.tokenRequest(ctx, idp, g.IDPTokenEndpoint, idpClient, ex, scopes)
	if err != nil {
		return nil, fmt.Errorf("auth: token exchange at the identity provider: %w", err)
	}
	ci, err := c.staticClient(t)
	if err != nil {
		return nil, err
	}
	rec.Client = ci
	params := url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag.AccessToken.Reveal()}, "resource": {t.resource}}
	return c.tokenRequest(ctx, t.md, t.issuer, ci, params, scopes)
}

// staticClient is Config.Client for t's server, with its authentication
// method chosen.
func (c *Client) staticClient(t *target) (ClientInfo, error) {
	s := c.cfg.Client
	if s == nil || s.ID == "" {
		return ClientInfo{}, fmt.Errorf("%w: this grant needs a pre-registered client", ErrNoRegistration)
	}
	if s.Issuer != "" && s.Issuer != t.issuer {
		return ClientInfo{}, fmt.Errorf("%w: the pre-registered client is for %s, not %s", ErrNoRegistration, s.Issuer, t.issuer)
	}
	return ClientInfo{ClientID: s.ID, ClientSecret: s.Secret, AuthMethod: c.staticMethod(s, t.md)}, nil
}

func (c *Client) staticMethod(s *StaticClient, md *ServerMetadata) string {
	switch {
	case s.AuthMethod != "":
		return s.AuthMethod
	case s.PrivateKey != nil:
		return methodJWT
	case s.Secret == "":
		return methodNone
	}
	sup := md.TokenEndpointAuthMethodsSupported
	switch {
	case len(sup) == 0 || slices.Contains(sup, methodBasic):
		return methodBasic
	case slices.Contains(sup, methodPost):
		return methodPost
	}
	return methodBasic
}

// ensureClient gives rec a client id for t's server, in the priority of
// checklist §5.5: pre-registered, a client ID metadata document, the one
// registered before (for this server and redirect URI), dynamic
// registration.
func (c *Client) ensureClient(ctx context.Context, t *target, rec *Record, redirect string, scopes []string) error {
	if s := c.cfg.Client; s != nil && s.ID != "" && (s.Issuer == "" || s.Issuer == t.issuer) {
		rec.Client = ClientInfo{ClientID: s.ID, ClientSecret: s.Secret, AuthMethod: c.staticMethod(s, t.md)}
		return nil
	}
	if c.cfg.ClientMetadataURL != "" && t.md.ClientIDMetadataDocumentSupported {
		rec.Client = ClientInfo{ClientID: c.cfg.ClientMetadataURL, AuthMethod: methodNone, RedirectURIs: []string{redirect}}
		return nil
	}
	if rec.Client.ClientID != "" && rec.Client.Registered && slices.Contains(rec.Client.RedirectURIs, redirect) {
		return nil
	}
	if t.md.RegistrationEndpoint == "" {
		return fmt.Errorf("%w: %s has no registration endpoint and no client is configured for it", ErrNoRegistration, t.issuer)
	}
	ci, err := c.register(ctx, t.md, redirect, scopes)
	if err != nil {
		return err
	}
	rec.Client = *ci
	return nil
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
	body, _ := json.Marshal(registration{
		ClientName:              c.cfg.ClientName,
		RedirectURIs:            []string{redirect},
		GrantTypes:              grants,
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: method,
		ApplicationType:         c.cfg.ApplicationType,
		Scope:                   strings.Join(scopes, " "),
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
	var out struct {
		ClientID     string   `json:"client_id"`
		ClientSecret string   `json:"client_secret"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		RedirectURIs []string `json:"redirect_uris"`
		Error        string   `json:"error"`
		Description  string   `json:"error_description"`
	}
	_ = json.Unmarshal(b, &out)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, &ProtocolError{Endpoint: "registration", Status: resp.StatusCode, Code: out.Error, Description: out.Description}
	}
	if out.ClientID == "" {
		return nil, &ProtocolError{Endpoint: "registration", Status: resp.StatusCode, Description: "the response has no client_id"}
	}
	ci := &ClientInfo{ClientID: out.ClientID, ClientSecret: Secret(out.ClientSecret), AuthMethod: out.AuthMethod, RedirectURIs: []string{redirect}, Registered: true}
	if ci.AuthMethod == "" {
		ci.AuthMethod = method
	}
	if ci.AuthMethod == methodNone {
		ci.ClientSecret = ""
	}
	return ci, nil
}

// tokenError turns x/oauth2's error into a *ProtocolError, dropping the
// response body it keeps.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		pe := &ProtocolError{Endpoint: "token", Code: re.ErrorCode, Description: re.ErrorDescription}
		if re.Response != nil {
			pe.Status = re.Response.StatusCode
		}
		return pe
	}
	return fmt.Errorf("auth: token request: %w", err)
}

func fromOAuth2(t *oauth2.Token) *Token {
	out := &Token{AccessToken: Secret(t.AccessToken), TokenType: t.TokenType, RefreshToken: Secret(t.RefreshToken), Expiry: t.Expiry}
	if s, ok := t.Extra("scope").(string); ok {
		out.Scope = s
	}
	if out.TokenType == "" {
		out.TokenType = "Bearer"
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func union(a, b []string) []string {
	var out []string
	for _, s := range append(slices.Clone(a), b...) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}
