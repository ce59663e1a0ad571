package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// ErrNotStored is returned by a TokenStore's Load when it holds nothing for
// the resource (and issuer).
var ErrNotStored = errors.New("auth: nothing stored")

// Token is an OAuth access token with what came with it. Its secrets are
// Secret values, so printing a Token never shows them.
type Token struct {
	AccessToken  Secret    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken Secret    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scope is the scope granted, when the server said (else the scope
	// requested).
	Scope string `json:"scope,omitempty"`
	// Obtained is when the token was issued (its response received), so
	// that its lifetime is known and the refresh margin can be scaled to
	// it: a token that lives 20 seconds is not refreshed 30 seconds early.
	Obtained time.Time `json:"obtained,omitzero"`
}

// validFor reports whether the token is usable for at least d more.
func (t *Token) validFor(d time.Duration) bool {
	if t == nil || t.AccessToken == "" {
		return false
	}
	return t.Expiry.IsZero() || time.Until(t.Expiry) > d
}

// lifetime is how long the token was issued for, or 0 when unknown.
func (t *Token) lifetime() time.Duration {
	if t.Obtained.IsZero() || t.Expiry.IsZero() || !t.Expiry.After(t.Obtained) {
		return 0
	}
	return t.Expiry.Sub(t.Obtained)
}

// ClientInfo is a client registration at one authorization server.
type ClientInfo struct {
	ClientID     string `json:"client_id"`
	ClientSecret Secret `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint authentication method:
	// client_secret_basic, client_secret_post, none or private_key_jwt.
	AuthMethod   string   `json:"token_endpoint_auth_method,omitempty"`
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	// Registered says the client was registered dynamically (RFC 7591), as
	// opposed to pre-registered or a client ID metadata document.
	Registered bool `json:"registered,omitempty"`
	// Scope is the scope the client was registered for (RFC 7591 §2): a
	// strict server grants no scope outside it, so a login that asks for
	// more registers again.
	Scope string `json:"scope,omitempty"`
}

// Record is what a TokenStore keeps for one resource at one authorization
// server: the client registration and the latest token. Credentials are
// bound to their authorization server (checklist §5.6): a Record is only
// used with the issuer it names.
type Record struct {
	// Resource is the canonical URI of the MCP server.
	Resource string `json:"resource"`
	// Issuer is the authorization server's issuer identifier; for a
	// 2025-03-26 server without metadata, its token endpoint.
	Issuer string     `json:"issuer"`
	Client ClientInfo `json:"client"`
	Token  *Token     `json:"token,omitempty"`
	// Indicator is the resource parameter sent for the token (RFC 8707):
	// the protected resource metadata's resource, or Resource.
	Indicator string `json:"resource_indicator,omitempty"`
	// Grant is the grant the token came from: "authorization_code",
	// "client_credentials", "jwt_bearer" or "enterprise_managed". A
	// program that reloads the record (tako after `tako login
	// --client-credentials`) can configure the same grant to renew it.
	Grant string `json:"grant,omitempty"`
	// DPoPKey is the private key, as a JSON Web Key, that Token is bound
	// to when it is a DPoP token (RFC 9449): a bound token is useless
	// without it, so it is kept beside the token, as secret as the token.
	DPoPKey Secret `json:"dpop_key,omitempty"`
	// Saved is when the record was last saved.
	Saved time.Time `json:"saved,omitzero"`
}

// The printing methods of Record, Token and ClientInfo have value
// receivers, so that a value is redacted as a pointer is: a log handler
// that marshals a value without them (slog's JSON handler) would show
// its secrets, which marshal as their value for the store's sake.

// String describes the record without its secrets.
func (r Record) String() string {
	return fmt.Sprintf("auth.Record{resource %s, issuer %s, client %s, token %v}", r.Resource, r.Issuer, r.Client.ClientID, r.Token != nil)
}

// GoString is String, for %#v.
func (r Record) GoString() string { return r.String() }

// LogValue logs the record without its secrets.
func (r Record) LogValue() slog.Value {
	return slog.GroupValue(slog.String("resource", r.Resource), slog.String("issuer", r.Issuer), slog.String("client_id", r.Client.ClientID))
}

// String describes the token without its secrets.
func (t Token) String() string {
	return fmt.Sprintf("auth.Token{type %s, expiry %s, refresh %v}", t.TokenType, t.Expiry.Format(time.RFC3339), t.RefreshToken != "")
}

// GoString is String, for %#v.
func (t Token) GoString() string { return t.String() }

// LogValue logs the token without its secrets.
func (t Token) LogValue() slog.Value { return slog.StringValue(t.String()) }

// String describes the client without its secret.
func (c ClientInfo) String() string {
	return fmt.Sprintf("auth.ClientInfo{%s, %s}", c.ClientID, c.AuthMethod)
}

// GoString is String, for %#v.
func (c ClientInfo) GoString() string { return c.String() }

// LogValue logs the client without its secret.
func (c ClientInfo) LogValue() slog.Value { return slog.StringValue(c.String()) }

// TokenStore keeps Records across runs. Implementations must be safe for
// concurrent use.
type TokenStore interface {
	// Load returns the record for resource at issuer; with issuer "" the
	// most recently saved record for resource at any issuer. It returns
	// an error wrapping ErrNotStored when there is none.
	Load(ctx context.Context, resource, issuer string) (*Record, error)
	// Save stores rec under (rec.Resource, rec.Issuer), replacing what was
	// there.
	Save(ctx context.Context, rec *Record) error
	// Delete removes the record for resource at issuer; with issuer "",
	// every record for resource. Deleting nothing is not an error.
	Delete(ctx context.Context, resource, issuer string) error
}

// LockingStore is a TokenStore that several processes may share (FileStore
// is one). Lock holds a lock on one resource's records, across processes,
// until unlock is called: a Client takes it around a refresh and reads the
// store again under it, so that two programs never both redeem one refresh
// token. With refresh-token rotation the second use of a token looks like a
// theft, and the server revokes the whole grant: the user is logged out.
// Lock honours ctx while it waits.
type LockingStore interface {
	TokenStore
	Lock(ctx context.Context, resource string) (unlock func(), err error)
}

// MemoryStore is a TokenStore in memory, for tests and for programs that
// authorize on every start. The zero value is ready to use.
type MemoryStore struct {
	mu   sync.Mutex
	recs map[[2]string]Record
}

// Format prints the store without its records' secrets, for every verb.
func (m *MemoryStore) Format(f fmt.State, _ rune) {
	m.mu.Lock()
	n := len(m.recs)
	m.mu.Unlock()
	fmt.Fprintf(f, "auth.MemoryStore{%d records}", n)
}

// Load implements TokenStore.
func (m *MemoryStore) Load(_ context.Context, resource, issuer string) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *Record
	for k, r := range m.recs {
		if k[0] != resource || (issuer != "" && k[1] != issuer) {
			continue
		}
		if best == nil || r.Saved.After(best.Saved) {
			rc := r
			best = &rc
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w for %s", ErrNotStored, resource)
	}
	return cloneRecord(best), nil
}

// Save implements TokenStore.
func (m *MemoryStore) Save(_ context.Context, rec *Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs == nil {
		m.recs = map[[2]string]Record{}
	}
	m.recs[[2]string{rec.Resource, rec.Issuer}] = *cloneRecord(rec)
	return nil
}

// Delete implements TokenStore.
func (m *MemoryStore) Delete(_ context.Context, resource, issuer string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.recs {
		if k[0] == resource && (issuer == "" || k[1] == issuer) {
			delete(m.recs, k)
		}
	}
	return nil
}

func cloneRecord(r *Record) *Record {
	c := *r
	c.Client.RedirectURIs = append([]string(nil), r.Client.RedirectURIs...)
	if r.Token != nil {
		t := *r.Token
		c.Token = &t
	}
	return &c
}

// FileStore is a TokenStore of files in one directory: one file per
// resource and authorization server, mode 0600 in a 0700 directory,
// written atomically (a temporary file renamed over the old one), so a
// crash never leaves half a token behind.
//
// The files hold tokens, refresh tokens, DPoP keys and, for a confidential
// client, its client secret, in plain text: they are protected by the
// file permissions alone. Keep Dir out of backups and synchronised folders.
//
// FileStore is a LockingStore: programs that share Dir (two tako commands
// at once, a shell beside an agent) take turns to refresh.
type FileStore struct {
	// Dir holds the files. It is created, mode 0700, on the first Save or
	// Lock.
	Dir string
	mu  sync.Mutex
}

// Lock implements LockingStore with an advisory lock on a file of the
// resource's in Dir (flock on Unix, LockFileEx on Windows). A process that
// dies holding it releases it with its files.
func (f *FileStore) Lock(ctx context.Context, resource string) (func(), error) {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("auth: token store: %w", err)
	}
	return lockFile(ctx, filepath.Join(f.Dir, digest(resource)+".lock"))
}

// DefaultFileStore returns a FileStore in the user's configuration
// directory: $XDG_CONFIG_HOME/tako/auth (or its equivalent on other
// systems).
func DefaultFileStore() (*FileStore, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("auth: no configuration directory: %w", err)
	}
	return &FileStore{Dir: filepath.Join(d, "tako", "auth")}, nil
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:12])
}

// path names the file of (resource, issuer): hashes, so that no URL
// character ends up in a file name, with the resource first so that all
// of a resource's files share a prefix.
func (f *FileStore) path(resource, issuer string) string {
	return filepath.Join(f.Dir, digest(resource)+"-"+digest(issuer)+".json")
}

// Load implements TokenStore.
func (f *FileStore) Load(_ context.Context, resource, issuer string) (*Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var files []string
	if issuer != "" {
		files = []string{f.path(resource, issuer)}
	} else {
		files, _ = filepath.Glob(filepath.Join(f.Dir, digest(resource)+"-*.json"))
	}
	var recs []*Record
	for _, p := range files {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("auth: token store: %w", err)
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("auth: token store: %s is corrupt: %w", filepath.Base(p), err)
		}
		if r.Resource != resource || (issuer != "" && r.Issuer != issuer) {
			continue
		}
		recs = append(recs, &r)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w for %s", ErrNotStored, resource)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Saved.After(recs[j].Saved) })
	return recs[0], nil
}

// Save implements TokenStore.
func (f *FileStore) Save(_ context.Context, rec *Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	tmp, err := os.CreateTemp(f.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: token store: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: token store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: token store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path(rec.Resource, rec.Issuer)); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	return nil
}

// Delete implements TokenStore.
func (f *FileStore) Delete(_ context.Context, resource, issuer string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var files []string
	if issuer != "" {
		files = []string{f.path(resource, issuer)}
	} else {
		files, _ = filepath.Glob(filepath.Join(f.Dir, digest(resource)+"-*.json"))
	}
	for _, p := range files {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("auth: token store: %w", err)
		}
	}
	return nil
}
