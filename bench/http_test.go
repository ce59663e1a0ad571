package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// httpKinds are the clients over Streamable HTTP, in the order of the perf
// anchors' table. Each runs against its own servers/gosdk started with
// -http 127.0.0.1:0 (stateful, application/json answers), and each is
// handed an *http.Client of the harness's (see countingHTTPClient), so that
// the harness can count the TCP connections it opens. All four clients
// accept one.
var httpKinds = []kind{
	httpKind("floor", startFloorHTTP),
	httpKind("tako", startTakoHTTP),
	httpKind("gosdk", startGoSDKHTTP),
	httpKind("mcpgo", startMCPGoHTTP),
}

// httpStarter starts one client against the endpoint url, sending every
// request through hc.
type httpStarter func(ctx context.Context, url string, hc *http.Client) (client, error)

// httpKind makes a kind whose start runs a server in HTTP mode and a client
// against it; Close of the client it returns ends both.
func httpKind(name string, start httpStarter) kind {
	return kind{name: name, start: func(ctx context.Context, bin string) (client, error) {
		srv, err := startHTTPServer(ctx, bin)
		if err != nil {
			return nil, err
		}
		hc, tr, conns := countingHTTPClient()
		c, err := start(ctx, srv.url, hc)
		if err != nil {
			tr.CloseIdleConnections()
			return nil, errors.Join(err, srv.Close())
		}
		return &httpSession{client: c, srv: srv, tr: tr, conns: conns}, nil
	}}
}

// httpSession is one client with its server and its transport.
type httpSession struct {
	client
	srv   *httpServer
	tr    *http.Transport
	conns *atomic.Int64 // TCP connections dialled so far
}

// Close closes the client, then the idle connections of the transport the
// harness lent it (a client that was handed an *http.Client does not own
// its transport, and the pooled connections' goroutines would otherwise
// outlive the benchmark), then the server.
func (s *httpSession) Close() error {
	err := s.client.Close()
	s.tr.CloseIdleConnections()
	return errors.Join(err, s.srv.Close())
}

// countingHTTPClient is a client on a clone of http.DefaultTransport (the
// settings every peer uses when given no client of its own: at most 2 idle
// connections per host, keep-alives on) whose DialContext counts the TCP
// connections opened. The server is another process, so the client side is
// where they can be counted.
func countingHTTPClient() (*http.Client, *http.Transport, *atomic.Int64) {
	conns := new(atomic.Int64)
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conns.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}, tr, conns
}

// httpServer is servers/gosdk running with -http. Closing its stdin stops
// it.
type httpServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
}

// httpServerExitWait bounds how long Close waits for the server to exit
// after its stdin is closed before it kills it.
const httpServerExitWait = 5 * time.Second

func startHTTPServer(ctx context.Context, bin string) (*httpServer, error) {
	cmd := exec.Command(bin, "-http", "127.0.0.1:0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &httpServer{cmd: cmd, stdin: stdin}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(l)
		// The server prints nothing else; draining keeps a stray write
		// from blocking it. The pipe ends when the server exits.
		io.Copy(io.Discard, stdout)
	}()
	select {
	case s.url = <-line:
	case <-ctx.Done():
		return nil, errors.Join(ctx.Err(), s.Close())
	}
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		return nil, errors.Join(fmt.Errorf("server printed %q, want its URL", s.url), s.Close())
	}
	return s, nil
}

func (s *httpServer) Close() error {
	s.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	t := time.NewTimer(httpServerExitWait)
	defer t.Stop()
	select {
	case err := <-exited:
		return err
	case <-t.C:
		s.cmd.Process.Kill()
		<-exited
		return fmt.Errorf("server did not exit within %v of its stdin closing; killed", httpServerExitWait)
	}
}

// --- tako ---

func startTakoHTTP(ctx context.Context, url string, hc *http.Client) (client, error) {
	conn, err := streamablehttp.Dial(ctx, url, &streamablehttp.Options{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, err // Connect closed conn
	}
	return &takoClient{s: s}, nil
}

// --- the official Go SDK ---

func startGoSDKHTTP(ctx context.Context, url string, hc *http.Client) (client, error) {
	c := gosdk.NewClient(&gosdk.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc},
		&gosdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, err
	}
	return &goSDKClient{cs: cs}, nil
}

// --- mcp-go ---

func startMCPGoHTTP(ctx context.Context, url string, hc *http.Client) (client, error) {
	c, err := mcpgoclient.NewStreamableHttpClient(url, mcpgotransport.WithHTTPBasicClient(hc))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	var req mcpgo.InitializeRequest
	req.Params.ProtocolVersion = protocolVersion
	req.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1.0.0"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		c.Close()
		return nil, err
	}
	if res.ProtocolVersion != protocolVersion {
		c.Close()
		return nil, fmt.Errorf("mcp-go negotiated %q, want %q", res.ProtocolVersion, protocolVersion)
	}
	return &mcpGoClient{c: c}, nil
}
