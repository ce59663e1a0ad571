// Command bridge serves the benchmark server (servers/gosdk, over stdio)
// to WebSocket or gRPC clients through tako's own bridges, the code behind
// `tako bridge --listen-ws` and `--listen-grpc`: websocket.Handler (a fresh
// stdio backend per client) or mcpgrpc.NewServer (one stdio Session for
// every client) with mutual TLS. The WebSocket and gRPC rows of the peer
// benchmarks run against it.
//
// It prints its URL (ws://127.0.0.1:PORT/) or address (127.0.0.1:PORT) on
// stdout, serves loopback addresses only, and exits when its stdin reaches
// EOF. As servers/gosdk -http does, it answers a "conns" line on stdin
// with "conns N", the TCP connections accepted so far.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

func main() {
	backend := flag.String("backend", "", "the stdio server to bridge (servers/gosdk)")
	tools := flag.Int("tools", 0, "passed to the backend as -tools")
	wsAddr := flag.String("ws", "", "serve WebSocket on this loopback address")
	grpcAddr := flag.String("grpc", "", "serve gRPC with mutual TLS on this loopback address")
	cert := flag.String("cert", "", "gRPC: server certificate (PEM)")
	key := flag.String("key", "", "gRPC: server key (PEM)")
	ca := flag.String("ca", "", "gRPC: CA of the client certificates (PEM)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("bench-bridge: ")
	if *backend == "" || (*wsAddr == "") == (*grpcAddr == "") {
		log.Fatal("need -backend and one of -ws or -grpc")
	}
	var args []string
	if *tools > 0 {
		args = []string{"-tools", strconv.Itoa(*tools)}
	}
	opts := &stdio.Options{Command: *backend, Args: args}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	addr := *wsAddr + *grpcAddr
	ln, err := listenLoopback(addr)
	if err != nil {
		log.Fatal(err)
	}
	var conns atomic.Int64
	cl := &countingListener{Listener: ln, n: &conns}
	ctx, cancel := context.WithCancel(ctx)
	go watchStdin(cancel, &conns)

	if *wsAddr != "" {
		err = serveWS(ctx, cl, opts)
	} else {
		err = serveGRPC(ctx, cl, opts, *cert, *key, *ca)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s: only loopback addresses are served", addr)
	}
	return net.Listen("tcp", addr)
}

// countingListener counts the connections it accepts: gRPC's server has no
// ConnState hook.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// watchStdin answers "conns" lines and cancels on EOF, the harness's
// "stop".
func watchStdin(cancel context.CancelFunc, conns *atomic.Int64) {
	defer cancel()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "conns" {
			fmt.Printf("conns %d\n", conns.Load())
		}
	}
}

func serveWS(ctx context.Context, ln net.Listener, opts *stdio.Options) error {
	h := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		return stdio.Start(ctx, opts)
	}}
	hs := &http.Server{Handler: h}
	fmt.Printf("ws://%s/\n", ln.Addr())
	go func() {
		<-ctx.Done()
		hs.Close()
		h.Close()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func serveGRPC(ctx context.Context, ln net.Listener, opts *stdio.Options, cert, key, ca string) error {
	tlsCfg, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertFile: cert, KeyFile: key, CAFile: ca})
	if err != nil {
		return err
	}
	conn, err := stdio.Start(ctx, opts)
	if err != nil {
		return err
	}
	sess, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	srv, err := mcpgrpc.NewServer(sess, &mcpgrpc.ServerOptions{TLS: tlsCfg})
	if err != nil {
		return err
	}
	fmt.Printf("%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
