// Package httpauth is the seam through which an authorization layer
// (OAuth 2.1, or a program's own tokens) plugs into the transports that
// speak HTTP: Streamable HTTP, the legacy HTTP+SSE transport and the
// WebSocket upgrade.
//
// It is a package of its own, not part of transport, so that a program
// that speaks only stdio does not link net/http and crypto/tls: the seam
// is written in *http.Request and *http.Response, and transport is linked
// by every program. Measured in bench/: the connected stdio client's peak
// RSS fell from 9.3 to 7.0 MiB with net/http gone from its binary.
package httpauth

import (
	"context"
	"errors"
	"net/http"
)

// Authorizer is the seam through which an authorization layer (OAuth 2.1)
// plugs into the transports that speak HTTP, Streamable HTTP and the
// WebSocket upgrade, without the transport knowing how credentials are
// obtained; the auth package's *auth.Client implements it, and so does a
// TokenSource.
//
// AuthorizeRequest sets a request's credentials (a bearer token, or a DPoP
// token and a proof of that request's method and URL), and may set
// nothing. HandleUnauthorized is handed the server's 401 or 403 (its body
// already read and closed; its header and Request intact) and returns nil
// when new credentials are in place and the request should be sent once
// more; the transport re-sends one request a bounded number of times. Both
// are called from the transport's goroutines, concurrently.
type Authorizer interface {
	AuthorizeRequest(req *http.Request) error
	HandleUnauthorized(ctx context.Context, resp *http.Response) error
}

// TokenSource is an Authorizer of a bearer token a program gets its own
// way: it is asked for the token on every request ("" sends none), and a
// refusal is final (the source cannot renew the token on the server's
// word; it can renew it before asking itself).
type TokenSource func(ctx context.Context) (string, error)

// AuthorizeRequest implements Authorizer: "Authorization: Bearer TOKEN".
func (f TokenSource) AuthorizeRequest(req *http.Request) error {
	tok, err := f(req.Context())
	if err != nil {
		return err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}

// HandleUnauthorized implements Authorizer: the token was refused.
func (TokenSource) HandleUnauthorized(context.Context, *http.Response) error {
	return errTokenRefused
}

var errTokenRefused = errors.New("the server refused the token of the TokenSource")
