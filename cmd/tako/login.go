package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// TAKO_AUTH_DIR, when set, is where tako keeps tokens instead of the user's
// configuration directory (tests use it; so can a user with several
// identities).
const authDirEnv = "TAKO_AUTH_DIR"

// tokenStore is the file store tokens live in between runs.
func tokenStore() (*auth.FileStore, error) {
	if d := os.Getenv(authDirEnv); d != "" {
		return &auth.FileStore{Dir: d}, nil
	}
	return auth.DefaultFileStore()
}

// storedAuth is the authorization --http and --ws calls use: the tokens
// `tako login` stored, refreshed when they expire. It starts no
// interactive flow: a server that wants one gets `tako login` first. A
// token from `tako login --client-credentials` has no refresh token; the
// client stored with it obtains a new one with the same grant when the
// server refuses the old one.
func storedAuth(server string) (*auth.Client, error) {
	store, err := tokenStore()
	if err != nil {
		return nil, err
	}
	cfg := &auth.Config{Store: store}
	probe, err := auth.New(server, cfg)
	if err != nil {
		return nil, err
	}
	rec, err := store.Load(context.Background(), probe.Resource(), "")
	if err != nil || rec.Grant != "client_credentials" || rec.Client.ClientID == "" {
		return probe, nil
	}
	cfg.Grant = auth.ClientCredentials{}
	cfg.Client = &auth.StaticClient{ID: rec.Client.ClientID, Secret: rec.Client.ClientSecret, AuthMethod: rec.Client.AuthMethod, Issuer: rec.Issuer}
	return auth.New(server, cfg)
}

// runLogin is `tako login [flags] URL`: it connects to the MCP server at
// URL over Streamable HTTP, runs the authorization the server's 401 asks
// for (the browser, or with --client-credentials the client credentials
// grant) and stores the tokens for later calls.
func runLogin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cc := fs.Bool("client-credentials", false, "")
	clientID := fs.String("client-id", "", "")
	secretEnv := fs.String("client-secret-env", "TAKO_CLIENT_SECRET", "")
	scope := fs.String("scope", "", "")
	noBrowser := fs.Bool("no-browser", false, "")
	timeout := fs.Duration("timeout", 5*time.Minute, "")
	if err := fs.Parse(args); err != nil {
		return usagef("login: %v", err)
	}
	if fs.NArg() != 1 {
		return usagef("login wants one server URL: tako login [--client-credentials --client-id ID] URL")
	}
	server := fs.Arg(0)
	store, err := tokenStore()
	if err != nil {
		return err
	}
	cfg := &auth.Config{
		Store: store,
		User:  &auth.Loopback{Out: stderr, NoBrowser: *noBrowser, Timeout: *timeout},
	}
	if *clientID != "" {
		cfg.Client = &auth.StaticClient{ID: *clientID, Secret: auth.Secret(os.Getenv(*secretEnv))}
	}
	if *cc {
		if *clientID == "" {
			return usagef("login --client-credentials needs --client-id (and the secret in $%s)", *secretEnv)
		}
		cfg.Grant = auth.ClientCredentials{}
	}
	if *scope != "" {
		cfg.Scopes = splitScopes(*scope)
	}
	ac, err := auth.New(server, cfg)
	if err != nil {
		return usagef("login: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout+30*time.Second)
	defer cancel()
	conn, err := streamablehttp.Dial(ctx, server, &streamablehttp.Options{Auth: ac.StreamableHTTP()})
	if err != nil {
		return usagef("login: %v", err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		return loginError(err)
	}
	defer s.Close()
	if _, err := s.ListTools(ctx); err != nil {
		return loginError(err)
	}
	tok, _ := ac.Token(ctx)
	if tok == nil {
		fmt.Fprintf(stdout, "%s needs no authorization\n", server)
		return nil
	}
	fmt.Fprintf(stdout, "logged in to %s\n", server)
	return nil
}

// loginError is the one line a failed authorization gets (exit status 3).
func loginError(err error) error {
	var ae *streamablehttp.AuthError
	if errors.As(err, &ae) && ae.Cause != nil {
		return &failure{msg: "authorization failed: " + ae.Cause.Error(), err: err}
	}
	return &failure{msg: "authorization failed: " + err.Error(), err: err}
}

// runLogout is `tako logout URL`: it forgets what login stored for URL.
func runLogout(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return usagef("logout wants one server URL: tako logout URL")
	}
	store, err := tokenStore()
	if err != nil {
		return err
	}
	ac, err := auth.New(args[0], &auth.Config{Store: store})
	if err != nil {
		return usagef("logout: %v", err)
	}
	if err := ac.Logout(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "logged out of %s\n", args[0])
	return nil
}

// splitScopes reads --scope "a b" or "a,b".
func splitScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
}
