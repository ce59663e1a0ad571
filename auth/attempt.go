package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// trigger is why an authorization runs.
type trigger int

const (
	refusedToken  trigger = iota // a 401: no token, or one the server refuses
	stepUpScope                  // a 403 insufficient_scope: more scope
	explicitLogin                // Client.Login: a new login, whatever is stored
)

// attempt is one authorization under way: run by a goroutine of its own
// on a context detached from the request that started it (see the design
// note in client.go), waited for by the requests that were refused.
type attempt struct {
	done    chan struct{}
	err     error // set before done is closed
	cancel  context.CancelCauseFunc
	waiters int // guarded by Client.mu
	ends    time.Time
}

// HandleUnauthorized acts on a 401 or 403 from the MCP server (resp's body
// may already be closed; its header and Request are read). It returns nil
// when new credentials were obtained and the request should be sent
// again: a DPoP nonce learnt, another request's authorization finished
// meanwhile, a refresh, or a complete authorization. Otherwise the error
// says why (errors.Is with the package's sentinels, errors.As with
// *ProtocolError and *LoginPendingError).
//
// An authorization that needs the user runs on its own clock, not ctx's:
// when ctx's deadline passes first, HandleUnauthorized returns a
// *LoginPendingError and the login goes on. When ctx is cancelled and no
// other request waits for the login, the login ends too.
func (c *Client) HandleUnauthorized(ctx context.Context, resp *http.Response) error {
	ch, err := ParseResourceChallenge(resp.Header)
	if err != nil {
		return err
	}
	var reqURL *url.URL
	if resp.Request != nil {
		reqURL = resp.Request.URL
	}
	if d := c.dp.Load(); d != nil && reqURL != nil {
		learnt := d.learnNonce(reqURL, resp.Header, true)
		if ch.Error == "use_dpop_nonce" {
			if learnt {
				return nil
			}
			return fmt.Errorf("auth: the server asks for a DPoP nonce and gives none (or the same again)")
		}
	}
	stepUp := resp.StatusCode == http.StatusForbidden && ch.Error == "insufficient_scope"
	if resp.StatusCode == http.StatusForbidden && !stepUp {
		return fmt.Errorf("auth: the server refuses the request (403, %q)", truncateText(ch.Error, 80))
	}
	why := refusedToken
	if stepUp {
		why = stepUpScope
	}
	a, err := c.startOrJoin(ctx, ch, why, usedToken(resp.Request))
	if a == nil {
		return err
	}
	return c.wait(ctx, a)
}

// startOrJoin returns the authorization under way, joined, or one it
// starts for the challenge; or no attempt and the answer when there is no
// need for one (another request's authorization finished meanwhile, or the
// same refusal just failed).
func (c *Client) startOrJoin(ctx context.Context, ch *ResourceChallenge, why trigger, refused string) (*attempt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.pending; a != nil {
		a.waiters++
		return a, nil
	}
	if why != explicitLogin && c.failed != nil && c.failedToken == refused && time.Since(c.failedAt) < failureMemory {
		// The same refusal right after a failed authorization (the
		// engine trying another handshake on the same server): the
		// answer has not changed, and the user is not asked twice.
		return nil, c.failed
	}
	if rec := c.currentLocked(ctx); why == refusedToken && rec != nil && rec.Token != nil && rec.Token.AccessToken.Reveal() != refused && rec.Token.validFor(0) {
		return nil, nil // authorized meanwhile
	}
	if why == stepUpScope {
		keep, ok := c.within(c.stepUps)
		c.stepUps = keep
		if !ok {
			return nil, fmt.Errorf("%w: %d step-ups within %s", ErrStepUpLimit, c.cfg.MaxAttempts, c.cfg.AttemptWindow)
		}
	}
	actx, cancel := context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), triggerKey{}, why))
	a := &attempt{done: make(chan struct{}), cancel: cancel, waiters: 1, ends: time.Now().Add(c.cfg.LoginTimeout)}
	c.pending = a
	go c.run(actx, a, ch, why, refused)
	return a, nil
}

// run is the attempt's goroutine.
func (c *Client) run(ctx context.Context, a *attempt, ch *ResourceChallenge, why trigger, refused string) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.LoginTimeout,
		fmt.Errorf("%w: the authorization took longer than %s (Config.LoginTimeout)", ErrTimeout, c.cfg.LoginTimeout))
	err := c.lockFlow(ctx)
	if err == nil {
		err = c.authorize(ctx, ch, why, refused)
		c.unlockFlow()
	}
	cancel()
	a.cancel(nil)
	c.mu.Lock()
	c.pending = nil
	c.failed, c.failedToken, c.failedAt = err, refused, time.Now()
	c.mu.Unlock()
	a.err = err
	close(a.done)
}

// wait waits for a, which the caller has joined (waiters counts it), as
// long as ctx allows.
func (c *Client) wait(ctx context.Context, a *attempt) error {
	select {
	case <-a.done:
		c.mu.Lock()
		a.waiters--
		c.mu.Unlock()
		return a.err
	case <-ctx.Done():
	}
	c.mu.Lock()
	a.waiters--
	last := a.waiters == 0
	c.mu.Unlock()
	// A deadline (a probe's, a call's) is the request's clock, not the
	// person's: only a cancellation ends the login. The cause tells them
	// apart where a transport passes a request on in a context of its own.
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		if last {
			// The caller gave up (Ctrl-C), and nobody else waits: the
			// login is no one's any more.
			a.cancel(context.Cause(ctx))
		}
		return context.Cause(ctx)
	}
	return &LoginPendingError{c: c, a: a}
}

type triggerKey struct{}

// IsStepUp reports whether the user step started with ctx (UserStep.Start
// and Redirect.Wait are given it) is a step-up: the user is logged in, and
// the server refused a request for lack of scope (403 insufficient_scope).
// A program can ask the user only then, and tell them to log in otherwise.
func IsStepUp(ctx context.Context) bool {
	why, _ := ctx.Value(triggerKey{}).(trigger)
	return why == stepUpScope
}

// failureMemory is how long a failed authorization is the answer to the
// same refusal, so that a transport's or engine's immediate retry (a
// second handshake) does not start a second flow.
const failureMemory = 5 * time.Second

// LoginPendingError is the answer to a request whose deadline passed while
// the authorization it waited for, typically a login in the browser, was
// still under way. The login goes on, on its own clock (Config.LoginTimeout):
// WaitAuth waits for it, and the next request that is refused joins it
// rather than starting another. It wraps ErrLoginPending.
//
// transport's engine waits this way when the deadline was its own (the
// server/discover probe's, Options.CallTimeout), so a person who takes a
// minute to log in is not cut off by a three-second probe.
type LoginPendingError struct {
	c *Client
	a *attempt
}

func (e *LoginPendingError) Error() string {
	left := time.Until(e.a.ends).Round(time.Second)
	return fmt.Sprintf("auth: the login is still under way (it may take %s more); the request's deadline passed first", max(left, 0))
}

// Unwrap returns ErrLoginPending.
func (e *LoginPendingError) Unwrap() error { return ErrLoginPending }

// WaitAuth waits for the login to end, as long as ctx allows: nil when
// credentials are in place (send the request again), or why the login
// failed. A ctx that is cancelled while nobody else waits ends the login.
func (e *LoginPendingError) WaitAuth(ctx context.Context) error {
	e.c.mu.Lock()
	e.a.waiters++
	e.c.mu.Unlock()
	return e.c.wait(ctx, e.a)
}

// usedToken is the access token a request carried.
func usedToken(req *http.Request) string {
	if req == nil {
		return ""
	}
	_, tok, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	return strings.TrimSpace(tok)
}
