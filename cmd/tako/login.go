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

	"github.com/chzyer/readline"

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
// `tako login` stored, refreshed when they expire (with DPoP, with the key
// stored beside them). It runs no first login: a server that wants one
// gets an error naming `tako login URL`. When a person is at the terminal,
// a step-up (the server wants more scope than the login gave) opens the
// browser as `tako login` would. A token from `tako login
// --client-credentials` has no refresh token; the client stored with it
// obtains a new one with the same grant when the server refuses the old
// one.
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
	if err != nil {
		return probe, nil
	}
	if rec.Grant == "client_credentials" && rec.Client.ClientID != "" {
		cfg.Grant = auth.ClientCredentials{}
		cfg.Client = &auth.StaticClient{ID: rec.Client.ClientID, Secret: rec.Client.ClientSecret, AuthMethod: rec.Client.AuthMethod, Issuer: rec.Issuer}
		return auth.New(server, cfg)
	}
	cfg.DPoP = rec.DPoPKey != ""
	if readline.IsTerminal(int(os.Stdin.Fd())) {
		cfg.User = stepUpOnly{&auth.Loopback{}} // its lines go to the process's stderr
	}
	return auth.New(server, cfg)
}

// stepUpOnly runs its user step for a step-up only: a first login, or a
// login whose refresh token the server no longer takes, is the user's to
// start with `tako login`, which the error then names.
type stepUpOnly struct{ auth.UserStep }

func (s stepUpOnly) Start(ctx context.Context) (auth.Redirect, error) {
	if !auth.IsStepUp(ctx) {
		return nil, auth.ErrNoUserStep
	}
	return s.UserStep.Start(ctx)
}

// loginFlags are the flags of `tako login`.
type loginFlags struct {
	clientCredentials bool
	clientID          string
	secretEnv         string
	scope             string
	noBrowser         bool
	dpop              bool
	timeout           time.Duration
}

// runLogin is `tako login [flags] URL`: it runs a new authorization at the
// MCP server at URL (the browser, or with --client-credentials the client
// credentials grant), stores the tokens for later calls, and checks them
// with a connection and a tools/list.
func runLogin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var lf loginFlags
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&lf.clientCredentials, "client-credentials", false, "")
	fs.StringVar(&lf.clientID, "client-id", "", "")
	fs.StringVar(&lf.secretEnv, "client-secret-env", "TAKO_CLIENT_SECRET", "")
	fs.StringVar(&lf.scope, "scope", "", "")
	fs.BoolVar(&lf.noBrowser, "no-browser", false, "")
	fs.BoolVar(&lf.dpop, "dpop", false, "")
	fs.DurationVar(&lf.timeout, "timeout", auth.DefaultLoginTimeout, "")
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		_, err := io.WriteString(stdout, commandHelp("login"))
		return err
	}
	if err != nil {
		return usagef("login: %v", err)
	}
	if len(pos) != 1 {
		return usagef("login wants one server URL: tako login [--scope S] [--dpop] URL")
	}
	server := pos[0]
	store, err := tokenStore()
	if err != nil {
		return err
	}
	cfg := &auth.Config{
		Store:        store,
		User:         &auth.Loopback{Out: stderr, NoBrowser: lf.noBrowser, Timeout: lf.timeout},
		LoginTimeout: lf.timeout,
		DPoP:         lf.dpop,
	}
	if lf.clientID != "" {
		cfg.Client = &auth.StaticClient{ID: lf.clientID, Secret: auth.Secret(os.Getenv(lf.secretEnv))}
	}
	if lf.clientCredentials {
		if lf.clientID == "" {
			return usagef("login --client-credentials needs --client-id (and the secret in $%s)", lf.secretEnv)
		}
		cfg.Grant = auth.ClientCredentials{}
	}
	if lf.scope != "" {
		cfg.Scopes = splitScopes(lf.scope)
	}
	ac, err := auth.New(server, cfg)
	if err != nil {
		return usagef("login: %v", err)
	}
	if err := ac.Login(ctx); errors.Is(err, auth.ErrNotProtected) {
		fmt.Fprintf(stdout, "%s needs no authorization\n", server)
		return nil
	} else if err != nil {
		return loginError(server, err)
	}
	// The token works: a connection and a tools/list with it, as later
	// commands will make them.
	cctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	conn, err := streamablehttp.Dial(cctx, server, &streamablehttp.Options{Auth: ac})
	if err != nil {
		return usagef("login: %v", err)
	}
	s, err := transport.Connect(cctx, conn, nil)
	if err != nil {
		return loginError(server, err)
	}
	defer s.Close()
	if _, err := s.ListTools(cctx); err != nil {
		return loginError(server, err)
	}
	tok, _ := ac.Token(cctx)
	fmt.Fprintf(stdout, "logged in to %s%s\n", server, describeGrant(tok))
	if tok != nil && tok.RefreshToken == "" && !lf.clientCredentials && !tok.Expiry.IsZero() {
		fmt.Fprintf(stderr, "tako: note: the server granted no refresh token; run tako login %s again after %s, when this token expires\n",
			server, tok.Expiry.Local().Format("15:04"))
	}
	return nil
}

// describeGrant is what a person wants to know of a new token: its scope
// and type.
func describeGrant(tok *auth.Token) string {
	if tok == nil {
		return ""
	}
	var parts []string
	if s := strings.Fields(tok.Scope); len(s) > 0 {
		parts = append(parts, "scope "+strings.Join(s, " "))
	}
	if tok.TokenType == "DPoP" {
		parts = append(parts, "bound to a DPoP key")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// loginError is the one line a failed authorization gets.
func loginError(server string, err error) error {
	if msg, ok := authFailure(err); ok {
		return &failure{msg: msg, err: err}
	}
	var ae *streamablehttp.AuthError
	if errors.As(err, &ae) && ae.Cause != nil {
		err = ae.Cause
	}
	return &failure{msg: "login to " + server + " failed: " + strings.TrimPrefix(err.Error(), "auth: "), err: err}
}

// runLogout is `tako logout URL`: it revokes the tokens login stored for
// URL, where the server can revoke them, and forgets them.
func runLogout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("logout", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		_, err := io.WriteString(stdout, commandHelp("logout"))
		return err
	}
	if err != nil {
		return usagef("logout: %v", err)
	}
	if len(pos) != 1 {
		return usagef("logout wants one server URL: tako logout URL")
	}
	server := pos[0]
	store, err := tokenStore()
	if err != nil {
		return err
	}
	ac, err := auth.New(server, &auth.Config{Store: store})
	if err != nil {
		return usagef("logout: %v", err)
	}
	if _, err := store.Load(ctx, ac.Resource(), ""); errors.Is(err, auth.ErrNotStored) {
		fmt.Fprintf(stdout, "not logged in to %s\n", server)
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = ac.Logout(rctx)
	if errors.Is(err, auth.ErrNotRevoked) {
		fmt.Fprintf(stderr, "tako: warning: %s did not confirm the revocation (%s); the tokens are forgotten here but may stay valid there until they expire\n",
			server, strings.TrimPrefix(strings.TrimPrefix(err.Error(), auth.ErrNotRevoked.Error()+": "), "auth: "))
		fmt.Fprintf(stdout, "logged out of %s\n", server)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "logged out of %s\n", server)
	return nil
}

// parseInterspersed parses flags wherever they are among the positional
// arguments (login URL --no-browser as well as login --no-browser URL),
// as every other command does; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// splitScopes reads --scope "a b" or "a,b".
func splitScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
}
