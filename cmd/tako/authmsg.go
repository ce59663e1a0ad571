package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tako-mcp/tako/auth"
)

// exitAuth is the exit status of a server that wants a login tako cannot
// run on its own: the message names the command that does.
const exitAuth = 4

// authFailure says, in one line, what a person must do when the server
// wants an authorization tako cannot give on its own, or why the one it
// tried did not work; ok is false for errors that are not about
// authorization.
func authFailure(err error) (msg string, ok bool) {
	var (
		lne *auth.LoginNeededError
		pe  *auth.ProtocolError
	)
	switch {
	case errors.As(err, &lne):
		server := lne.Resource
		switch {
		case lne.StepUp:
			return fmt.Sprintf("%s needs a login with more scope: run tako login --scope %q %s", server, strings.Join(userScopes(lne.Scopes), " "), server), true
		case errors.As(err, &pe) && pe.Endpoint == "token":
			return fmt.Sprintf("the login to %s has expired or was revoked (the server refused its refresh token: %s): run tako login %s", server, describeOAuthError(pe), server), true
		}
		return fmt.Sprintf("%s needs a login: run tako login %s", server, server), true
	case errors.Is(err, auth.ErrLoginPending):
		return "the login in the browser did not finish in time (see --timeout)", true
	case errors.Is(err, auth.ErrInsecureEndpoint):
		return "refused to authorize over plain http: " + strings.TrimPrefix(unwrapAuth(err).Error(), "auth: ") + " (OAuth needs https, except on this machine)", true
	case errors.Is(err, auth.ErrStepUpLimit):
		return "the server keeps refusing the login's tokens: " + strings.TrimPrefix(unwrapAuth(err).Error(), "auth: "), true
	}
	return "", false
}

// userScopes drops the scope tako adds on its own (offline_access, for a
// refresh token) from what a person is told to ask for.
func userScopes(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "offline_access" {
			out = append(out, x)
		}
	}
	return out
}

func describeOAuthError(pe *auth.ProtocolError) string {
	if pe.Code != "" {
		return pe.Code
	}
	return fmt.Sprintf("HTTP %d", pe.Status)
}

// unwrapAuth is the auth package's own error in err's chain: the
// transport's wrappers around it repeat the request.
func unwrapAuth(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "auth: ") {
			return e
		}
	}
	return err
}

// isAuthNeeded reports whether err asks the user to log in (exit status
// exitAuth).
func isAuthNeeded(err error) bool {
	var lne *auth.LoginNeededError
	return errors.As(err, &lne)
}
