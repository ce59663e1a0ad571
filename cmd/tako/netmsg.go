package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
)

// Words for the failures of the network beneath a transport: the peer
// refused the connection, its name does not resolve, its certificate does
// not verify. Each layer above them wraps the error once more ("mcp
// handshake: initialize: write: mcp http: initialize: Post ...: dial tcp
// ...: connect: connection refused"); a person wants the address and the
// reason, once.

// netFailure says why target could not be reached, in one clause, with what
// to check; ok is false for errors that are not about the network. target
// is the URL or address the person gave, used when the error names none.
func netFailure(err error, target string) (msg string, ok bool) {
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != "" {
		target = ue.URL
	}
	why, hint := netReason(err)
	if why == "" {
		return "", false
	}
	if target == "" {
		return why + hint, true
	}
	return fmt.Sprintf("cannot reach %s: %s%s", target, why, hint), true
}

// netReason is the reason and the hint of a network failure, both empty
// for an error that is not one.
func netReason(err error) (why, hint string) {
	var (
		dnsErr   *net.DNSError
		unknown  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invalid  x509.CertificateInvalidError
		recErr   tls.RecordHeaderError
		verify   *tls.CertificateVerificationError
		opErr    *net.OpError
		addrErr  *net.AddrError
		tlsAlert tls.AlertError
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", " (is the server running, and is the port right?)"
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was reset", " (does the server speak this protocol on that port?)"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to the host", " (is the address right, and the network up?)"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return fmt.Sprintf("no such host %q", dnsErr.Name), " (is the name spelled right?)"
		}
		return fmt.Sprintf("cannot look up %q: %s", dnsErr.Name, dnsErr.Err), ""
	case errors.As(err, &recErr):
		return "the server does not speak TLS", " (try http:// or ws://, or --plaintext)"
	case errors.As(err, &unknown):
		return "the server's certificate is signed by an authority this machine does not trust", ""
	case errors.As(err, &hostErr):
		return fmt.Sprintf("the server's certificate is not for %q", hostErr.Host), ""
	case errors.As(err, &invalid):
		return "the server's certificate is not valid: " + certReason(invalid), ""
	case errors.As(err, &verify):
		return "the server's certificate does not verify: " + verify.Err.Error(), ""
	case errors.As(err, &tlsAlert):
		return "the TLS handshake failed: " + tlsAlert.Error(), ""
	case errors.As(err, &addrErr):
		return addrErr.Err + " " + addrErr.Addr, ""
	case errors.As(err, &opErr) && opErr.Timeout():
		return "the connection timed out", " (is the address right, and is a firewall in the way?)"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		var se *os.SyscallError
		if errors.As(opErr.Err, &se) {
			return se.Err.Error(), ""
		}
		return opErr.Err.Error(), ""
	}
	return "", ""
}

func certReason(e x509.CertificateInvalidError) string {
	switch e.Reason {
	case x509.Expired:
		return "it has expired or is not valid yet"
	case x509.NotAuthorizedToSign:
		return "it was signed by a certificate that may not sign"
	}
	if e.Detail != "" {
		return e.Detail
	}
	return "reason " + fmt.Sprint(e.Reason)
}

// jsonErrorMessage is the message of an error answer in JSON, as servers
// write them in an HTTP body: a JSON-RPC error ({"error":{"message":...}}),
// an OAuth-style {"error":"...","error_description":"..."}, or
// {"message":...}; "" when body is none of these.
func jsonErrorMessage(body string) string {
	body = strings.TrimSpace(body)
	if !strings.HasPrefix(body, "{") {
		return ""
	}
	var v struct {
		Error       json.RawMessage `json:"error"`
		Description string          `json:"error_description"`
		Message     string          `json:"message"`
		Detail      string          `json:"detail"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return ""
	}
	var inner struct {
		Message string `json:"message"`
	}
	var code string
	switch {
	case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
		return cleanLine(inner.Message)
	case json.Unmarshal(v.Error, &code) == nil && code != "":
		if v.Description != "" {
			return cleanLine(code + ": " + v.Description)
		}
		return cleanLine(code)
	case v.Message != "":
		return cleanLine(v.Message)
	case v.Detail != "":
		return cleanLine(v.Detail)
	}
	return ""
}
