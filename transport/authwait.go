package transport

import (
	"context"
	"errors"
)

// AuthWaiter is an error, found with errors.As, saying that an
// authorization is under way that takes longer than the request could
// wait: a person logging in at a browser (auth.LoginPendingError is one).
// WaitAuth waits for it to end, as long as ctx allows, and returns nil once
// credentials are in place: the request, refused at the server's door, may
// then be sent again. A ctx that is cancelled may end the authorization.
//
// The engine waits for one when the deadline that ended the request was
// its own (the server/discover probe's Options.ProbeTimeout,
// Options.CallTimeout): those bound a server's silence, not a person's
// login. A deadline of the caller's is the caller's to keep, and the
// error reaches the caller, who may wait in the same way.
type AuthWaiter interface {
	error
	WaitAuth(ctx context.Context) error
}

// maxAuthWaits bounds how often one request waits for an authorization and
// is sent again.
const maxAuthWaits = 2

// waitForAuth waits for the authorization err reports, when it reports
// one and ctx is still alive. again says the request may be sent again;
// otherwise the error to return is err, or why the authorization failed.
func waitForAuth(ctx context.Context, err error) (again bool, _ error) {
	var w AuthWaiter
	if err == nil || ctx.Err() != nil || !errors.As(err, &w) {
		return false, err
	}
	if werr := w.WaitAuth(ctx); werr != nil {
		return false, werr
	}
	return true, nil
}
