package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// clientCredentials is the client credentials grant.
func (c *Client) clientCredentials(ctx context.Context, t *target, rec *Record, scopes []string) (*Token, error) {
	ci, err := c.staticClient(t)
	if err != nil {
		return nil, err
	}
	rec.Client = ci
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {t.resource}}
	setScope(form, scopes)
	return c.requestToken(ctx, tokenParams{md: t.md, issuer: t.issuer, client: ci, form: form})
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
	form := url.Values{"grant_type": {grantJWTBearer}, "assertion": {a}, "resource": {t.resource}}
	setScope(form, scopes)
	return c.requestToken(ctx, tokenParams{md: t.md, issuer: t.issuer, client: ci, form: form})
}

// enterprise is the enterprise-managed flow: token exchange at the
// identity provider for an ID-JAG, then the JWT bearer grant with it.
func (c *Client) enterprise(ctx context.Context, t *target, rec *Record, scopes []string, g EnterpriseManaged) (*Token, error) {
	if g.IDToken == nil || g.IDPTokenEndpoint == "" {
		return nil, errors.New("auth: EnterpriseManaged needs IDToken and IDPTokenEndpoint")
	}
	if err := checkEndpoint(g.IDPTokenEndpoint, "identity provider's token endpoint"); err != nil {
		return nil, err
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
	setScope(ex, scopes)
	jag, err := c.requestToken(ctx, tokenParams{md: idp, issuer: g.IDPTokenEndpoint, client: idpClient, form: ex, exchange: true})
	if err != nil {
		return nil, fmt.Errorf("auth: token exchange at the identity provider: %w", err)
	}
	ci, err := c.staticClient(t)
	if err != nil {
		return nil, err
	}
	rec.Client = ci
	form := url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag.AccessToken.Reveal()}, "resource": {t.resource}}
	setScope(form, scopes)
	return c.requestToken(ctx, tokenParams{md: t.md, issuer: t.issuer, client: ci, form: form})
}

func setScope(form url.Values, scopes []string) {
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
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

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
