package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
)

// refresh redeems rec's refresh token at t's server (with the resource
// indicator) and saves the result. It holds the store's lock (when the
// store is a LockingStore) and reads the store again under it first: when
// another process has refreshed meanwhile, its token is taken instead, and
// the refresh token it redeemed is never sent a second time.
func (c *Client) refresh(ctx context.Context, t *target, rec *Record) error {
	if ls, ok := c.store.(LockingStore); ok {
		unlock, err := ls.Lock(ctx, c.canonical)
		if err != nil {
			return err
		}
		defer unlock()
		if fresh, err := c.store.Load(ctx, c.canonical, rec.Issuer); err == nil && fresh.Token != nil && rec.Token != nil &&
			fresh.Token.RefreshToken != rec.Token.RefreshToken {
			if fresh.Token.validFor(c.margin(fresh.Token)) {
				c.mu.Lock()
				c.adoptLocked(fresh, t.md)
				c.mu.Unlock()
				return nil
			}
			rec = fresh // rotated by another process, and about to expire again
		}
	}
	if rec.Token == nil || rec.Token.RefreshToken == "" {
		return errNoRefresh
	}
	if c.refreshRefused(rec.Token) {
		return c.refusedRefresh()
	}
	tok, err := c.requestToken(ctx, tokenParams{md: t.md, issuer: t.issuer, client: rec.Client, form: url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {rec.Token.RefreshToken.Reveal()},
		"resource":      {t.resource},
	}})
	if err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) && pe.Endpoint == "token" && (pe.Code == "invalid_grant" || pe.Code == "invalid_client" || pe.Code == "unauthorized_client") {
			// Revoked, expired, or reused: the server will not take it
			// again, so it is not sent again.
			c.mu.Lock()
			c.deadRefresh, c.deadErr = digest(rec.Token.RefreshToken.Reveal()), err
			c.mu.Unlock()
		}
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

// refreshRefused reports whether tok's refresh token is one the server has
// refused.
func (c *Client) refreshRefused(tok *Token) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadRefresh != "" && tok.RefreshToken != "" && c.deadRefresh == digest(tok.RefreshToken.Reveal())
}

// refusedRefresh is the error of the refresh token the server refused.
func (c *Client) refusedRefresh() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadErr
}

// refreshCurrent refreshes the record in use before it expires, finding
// its server's metadata (once: it is kept with the record) when the record
// came from the store. Called with the flow lock held.
func (c *Client) refreshCurrent(ctx context.Context, rec *Record) error {
	c.mu.Lock()
	cur, md := c.rec, c.md
	c.mu.Unlock()
	if cur != rec {
		return nil // someone else refreshed meanwhile
	}
	if md == nil {
		var err error
		if md, err = c.f.budgeted(3).discoverServer(ctx, rec.Issuer, nil); err != nil {
			return fmt.Errorf("auth: refresh: %w", err)
		}
		c.mu.Lock()
		if c.rec == rec {
			c.md = md
		}
		c.mu.Unlock()
	}
	ind := rec.Indicator
	if ind == "" {
		ind = c.canonical
	}
	return c.refresh(ctx, &target{md: md, issuer: rec.Issuer, resource: ind}, rec)
}
