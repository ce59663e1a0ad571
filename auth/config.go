package auth

import (
	"context"
	"crypto"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Config configures a Client. Only the grant's own needs are required:
// the zero Config with a User runs the interactive authorization code
// flow with dynamic registration and keeps tokens in memory.
type Config struct {
	// HTTPClient sends metadata, registration and token requests. Its
	// redirect policy is replaced: metadata redirects are followed only
	// within one origin. Nil means http.DefaultClient.
	HTTPClient *http.Client

	// Store keeps client registrations and tokens; nil means a
	// MemoryStore of the Client's own.
	Store TokenStore

	// Grant says how tokens are obtained; nil means AuthorizationCode.
	Grant Grant
	// User is the user step of the authorization code flow: Loopback for
	// command-line programs, Headless for tests.
	User UserStep

	// Client is a pre-registered client. It comes first in the
	// registration order (checklist §5.5); the client credentials and
	// enterprise grants require it.
	Client *StaticClient
	// ClientMetadataURL is this client's Client ID Metadata Document URL
	// (an https URL with a path), used as the client id where the
	// authorization server supports such documents.
	ClientMetadataURL string
	// ClientName is sent in dynamic registration; empty means "tako".
	ClientName string
	// ApplicationType is sent in dynamic registration: "native" (the
	// default: command-line and desktop programs, loopback redirects) or
	// "web".
	ApplicationType string

	// Scopes, when set, replaces the scope selection (challenge, then the
	// resource's scopes_supported, else none).
	Scopes []string

	// DPoP asks for DPoP-bound tokens (RFC 9449) from authorization
	// servers that advertise DPoP, and presents them with a fresh proof
	// on every request. DPoPKey is the proof key; nil means a fresh P-256
	// key per Client.
	DPoP    bool
	DPoPKey crypto.Signer

	// GRPCInsecurePlaintext lets the Client, as gRPC per-RPC credentials,
	// be used on a connection without transport security (a loopback
	// test server): gRPC then sends the token in the clear. Without it
	// RequireTransportSecurity is true, and gRPC refuses to attach the
	// token to a plaintext connection.
	GRPCInsecurePlaintext bool

	// LegacyProtocolVersion is sent as MCP-Protocol-Version when fetching
	// the 2025-03-26 fallback metadata; empty means 2025-03-26.
	LegacyProtocolVersion string

	// MaxDocumentSize bounds each metadata and registration document;
	// zero means DefaultMaxDocumentSize.
	MaxDocumentSize int
	// MaxAttempts bounds the authorizations for the same scopes at one
	// authorization server within AttemptWindow (a server that keeps
	// answering 401 or 403 insufficient_scope); zero means 3.
	MaxAttempts int
	// AttemptWindow is the window MaxAttempts counts in; zero means one
	// minute.
	AttemptWindow time.Duration
	// RefreshBefore is how long before expiry a token is refreshed, at
	// most a quarter of the token's lifetime; zero means 30 seconds.
	RefreshBefore time.Duration
	// LoginTimeout bounds one authorization as a whole: discovery,
	// registration, the user at the browser (typing a password, a second
	// factor, a consent page) and the token request. It is the login's
	// own clock, not the request's: a request that waits for the login
	// gives up at its own deadline and the login goes on (see
	// LoginPendingError). Zero means DefaultLoginTimeout (5 minutes).
	LoginTimeout time.Duration

	// Logger receives diagnostics, never a secret. Nil discards them.
	Logger *slog.Logger
}

// Format prints the Config without its secrets, for every verb.
func (c Config) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "auth.Config{grant %s, client %v, metadata URL %q, DPoP %v}", grantName(c.Grant), c.Client, c.ClientMetadataURL, c.DPoP)
}

// LogValue logs the Config without its secrets.
func (c Config) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(c)) }

// StaticClient is a client registered ahead of time with an authorization
// server: a client id and how it authenticates at the token endpoint.
type StaticClient struct {
	// ID is the client id.
	ID string
	// Secret is the client secret, for client_secret_basic or
	// client_secret_post.
	Secret Secret
	// PrivateKey signs private_key_jwt client assertions (RFC 7523 §2.2);
	// when set it is used instead of Secret. ParsePrivateKeyPEM reads one.
	PrivateKey crypto.Signer
	// SigningAlg is the JWS algorithm for PrivateKey; empty picks it from
	// the key (ES256 for P-256).
	SigningAlg string
	// AuthMethod forces the token endpoint authentication method; empty
	// picks one the server advertises.
	AuthMethod string
	// Issuer binds the client to one authorization server; empty means
	// any (the caller vouches that the server is the one it registered
	// with).
	Issuer string
}

// String describes the client without its secrets. (A value receiver, as
// for the others: a StaticClient value prints as a pointer does.)
func (s StaticClient) String() string {
	return fmt.Sprintf("auth.StaticClient{%s, secret %v, key %v, issuer %q}", s.ID, s.Secret != "", s.PrivateKey != nil, s.Issuer)
}

// GoString is String, for %#v.
func (s StaticClient) GoString() string { return s.String() }

// Format prints the client without its secrets, for every verb.
func (s StaticClient) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// LogValue logs the client without its secrets.
func (s StaticClient) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Grant is how a Client obtains tokens: AuthorizationCode,
// ClientCredentials, JWTBearer or EnterpriseManaged.
type Grant interface{ grant() string }

// AuthorizationCode is the interactive grant (OAuth 2.1 §4.1) with PKCE
// S256, state and RFC 9207 issuer checks; Config.User carries the user
// step.
type AuthorizationCode struct{}

// ClientCredentials is the machine-to-machine grant (OAuth 2.1 §4.2, MCP
// extension io.modelcontextprotocol/oauth-client-credentials), with
// Config.Client's secret or private key.
type ClientCredentials struct{}

// JWTBearer is the RFC 7523 JWT bearer grant for workload identity
// federation (MCP extension io.modelcontextprotocol/auth/wif): the
// workload's identity token is the assertion. It is not retried on
// failure, and there is no fallback to another grant.
type JWTBearer struct {
	// Assertion returns the JWT; audience is the authorization server's
	// issuer.
	Assertion func(ctx context.Context, audience string) (string, error)
}

// EnterpriseManaged is enterprise-managed authorization (cross-app access,
// MCP extension io.modelcontextprotocol/enterprise-managed-authorization):
// the user's identity token from the enterprise identity provider is
// exchanged there (RFC 8693) for an identity assertion grant (ID-JAG),
// which is then presented to the MCP server's authorization server with
// the JWT bearer grant, authenticated as Config.Client.
type EnterpriseManaged struct {
	// IDPTokenEndpoint is the identity provider's token endpoint.
	IDPTokenEndpoint string
	// IDPClientID and IDPClientSecret authenticate at the identity
	// provider (the secret may be empty for a public client).
	IDPClientID     string
	IDPClientSecret Secret
	// IDToken returns the user's identity token from the identity
	// provider.
	IDToken func(ctx context.Context) (string, error)
}

func (AuthorizationCode) grant() string { return "authorization_code" }
func (ClientCredentials) grant() string { return "client_credentials" }
func (JWTBearer) grant() string         { return "jwt_bearer" }
func (EnterpriseManaged) grant() string { return "enterprise_managed" }

// Format prints the grant without the identity provider's secret.
func (g EnterpriseManaged) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "auth.EnterpriseManaged{%s, %s}", g.IDPTokenEndpoint, g.IDPClientID)
}

// LogValue logs the grant without the identity provider's secret.
func (g EnterpriseManaged) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(g)) }

func grantName(g Grant) string {
	if g == nil {
		return "authorization_code"
	}
	return g.grant()
}
