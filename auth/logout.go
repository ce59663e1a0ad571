package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Login runs a new authorization now, whatever the store holds, and saves
// its token: for a program's "log in" command, and to get a wider scope
// (Config.Scopes) than the stored token has, which the server would not
// ask for until a request needed it. The resource's metadata is found at
// its well-known URL (RFC 9728 §3), as there is no challenge to name it. A
// stored registration is reused. The user step runs on the login's own
// clock (Config.LoginTimeout), and ends when ctx is cancelled.
//
// A server that publishes no resource metadata is asked once, without
// credentials, for its challenge; one that asks for no authorization gives
// ErrNotProtected.
func (c *Client) Login(ctx context.Context) error {
	ch, err := c.loginChallenge(ctx)
	if err != nil {
		return err
	}
	a, err := c.startOrJoin(ctx, ch, explicitLogin, "")
	if a == nil {
		return err
	}
	return c.wait(ctx, a)
}

// loginChallenge is what Login starts from: the challenge of the server's
// answer to a request without credentials (its scope is what the server
// asks of a new login: least privilege), else, when the server answers
// that request otherwise, an empty challenge if the resource metadata is at
// its well-known URL (discovery finds it there).
func (c *Client) loginChallenge(ctx context.Context) (*ResourceChallenge, error) {
	if err := checkEndpoint(c.server.String(), "MCP server"); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", redactURL(c.server.String()), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return ParseResourceChallenge(resp.Header)
	}
	prm, err := c.f.budgeted(2).discoverResource(ctx, c.server, "")
	if err != nil {
		return nil, err
	}
	if prm == nil {
		return nil, ErrNotProtected
	}
	return &ResourceChallenge{}, nil
}

// Logout revokes the stored tokens at the authorization server that issued
// them, when it has a revocation endpoint (RFC 7009): the refresh token
// first, since revoking it ends the grant, then the access token. Then it
// forgets every registration and token stored for the server, whether the
// revocation worked or not. When it did not (the server could not be
// reached, or refused), the error wraps ErrNotRevoked and the cause, and
// the tokens are forgotten all the same.
func (c *Client) Logout(ctx context.Context) error {
	rec := c.current(ctx)
	c.mu.Lock()
	md := c.md
	c.rec, c.md, c.loaded = nil, nil, true
	c.mu.Unlock()
	var revokeErr error
	if rec != nil && rec.Token != nil {
		revokeErr = c.revoke(ctx, rec, md)
	}
	if err := c.store.Delete(ctx, c.canonical, ""); err != nil {
		return err
	}
	return revokeErr
}

// revoke revokes rec's tokens at its issuer.
func (c *Client) revoke(ctx context.Context, rec *Record, md *ServerMetadata) error {
	if md == nil {
		var err error
		if md, err = c.f.budgeted(3).discoverServer(ctx, rec.Issuer, nil); err != nil {
			return fmt.Errorf("%w: %w", ErrNotRevoked, err)
		}
	}
	if md.RevocationEndpoint == "" {
		return nil // nothing to call: the server keeps no revocable state for us to end
	}
	if err := checkEndpoint(md.RevocationEndpoint, "revocation endpoint"); err != nil {
		return fmt.Errorf("%w: %w", ErrNotRevoked, err)
	}
	var errs []error
	if rt := rec.Token.RefreshToken; rt != "" {
		errs = append(errs, c.revokeOne(ctx, md, rec, rt, "refresh_token"))
	}
	errs = append(errs, c.revokeOne(ctx, md, rec, rec.Token.AccessToken, "access_token"))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrNotRevoked, err)
	}
	return nil
}

// revokeOne sends one revocation request (RFC 7009 §2.1) with the
// client's authentication.
func (c *Client) revokeOne(ctx context.Context, md *ServerMetadata, rec *Record, tok Secret, hint string) error {
	form := url.Values{"token": {tok.Reveal()}, "token_type_hint": {hint}}
	hdr, err := c.clientAuth(rec.Client, md, rec.Issuer, form)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, md.RevocationEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.f.client.Do(req)
	if err != nil {
		return fmt.Errorf("auth: revocation at %s: %w", redactURL(md.RevocationEndpoint), err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		pe := errorResponse("revocation", resp, b)
		if pe.Code == "unsupported_token_type" && hint == "access_token" {
			// RFC 7009 §2.2.1: the server does not revoke this kind of
			// token (a self-contained JWT lives until it expires); the
			// refresh token, revoked first, ended the grant.
			return nil
		}
		return pe
	}
	return nil
}
