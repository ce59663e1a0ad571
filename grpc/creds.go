package mcpgrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"google.golang.org/grpc/credentials"
)

// peekWait bounds how long a client handshake waits for the server's first
// bytes; see refusalCreds.
const peekWait = 2 * time.Second

// refusalCreds makes a refused client certificate visible as what it is.
//
// In TLS 1.3 the server checks the client's certificate after the client
// has finished its side of the handshake, so a refusal (no certificate, an
// unknown CA, an expired certificate) arrives as an alert on the first
// read. grpc writes first, and reports the closed connection as "broken
// pipe", which says nothing. So, after the handshake, this reads the
// server's first record (a gRPC server sends its HTTP/2 settings at once):
// an alert fails the handshake with the alert's own words ("tls:
// certificate required", "tls: unknown certificate authority", "tls:
// expired certificate"), and data is kept for grpc to read. A server that
// stays silent for peekWait is given the benefit of the doubt.
type refusalCreds struct {
	credentials.TransportCredentials
}

func (r refusalCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := r.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(peekWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetReadDeadline(deadline); err != nil {
		conn.Close()
		return nil, nil, err
	}
	buf := make([]byte, 512)
	n, rerr := conn.Read(buf)
	if rerr != nil && !errors.Is(rerr, os.ErrDeadlineExceeded) {
		conn.Close()
		return nil, nil, fmt.Errorf("the server refused the TLS connection: %w", rerr)
	}
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return &prefixConn{Conn: conn, prefix: buf[:n]}, info, nil
}

func (r refusalCreds) Clone() credentials.TransportCredentials {
	return refusalCreds{r.TransportCredentials.Clone()}
}

// prefixConn returns prefix before reading from Conn. Only grpc's reader
// goroutine reads, so it needs no lock.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
