package auth

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Token endpoint authentication methods.
const (
	methodBasic = "client_secret_basic"
	methodPost  = "client_secret_post"
	methodNone  = "none"
	methodJWT   = "private_key_jwt"
)

// Bounds on what a server's answers can make the client do for one
// challenge.
const (
	// maxAuthorizationServers is how many of the resource metadata's
	// authorization servers are tried, in order.
	maxAuthorizationServers = 4
	// maxDiscoveryFetches bounds the metadata documents fetched for one
	// challenge: the resource's (3 places) and each server's (3 places).
	maxDiscoveryFetches = 3 + 3*maxAuthorizationServers
	// maxScopes and maxScopeLen bound the scope a step-up may grow to.
	maxScopes   = 64
	maxScopeLen = 2048
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
// §5.2, §5.3, §5.14), fetching at most maxDiscoveryFetches documents.
func (c *Client) discover(ctx context.Context, ch *ResourceChallenge) (*target, error) {
	if err := checkEndpoint(c.server.String(), "MCP server"); err != nil {
		return nil, err
	}
	f := c.f.budgeted(maxDiscoveryFetches)
	prm, err := f.discoverResource(ctx, c.server, ch.ResourceMetadata)
	if err != nil {
		return nil, err
	}
	if prm == nil {
		if ch.ResourceMetadata != "" {
			return nil, fmt.Errorf("%w: resource metadata %s not found", ErrNoMetadata, redactURL(ch.ResourceMetadata))
		}
		md, err := f.legacyServer(ctx, c.server, c.cfg.LegacyProtocolVersion)
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
	// client picks one), among the first few.
	var firstErr error
	for i, as := range prm.AuthorizationServers {
		if i == maxAuthorizationServers {
			c.log.Warn("auth: the resource metadata lists more authorization servers than are tried", "listed", len(prm.AuthorizationServers), "tried", maxAuthorizationServers)
			break
		}
		md, err := f.discoverServer(ctx, as, nil)
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

// chooseScopes is what to ask for: Config.Scopes, else the challenge's,
// else the resource's scopes_supported; on a step-up, the union of what
// was asked before, what the token has and what the server asks for now
// (SEP-2350), bounded.
func (c *Client) chooseScopes(ch *ResourceChallenge, t *target, rec *Record, why trigger) ([]string, error) {
	var scopes []string
	switch {
	case c.cfg.Scopes != nil:
		scopes = c.cfg.Scopes
	case len(ch.Scope) > 0:
		scopes = ch.Scope
	case t.prm != nil && len(t.prm.ScopesSupported) > 0:
		scopes = t.prm.ScopesSupported
	}
	if why != stepUpScope {
		return scopes, nil
	}
	c.mu.Lock()
	prev := slices.Clone(c.scopes)
	c.mu.Unlock()
	if rec.Token != nil {
		prev = append(prev, strings.Fields(rec.Token.Scope)...)
	}
	scopes = union(prev, ch.Scope)
	if len(scopes) > maxScopes || len(strings.Join(scopes, " ")) > maxScopeLen {
		return nil, fmt.Errorf("%w: the step-up scope would be %d scopes (%d bytes)", ErrStepUpLimit, len(scopes), len(strings.Join(scopes, " ")))
	}
	return scopes, nil
}

// authorize runs discovery and a grant, or a refresh when that is enough,
// and saves the result. Called with the flow lock held.
func (c *Client) authorize(ctx context.Context, ch *ResourceChallenge, why trigger, refused string) error {
	t, err := c.discover(ctx, ch)
	if err != nil {
		return err
	}
	rec, _ := c.store.Load(ctx, c.canonical, t.issuer)
	if rec == nil {
		rec = &Record{Resource: c.canonical, Issuer: t.issuer}
	}
	scopes, err := c.chooseScopes(ch, t, rec, why)
	if err != nil {
		return err
	}
	key := t.issuer + " " + strings.Join(sorted(scopes), " ")

	var refreshErr error
	if why == refusedToken && rec.Token != nil && rec.Token.RefreshToken != "" && (refused == "" || refused == rec.Token.AccessToken.Reveal()) {
		if c.refreshRefused(rec.Token) {
			refreshErr = c.refusedRefresh()
		} else if !c.countAttempt("refresh " + key) {
			return fmt.Errorf("%w: %d refreshes within %s, and the server still refuses the token", ErrStepUpLimit, c.cfg.MaxAttempts, c.cfg.AttemptWindow)
		} else if refreshErr = c.refresh(ctx, t, rec); refreshErr == nil {
			return nil
		} else {
			c.log.Debug("auth: refresh failed; authorizing again", "err", refreshErr)
		}
	}

	if !c.countAttempt(key) {
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
		if refreshErr != nil {
			// Why the stored login no longer works is the news: keep it
			// in the chain beside why a new one could not be had.
			return fmt.Errorf("%w (the refresh token was refused: %w)", err, refreshErr)
		}
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

// refreshAllowed: refresh tokens only where the server does not rule them
// out (checklist §5.7, §5.12).
func (c *Client) refreshAllowed(md *ServerMetadata) bool {
	return len(md.GrantTypesSupported) == 0 || slices.Contains(md.GrantTypesSupported, "refresh_token")
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
