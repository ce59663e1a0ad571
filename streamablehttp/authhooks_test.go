package streamablehttp_test

import (
	"context"
	"net/http"
)

// authHooks is an httpauth.Authorizer of two functions, for tests that
// script what an authorization layer does; a nil one does nothing (or,
// for unauthorized, refuses).
type authHooks struct {
	authorize    func(req *http.Request) error
	unauthorized func(ctx context.Context, resp *http.Response) error
}

func (h authHooks) AuthorizeRequest(req *http.Request) error {
	if h.authorize == nil {
		return nil
	}
	return h.authorize(req)
}

func (h authHooks) HandleUnauthorized(ctx context.Context, resp *http.Response) error {
	if h.unauthorized == nil {
		return errNoHook
	}
	return h.unauthorized(ctx, resp)
}

type hookError struct{}

func (hookError) Error() string { return "no OnUnauthorized hook" }

var errNoHook error = hookError{}
