package mcpgrpc_test

import (
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/testpki"
)

// pki is the set of certificates the tests use: testpki's CA with its
// server and client certificates, a client certificate of another CA and
// an expired one of the same CA.
type pki struct {
	*testpki.PKI
	stranger, stale *testpki.Leaf
}

func newPKI(t *testing.T) *pki {
	p := &pki{PKI: testpki.New(t)}
	p.stranger = testpki.NewCA(t, "someone else's CA").Issue(t, "stranger", nil)
	p.stale = p.CA.Issue(t, "stale", &testpki.Options{NotAfter: time.Now().Add(-time.Hour)})
	return p
}
