// Package auth is OAuth 2.1 for MCP clients (the authorization part of the
// MCP specification, checklist §5): it answers an MCP server's 401 by
// discovering the protected resource metadata (RFC 9728) and the
// authorization server's metadata (RFC 8414, OpenID Connect Discovery),
// registering the client (pre-registered, a client ID metadata document,
// or RFC 7591), running a grant and keeping the tokens, refreshing them
// before they expire, and stepping up on 403 insufficient_scope.
//
// Grants: the authorization code flow with PKCE S256, state and RFC 9207
// issuer checks, with the user step as an interface (Loopback opens the
// browser for command-line programs; Headless follows an automatic
// redirect, for tests); client credentials with a secret or a
// private_key_jwt assertion; the JWT bearer grant for workload identity;
// and enterprise-managed authorization (token exchange for an ID-JAG, then
// the JWT bearer grant). DPoP (RFC 9449) binds tokens to a key, with the
// servers' nonces.
//
// A Client plugs into a transport's auth seam and never into its core:
//
//	ac, _ := auth.New(url, &auth.Config{User: &auth.Loopback{}})
//	conn, _ := streamablehttp.Dial(ctx, url, &streamablehttp.Options{Auth: ac})
//
// The Client is an httpauth.Authorizer, the seam of Streamable HTTP and of
// the WebSocket upgrade (websocket.Options.Auth: a 401 on the upgrade
// starts a refresh or a login as it does over HTTP); for gRPC it is a
// credentials.PerRPCCredentials. dial.Server takes it as its Auth.
//
// Errors wrap the package's sentinels (ErrResourceMismatch,
// ErrIssuerMismatch, ErrStepUpLimit, ...) or are a *ProtocolError; through
// streamablehttp they arrive inside a *streamablehttp.AuthError, which
// wraps transport.ErrAuthRequired. No token, secret or code appears in an
// error, a log line or the printed form of any type of the package.
package auth
