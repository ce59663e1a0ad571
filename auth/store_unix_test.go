//go:build unix

package auth

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFileStoreModesUnderUmaskZero: the token directory is 0700 and its
// files (records, locks) 0600 whatever the process umask. The test runs
// under umask 0 (saved and restored), so that the modes are the ones the
// code asks for: under a umask of 077, as some machines have, a
// directory made 0755 would come out 0700 and pass. Before this test a
// directory made 0755 passed every test.
func TestFileStoreModesUnderUmaskZero(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "config", "tako", "auth")
	fs := &FileStore{Dir: dir}
	ctx := context.Background()
	rec := &Record{Resource: "https://mcp.example.com/mcp", Issuer: "https://as.example.com",
		Token: &Token{AccessToken: "a", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}}
	if err := fs.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	unlock, err := fs.Lock(ctx, rec.Resource)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o700 {
		t.Errorf("the token directory is %#o, want 0700", m)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 2 {
		t.Errorf("files %v, want a record and a lock", files)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s is %#o, want 0600", filepath.Base(f), m)
		}
	}
}
