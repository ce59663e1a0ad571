package auth

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error the package returns wraps one of them (or a
// *ProtocolError), so a program can tell why authorization failed with
// errors.Is and errors.As, through any wrapper.
var (
	// ErrMalformedChallenge: a WWW-Authenticate header that does not parse
	// (an unterminated quoted string, a parameter given twice, junk).
	ErrMalformedChallenge = errors.New("auth: malformed WWW-Authenticate challenge")
	// ErrNoMetadata: neither protected resource metadata nor authorization
	// server metadata could be found where the specification says to look,
	// or what was found there is not a metadata document.
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
	// ErrUnsafeRedirect: a metadata, registration or token request was
	// redirected to another origin (a redirect to plain http off loopback
	// is ErrInsecureEndpoint).
	ErrUnsafeRedirect = errors.New("auth: redirect to another origin refused")
	// ErrDocumentTooLarge: a metadata or registration document is larger
	// than the limit.
	ErrDocumentTooLarge = errors.New("auth: document too large")
	// ErrNoUserStep: the authorization code flow needs a UserStep and the
	// configuration has none.
	ErrNoUserStep = errors.New("auth: no user step configured for the authorization code flow")
	// ErrTimeout: the user did not complete the authorization in time.
	ErrTimeout = errors.New("auth: timed out waiting for the authorization response")
	// ErrLoginPending: a request had to give up waiting (its deadline
	// passed) while an authorization that needs the user, a login in the
	// browser, was still under way. The login goes on; see
	// LoginPendingError.
	ErrLoginPending = errors.New("auth: the login is still under way")
	// ErrInsecureEndpoint: an authorization endpoint, metadata document or
	// MCP server that would receive a code, a token or a secret is plain
	// http on a host that is not loopback: localhost or a loopback IP
	// (OAuth 2.1 §1.5 requires TLS).
	// Nothing is sent to it, and no browser is opened.
	ErrInsecureEndpoint = errors.New("auth: plain http to a host that is not loopback")
	// ErrBadTokenResponse: the token endpoint's answer is not a token
	// response: not JSON, too large, or without an access_token or
	// token_type; or, at an error status, not an OAuth error answer (an
	// HTML error page). It comes inside a *ProtocolError.
	ErrBadTokenResponse = errors.New("auth: the token endpoint's answer is not a token response")
	// ErrUnsupportedTokenType: the token endpoint issued a token of a type
	// tako cannot present (neither Bearer nor DPoP, such as "mac"). It
	// comes inside a *ProtocolError.
	ErrUnsupportedTokenType = errors.New("auth: unsupported token type")
	// ErrNotProtected: Login found no authorization to run: the server
	// publishes no resource metadata and answers a request without
	// credentials.
	ErrNotProtected = errors.New("auth: the server asks for no authorization")
	// ErrNotRevoked: Logout forgot the tokens, but the authorization
	// server did not confirm their revocation (it could not be reached,
	// or refused). The tokens may stay valid at the server until they
	// expire.
	ErrNotRevoked = errors.New("auth: the tokens were forgotten but not revoked")
)

// LoginNeededError says that the server wants a login that the Client
// cannot run: the authorization code flow needs the user, and Config.User
// is nil (or the UserStep declined with ErrNoUserStep). It wraps
// ErrNoUserStep. A program without a user step (a script, a service) shows
// the user what to do: log in, or log in again with Scopes for a step-up.
type LoginNeededError struct {
	// Resource is the canonical URI of the MCP server.
	Resource string
	// Scopes is the scope the login would ask for.
	Scopes []string
	// StepUp says the user is logged in and the server wants more scope.
	StepUp bool
}

func (e *LoginNeededError) Error() string {
	if e.StepUp {
		return fmt.Sprintf("auth: %s needs a login with more scope (%s)", e.Resource, strings.Join(e.Scopes, " "))
	}
	return fmt.Sprintf("auth: %s needs a login", e.Resource)
}

// Unwrap returns ErrNoUserStep.
func (e *LoginNeededError) Unwrap() error { return ErrNoUserStep }

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
	// Description is error_description, if any, or what tako saw
	// instead of an OAuth answer ("the answer is an HTML page").
	Description string

	// err is the sentinel the error also is: ErrBadTokenResponse,
	// ErrUnsupportedTokenType, or nil.
	err error
}

func (e *ProtocolError) Error() string {
	msg := fmt.Sprintf("auth: %s endpoint: %s", e.Endpoint, truncateText(e.Code, 80))
	if e.Code == "" {
		msg = fmt.Sprintf("auth: %s endpoint: HTTP %d", e.Endpoint, e.Status)
	}
	if e.Description != "" {
		msg += ": " + truncateText(e.Description, 200)
	}
	return msg
}

// Unwrap returns the sentinel the error is an instance of, if any.
func (e *ProtocolError) Unwrap() error { return e.err }
