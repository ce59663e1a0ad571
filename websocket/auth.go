package websocket

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/transport/httpauth"
)

// MaxAuthRetries bounds how often one opening handshake is tried again
// after Options.Auth reports new credentials, as Streamable HTTP bounds a
// request.
const MaxAuthRetries = 3

// authError carries why the Authorizer could not answer a refusal, beside
// the handshake error, to Dial.
type authError struct {
	err   error // websocket.ErrBadHandshake
	cause error
}

func (e *authError) Error() string { return e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

func authCause(err error) (error, bool) {
	var ae *authError
	if errors.As(err, &ae) {
		return ae.cause, true
	}
	return nil, false
}

// dialAuthorized opens the WebSocket with a, when given: it authorizes the
// upgrade as the GET it is (the URL's http or https twin, so that a DPoP
// proof names what the server sees), and on a 401 or 403 hands the answer
// to a, trying again while a reports new credentials.
func dialAuthorized(ctx context.Context, d *websocket.Dialer, u *url.URL, header http.Header, a httpauth.Authorizer) (*websocket.Conn, *http.Response, error) {
	if a == nil {
		return d.DialContext(ctx, u.String(), header)
	}
	hu := *u
	hu.Scheme = "http"
	if u.Scheme == "wss" {
		hu.Scheme = "https"
	}
	for attempt := 0; ; attempt++ {
		h := header.Clone()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, hu.String(), nil)
		if err != nil {
			return nil, nil, err
		}
		req.Header = h
		if err := a.AuthorizeRequest(req); err != nil {
			return nil, nil, err
		}
		ws, resp, err := d.DialContext(ctx, u.String(), req.Header)
		if err == nil || resp == nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			return ws, resp, err
		}
		if attempt == MaxAuthRetries {
			return ws, resp, err
		}
		// The refusal's Request is the one that was authorized, as the
		// Authorizer expects (it reads the token it was refused with).
		resp.Request = req
		if cause := a.HandleUnauthorized(ctx, resp); cause != nil {
			return ws, resp, &authError{err: err, cause: cause}
		}
		resp.Body.Close()
	}
}
