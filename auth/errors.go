package auth

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the package returns wraps one of them (or a
// *ProtocolError), so a program can tell why authorization failed with
// errors.Is and errors.As, through any wrapper.
var (
	// ErrMalformedChallenge: a WWW-Authenticate header that does not parse
	// (an unterminated quoted string, a parameter given twice, junk).
	ErrMalformedChallenge = errors.New("auth: malformed WWW-Authenticate challenge")
	// ErrNoMetadata: neither protected resource metadata nor authorization
	// server metadata could be found where the specification says to look.
	ErrNoMetadata = errors.New("auth: no authorization metadata found")
	// ErrResourceMismatch: the protected resource metadata names a resource
	// other than the server being accessed (RFC 9728 §3.3).
	ErrResourceMismatch = errors.New("auth: protected resource metadata is for another resource")
	// ErrIssuerMismatch: authorization server metadata whose issuer is not
	// the one its URL was built from (RFC 8414 §3.3), or an authorization
	// response whose iss is not the recorded issuer (RFC 9207).
	ErrIssuerMismatch = errors.New("auth: issuer mismatch")
	// ErrMissingIssuer: the server advertised RFC 9207 but the
	// authorization response has no iss.
	ErrMissingIssuer = errors.New("auth: authorization response lacks the iss the server advertised")
	// ErrStateMismatch: the authorization response's state is not the one
	// sent.
	ErrStateMismatch = errors.New("auth: authorization response state does not match")
	// ErrPKCEUnsupported: the authorization server does not advertise PKCE
	// with S256, so the code flow is refused.
	ErrPKCEUnsupported = errors.New("auth: authorization server does not advertise PKCE S256")
	// ErrNoRegistration: no way to get a client id for this authorization
	// server (no pre-registered client for it, no client ID metadata
	// document support, no registration endpoint).
	ErrNoRegistration = errors.New("auth: no client registration possible")
	// ErrStepUpLimit: the server kept asking for more scope; tako gives up
	// after MaxAttempts authorizations for the same scopes.
	ErrStepUpLimit = errors.New("auth: too many authorization attempts for the same scopes")
	// ErrUnsafeRedirect: a metadata fetch was redirected to another origin.
	ErrUnsafeRedirect = errors.New("auth: metadata redirect to another origin refused")
	// ErrDocumentTooLarge: a metadata or registration document is larger
	// than the limit.
	ErrDocumentTooLarge = errors.New("auth: document too large")
	// ErrNoUserStep: the authorization code flow needs a UserStep and the
	// configuration has none.
	ErrNoUserStep = errors.New("auth: no user step configured for the authorization code flow")
	// ErrTimeout: the user did not complete the authorization in time.
	ErrTimeout = errors.New("auth: timed out waiting for the authorization response")
)

// ProtocolError is an OAuth error response: from the token or registration
// endpoint (RFC 6749 §5.2, RFC 7591 §3.2.2) or in the authorization
// redirect (RFC 6749 §4.1.2.1). Only the error code and description are
// kept, never the request or the rest of the body.
type ProtocolError struct {
	// Endpoint says where: "token", "registration", "authorization".
	Endpoint string
	// Status is the HTTP status, or 0 for an authorization redirect.
	Status int
	// Code is the OAuth error code, such as invalid_grant.
	Code string
	// Description is error_description, if any.
	Description string
}

func (e *ProtocolError) Error() string {
	msg := fmt.Sprintf("auth: %s endpoint: %s", e.Endpoint, e.Code)
	if e.Code == "" {
		msg = fmt.Sprintf("auth: %s endpoint: HTTP %d", e.Endpoint, e.Status)
	}
	if e.Description != "" {
		d := e.Description
		if len(d) > 200 {
			d = d[:200] + "..."
		}
		msg += ": " + d
	}
	return msg
}
