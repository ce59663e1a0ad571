package mcpgrpc

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// TLSOptions name the certificates of one end of a mutual TLS connection.
// Each certificate comes from a file or from PEM bytes; a file is read
// again on a later handshake when its modification time or size changed, so
// rotating certificates (cert-manager, a cron job) needs no restart.
//
// The zero value is not useful: a client needs at least the CA that signed
// the server (or the system roots, with UseSystemRoots); a server needs its
// own certificate and key.
type TLSOptions struct {
	// CertFile and KeyFile, or CertPEM and KeyPEM, are this end's
	// certificate chain and private key. A client without them connects
	// without a client certificate (a server that requires one refuses it).
	CertFile, KeyFile string
	CertPEM, KeyPEM   []byte

	// CAFile or CAPEM holds the certificates that sign the other end: for a
	// client, the server's CA (pinning it: the system roots are not used
	// unless UseSystemRoots); for a server, the CA of its clients, which
	// makes a client certificate required and verified.
	CAFile string
	CAPEM  []byte

	// UseSystemRoots lets a client trust the system's roots as well as, or
	// instead of, CAFile/CAPEM.
	UseSystemRoots bool

	// ServerName is the name a client expects in the server's
	// certificate. Empty means the host part of the address dialled.
	ServerName string

	// MinVersion is the oldest TLS version accepted. Zero means TLS 1.3.
	MinVersion uint16

	// Logger receives a line at Warn when a file changed on disk but could
	// not be loaded again (emptied, half written, removed), and the last
	// good certificate or CA is kept. Nil discards it.
	Logger *slog.Logger
}

// ErrTLSConfig reports TLS options that cannot work: a certificate without
// its key, PEM that holds no certificate, a server without a certificate.
var ErrTLSConfig = errors.New("mcpgrpc: bad TLS options")

// ClientTLSConfig builds the *tls.Config of a client from o. The client
// certificate is read through GetClientCertificate, so a rotated file is
// used on the next connection.
func ClientTLSConfig(o TLSOptions) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: minVersion(o.MinVersion), ServerName: o.ServerName}
	pool, err := o.caPool(o.UseSystemRoots)
	if err != nil {
		return nil, err
	}
	if pool == nil && !o.UseSystemRoots {
		return nil, fmt.Errorf("%w: a client needs the server's CA (CAFile or CAPEM) or UseSystemRoots", ErrTLSConfig)
	}
	cfg.RootCAs = pool
	kp, err := o.keyPair()
	if err != nil {
		return nil, err
	}
	if kp != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return kp.get()
		}
	}
	return cfg, nil
}

// ServerTLSConfig builds the *tls.Config of a server from o. With a CA, a
// client certificate is required and verified against it
// (tls.RequireAndVerifyClientCert); without one, clients are not asked for
// a certificate. The server certificate and the client CA are read again
// from their files when these change, on the next handshake.
//
// Whether client certificates are required is decided here, once: a CA
// file that is later emptied, half written or removed never turns client
// authentication off. Such a reload fails, the last good CA stays in use
// (o.Logger is told), and the file is read again when it changes again.
func ServerTLSConfig(o TLSOptions) (*tls.Config, error) {
	kp, err := o.keyPair()
	if err != nil {
		return nil, err
	}
	if kp == nil {
		return nil, fmt.Errorf("%w: a server needs its certificate and key", ErrTLSConfig)
	}
	requireClient := o.CAFile != "" || len(o.CAPEM) > 0
	ca := &reloading[*x509.CertPool]{what: "client CA", files: []string{o.CAFile}, log: o.Logger, load: func() (*x509.CertPool, error) {
		pool, err := o.caPool(false)
		if err == nil && pool == nil && requireClient {
			// An empty file: caPool's "no CA configured" would mean
			// "no client authentication".
			err = fmt.Errorf("%w: the CA file %s is empty", ErrTLSConfig, o.CAFile)
		}
		return pool, err
	}}
	if _, err := ca.get(); err != nil {
		return nil, err
	}
	base := &tls.Config{MinVersion: minVersion(o.MinVersion)}
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		cert, err := kp.get()
		if err != nil {
			return nil, err
		}
		cfg := &tls.Config{MinVersion: base.MinVersion, Certificates: []tls.Certificate{*cert}}
		if requireClient {
			pool, err := ca.get()
			if err != nil {
				return nil, err
			}
			if pool == nil { // cannot happen: the first load succeeded
				return nil, fmt.Errorf("%w: no client CA to verify the client with", ErrTLSConfig)
			}
			cfg.ClientCAs = pool
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
		return cfg, nil
	}
	return base, nil
}

func minVersion(v uint16) uint16 {
	if v == 0 {
		return tls.VersionTLS13
	}
	return v
}

// caPool reads the CA certificates; nil when none are configured.
func (o *TLSOptions) caPool(system bool) (*x509.CertPool, error) {
	pemBytes := o.CAPEM
	if o.CAFile != "" {
		b, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: CA file: %v", ErrTLSConfig, err)
		}
		pemBytes = b
	}
	if len(pemBytes) == 0 {
		if system {
			return x509.SystemCertPool()
		}
		return nil, nil
	}
	pool := x509.NewCertPool()
	if system {
		if sp, err := x509.SystemCertPool(); err == nil {
			pool = sp
		}
	}
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("%w: the CA PEM holds no certificate", ErrTLSConfig)
	}
	return pool, nil
}

// keyPair returns the loader of this end's certificate, nil when none is
// configured.
func (o *TLSOptions) keyPair() (*reloading[*tls.Certificate], error) {
	hasFiles := o.CertFile != "" || o.KeyFile != ""
	hasPEM := len(o.CertPEM) > 0 || len(o.KeyPEM) > 0
	switch {
	case hasFiles && hasPEM:
		return nil, fmt.Errorf("%w: certificate given both as files and as PEM", ErrTLSConfig)
	case hasFiles && (o.CertFile == "" || o.KeyFile == ""):
		return nil, fmt.Errorf("%w: a certificate file needs its key file and the other way round", ErrTLSConfig)
	case hasPEM && (len(o.CertPEM) == 0 || len(o.KeyPEM) == 0):
		return nil, fmt.Errorf("%w: certificate PEM needs its key PEM and the other way round", ErrTLSConfig)
	case !hasFiles && !hasPEM:
		return nil, nil
	}
	certFile, keyFile, certPEM, keyPEM := o.CertFile, o.KeyFile, bytes.Clone(o.CertPEM), bytes.Clone(o.KeyPEM)
	r := &reloading[*tls.Certificate]{what: "certificate", files: []string{certFile, keyFile}, log: o.Logger, load: func() (*tls.Certificate, error) {
		var c tls.Certificate
		var err error
		if certFile != "" {
			c, err = tls.LoadX509KeyPair(certFile, keyFile)
		} else {
			c, err = tls.X509KeyPair(certPEM, keyPEM)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: certificate and key: %v", ErrTLSConfig, err)
		}
		return &c, nil
	}}
	if _, err := r.get(); err != nil {
		return nil, err
	}
	return r, nil
}

// reloading holds a value loaded from files and loads it again when one of
// the files changed (modification time or size). A failed reload keeps
// serving the last good value, so a half-written rotation neither takes the
// server down nor weakens it; it is logged once, and the value is loaded
// again when the files change again.
type reloading[T any] struct {
	load  func() (T, error)
	files []string // empty names are ignored
	what  string   // what is loaded, for the log line
	log   *slog.Logger

	mu     sync.Mutex
	val    T
	loaded bool
	stamp  string // of the files val was loaded from
	failed string // of the files the last reload failed on
}

func (r *reloading[T]) get() (T, error) {
	stamp := r.fileStamp()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded && (stamp == r.stamp || stamp == r.failed) {
		return r.val, nil
	}
	v, err := r.load()
	if err != nil {
		if r.loaded {
			r.failed = stamp
			if r.log != nil {
				r.log.Warn("mcpgrpc: reloading the "+r.what+" failed; keeping the one loaded before", "files", r.fileNames(), "err", err)
			}
			return r.val, nil
		}
		return v, err
	}
	r.val, r.loaded, r.stamp, r.failed = v, true, stamp, ""
	return v, nil
}

// fileStamp sums up the files' state; a missing file has a stamp of its
// own, so that its return is noticed.
func (r *reloading[T]) fileStamp() string {
	var b []byte
	for _, f := range r.files {
		if f == "" {
			continue
		}
		if fi, err := os.Stat(f); err == nil {
			b = fmt.Appendf(b, "%s:%d:%d;", f, fi.ModTime().UnixNano(), fi.Size())
		} else {
			b = fmt.Appendf(b, "%s:missing;", f)
		}
	}
	return string(b)
}

func (r *reloading[T]) fileNames() string {
	var names []string
	for _, f := range r.files {
		if f != "" {
			names = append(names, f)
		}
	}
	return strings.Join(names, ", ")
}
