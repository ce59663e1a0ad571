package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tako-mcp/tako/streamablehttp"
)

// httpTransport is Streamable HTTP with each client's own defaults, as a
// program that passes no HTTP client gets: tako's streamablehttp.Dial with
// nil options (its own transport, 64 idle connections per host), the
// go-sdk's StreamableClientTransport with no HTTPClient
// (http.DefaultClient), mcp-go's default, and the floor on
// http.DefaultClient. The harness does not own their transports, so the
// server counts the connections (Endpoint.Conns).
var httpTransport = &Transport{
	Name:  "http",
	Serve: serveHTTP(false),
	kinds: []kind{
		{"floor", func(ctx context.Context, ep *Endpoint) (client, error) {
			return startFloorHTTP(ctx, ep.URL, http.DefaultClient)
		}},
		{"tako", func(ctx context.Context, ep *Endpoint) (client, error) {
			return startTakoHTTP(ctx, ep.URL, nil)
		}},
		{"gosdk", func(ctx context.Context, ep *Endpoint) (client, error) {
			return startGoSDKHTTP(ctx, ep.URL, nil)
		}},
		{"mcpgo", func(ctx context.Context, ep *Endpoint) (client, error) {
			return startMCPGoHTTP(ctx, ep.URL, nil)
		}},
	},
}

// httpTunedTransport is Streamable HTTP with one tuned client shared by
// whichever client runs in the process (TunedHTTPClient): the figures of a
// program that configures its pool, and of the clients' designs apart from
// their defaults.
var httpTunedTransport = &Transport{
	Name:  "http-tuned",
	Serve: serveHTTP(false),
	kinds: []kind{
		{"floor", func(ctx context.Context, ep *Endpoint) (client, error) {
			return startFloorHTTP(ctx, ep.URL, tunedClient())
		}},
		{"tako", func(ctx context.Context, ep *Endpoint) (client, error) {
			return startTakoHTTP(ctx, ep.URL, tunedClient())
		}},
		{"gosdk", func(ctx context.Context, ep *Endpoint) (client, error) {
			return startGoSDKHTTP(ctx, ep.URL, tunedClient())
		}},
		{"mcpgo", func(ctx context.Context, ep *Endpoint) (client, error) {
			return startMCPGoHTTP(ctx, ep.URL, tunedClient())
		}},
	},
}

// tuned is the shared tuned client: a clone of http.DefaultTransport with
// MaxIdleConnsPerHost 64 (at least the callers running at once, so a
// finished POST's connection always finds an idle slot), whose DialContext
// counts the TCP connections it opens.
var tuned struct {
	once   sync.Once
	client *http.Client
	tr     *http.Transport
	dials  atomic.Int64
}

func tunedClient() *http.Client {
	tuned.once.Do(func() {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			tuned.dials.Add(1)
			return d.DialContext(ctx, network, addr)
		}
		tuned.tr = tr
		tuned.client = &http.Client{Transport: tr}
	})
	return tuned.client
}

// TunedDials is how many TCP connections the shared tuned client has opened.
func TunedDials() int64 { return tuned.dials.Load() }

// CloseIdleHTTP closes the idle connections of the pools the harness's
// clients share (the default and the tuned one), whose goroutines would
// otherwise outlive the clients.
func CloseIdleHTTP() {
	if tuned.tr != nil {
		tuned.tr.CloseIdleConnections()
	}
	http.DefaultClient.CloseIdleConnections()
}

// serveHTTP starts servers/gosdk with -http (and -json when asked).
func serveHTTP(jsonResp bool) func(ctx context.Context, bins Bins, tools int) (*Endpoint, error) {
	return func(ctx context.Context, bins Bins, tools int) (*Endpoint, error) {
		args := []string{"-http", "127.0.0.1:0"}
		if jsonResp {
			args = append(args, "-json")
		}
		if tools > 0 {
			args = append(args, "-tools", strconv.Itoa(tools))
		}
		srv, err := startServerProcess(ctx, bins.GoSDK, args, "http://127.0.0.1:")
		if err != nil {
			return nil, err
		}
		return &Endpoint{URL: srv.url, Conns: srv.conns, close: srv.Close}, nil
	}
}

// serverProcess is a server the harness started (servers/gosdk with -http,
// or servers/bridge) that prints its URL on stdout and answers "conns"
// lines on stdin. Closing its stdin stops it.
type serverProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	lines chan string // stdout after the URL

	mu sync.Mutex // one "conns" question at a time
}

// httpServerExitWait bounds how long Close waits for the server to exit
// after its stdin is closed before it kills it.
const httpServerExitWait = 5 * time.Second

func startServerProcess(ctx context.Context, bin string, args []string, urlPrefix string) (*serverProcess, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
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
	s := &serverProcess{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				line <- strings.TrimSpace(sc.Text())
				first = false
				continue
			}
			select {
			case s.lines <- sc.Text():
			default: // nobody asked: drop it rather than block the server
			}
		}
		if first {
			close(line)
		}
		// The pipe ends when the server exits.
		io.Copy(io.Discard, stdout)
	}()
	select {
	case s.url = <-line:
	case <-ctx.Done():
		return nil, errors.Join(ctx.Err(), s.Close())
	}
	if !strings.HasPrefix(s.url, urlPrefix) {
		return nil, errors.Join(fmt.Errorf("server printed %q, want its URL", s.url), s.Close())
	}
	return s, nil
}

// conns asks the server how many TCP connections it has accepted.
func (s *serverProcess) conns() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.stdin, "conns\n"); err != nil {
		return 0, err
	}
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case l := <-s.lines:
		var n int64
		if _, err := fmt.Sscanf(l, "conns %d", &n); err != nil {
			return 0, fmt.Errorf("server answered %q to conns", l)
		}
		return n, nil
	case <-t.C:
		return 0, errors.New("server did not answer conns")
	}
}

func (s *serverProcess) Close() error {
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

// startTakoHTTP dials with nil options when hc is nil: tako's own default.
func startTakoHTTP(ctx context.Context, url string, hc *http.Client) (client, error) {
	var opts *streamablehttp.Options
	if hc != nil {
		opts = &streamablehttp.Options{HTTPClient: hc}
	}
	conn, err := streamablehttp.Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	return connectTako(ctx, conn)
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

// startMCPGoHTTP uses mcp-go's default client when hc is nil.
func startMCPGoHTTP(ctx context.Context, url string, hc *http.Client) (client, error) {
	var opts []mcpgotransport.StreamableHTTPCOption
	if hc != nil {
		opts = append(opts, mcpgotransport.WithHTTPBasicClient(hc))
	}
	c, err := mcpgoclient.NewStreamableHttpClient(url, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return initMCPGo(ctx, c)
}
