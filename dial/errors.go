package dial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io/fs"
	"net"
	"os/exec"
	"strings"
	"syscall"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/websocket"
)

// summary words err for an *Error: the message of the innermost error in
// its chain that still says something. An error made with
// fmt.Errorf("step: %w", inner) says what inner says plus a step the
// *Error's Op already names, so the walk goes down while the inner
// message is the outer one's tail; it stops at the errors whose own words
// are the telling ones (a refused connection with its address, an HTTP
// status with its body, a process's exit with its stderr, a certificate
// problem, a JSON-RPC error), and above a bare errno ("connection
// refused" without the address).
func summary(err error) string {
	cur := err
	for !telling(cur) {
		next := inner(cur)
		if next == nil || bare(next) {
			break
		}
		cur = next
	}
	msg := cur.Error()
	if msg == context.DeadlineExceeded.Error() {
		return "timed out"
	}
	return msg
}

// inner is the error err wraps when err only adds words before it, or
// (for an error that wraps several, "%w (%w)") a remark in parentheses
// after it; nil otherwise.
func inner(err error) error {
	msg := err.Error()
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil && strings.HasSuffix(msg, next.Error()) {
			return next
		}
	case interface{ Unwrap() []error }:
		if errs := u.Unwrap(); len(errs) > 0 && errs[0] != nil {
			first := errs[0].Error()
			if i := strings.Index(msg, first); i >= 0 {
				rest := msg[i+len(first):]
				if rest == "" || strings.HasPrefix(rest, " (") && strings.HasSuffix(rest, ")") {
					return errs[0]
				}
			}
		}
	}
	return nil
}

// telling reports whether err's own message is the one to show.
func telling(err error) bool {
	switch err.(type) {
	case *net.OpError, *net.DNSError, *exec.Error, *fs.PathError, *stdio.ExitError,
		*streamablehttp.StatusError, *streamablehttp.AuthError, *streamablehttp.ContentTypeError, *streamablehttp.RedirectError,
		*websocket.HandshakeError, *mcp.Error,
		x509.UnknownAuthorityError, x509.CertificateInvalidError, x509.HostnameError, *tls.CertificateVerificationError,
		tls.AlertError, tls.RecordHeaderError:
		return true
	}
	return false
}

// bare reports an error too terse to stand alone (an errno).
func bare(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && err.Error() == errno.Error()
}
