// Command soak runs mixed MCP traffic through tako's WebSocket and gRPC
// bridges, with faults injected, for a while, and prints the process's
// goroutines and memory every interval, so that a leak shows as a slope:
//
//	cd interop && go run ./cmd/soak -duration 1h -interval 1m
//
// Everything runs in this one process on loopback: the reference server
// (mcptest), a websocket.Handler and an mcpgrpc server in front of it, and
// tako's clients. Traffic: echo calls, tool listings, 256 KiB results,
// calls cancelled mid-flight, server requests answered by handlers; faults:
// the server delays, drops and dies on some calls, and clients drop their
// connections and reconnect. The last line gives min, max and last of each
// figure after a warm-up interval.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

func main() {
	duration := flag.Duration("duration", 10*time.Minute, "how long to run")
	interval := flag.Duration("interval", 30*time.Second, "how often to print the figures")
	workers := flag.Int("workers", 4, "concurrent callers per transport")
	flag.Parse()
	if err := run(*duration, *interval, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

var calls, failures, reconnects, dialFailures atomic.Int64

func run(duration, interval time.Duration, workers int) error {
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	// Two servers: the WebSocket bridge gives each client a server of its
	// own, so one that dies takes only that client's connection; the gRPC
	// bridge has one backend for all, whose death would end the bridge (as
	// tako bridge --listen-grpc ends), so it gets no deaths. Neither keeps
	// a record of what it received: a test server's memory is not the
	// client's.
	srv := mcptest.NewReference(mcptest.Options{DisableRecording: true})
	gsrv := mcptest.NewReference(mcptest.Options{DisableRecording: true})

	// The WebSocket bridge: each client gets its own in-process server.
	wsh := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		client, server := transport.Pipe()
		go srv.Serve(ctx, server)
		return client, nil
	}}
	wsLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: wsh}
	go hs.Serve(wsLis)
	defer func() { hs.Close(); wsh.Close() }()
	wsURL := "ws://" + wsLis.Addr().String() + "/mcp"

	// The gRPC bridge: one backend Session, as tako bridge --listen-grpc has.
	deps := mcpgrpc.NewDependents()
	bc, bs := transport.Pipe()
	go gsrv.Serve(ctx, bs)
	backend, err := transport.Connect(ctx, bc, &transport.Options{Handlers: deps.Handlers()})
	if err != nil {
		return err
	}
	defer backend.Close()
	gs, err := mcpgrpc.NewServer(backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps})
	if err != nil {
		return err
	}
	gLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go gs.Serve(gLis)
	defer gs.Close()
	gAddr := gLis.Addr().String()

	handlers := transport.Handlers{
		Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"ok"}`), Model: "soak"}, nil
		},
		Roots: func(ctx context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///soak"}}, nil },
	}
	dialWS := func(ctx context.Context) (transport.Transport, error) {
		c, err := websocket.Dial(ctx, wsURL, nil)
		if err != nil {
			return nil, err
		}
		return transport.Connect(ctx, c, &transport.Options{Handlers: handlers})
	}
	dialGRPC := func(ctx context.Context) (transport.Transport, error) {
		return mcpgrpc.Dial(ctx, gAddr, &mcpgrpc.Options{InsecurePlaintext: true, Handlers: handlers})
	}

	var wg sync.WaitGroup
	for i := range workers {
		for name, dial := range map[string]func(context.Context) (transport.Transport, error){"ws": dialWS, "grpc": dialGRPC} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				worker(ctx, name, dial, rand.New(rand.NewPCG(uint64(i), uint64(len(name)))))
			}()
		}
	}
	// Faults on the server side, toggled now and then.
	wg.Add(1)
	go func() {
		defer wg.Done()
		faults(ctx, srv, true)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		faults(ctx, gsrv, false)
	}()

	var rss, gor, heap series
	tick := time.NewTicker(interval)
	defer tick.Stop()
	start := time.Now()
	fmt.Println("elapsed\tgoroutines\trss_mib\theap_inuse_mib\tcalls\tfailures\treconnects")
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			fmt.Printf("after warm-up: goroutines %s; rss MiB %s; heap in use MiB %s; %d calls, %d failed (faults injected), %d connections, %d failed dials\n",
				gor, rss, heap, calls.Load(), failures.Load(), reconnects.Load(), dialFailures.Load())
			return nil
		case <-tick.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		g, r, h := float64(runtime.NumGoroutine()), rssMiB(), float64(ms.HeapInuse)/(1<<20)
		fmt.Printf("%v\t%.0f\t%.1f\t%.1f\t%d\t%d\t%d\n", time.Since(start).Round(time.Second), g, r, h, calls.Load(), failures.Load(), reconnects.Load())
		if n > 0 { // the first interval is the warm-up
			gor.add(g)
			rss.add(r)
			heap.add(h)
		}
	}
}

// worker makes calls on one connection, reconnecting after faults and now
// and then on purpose.
func worker(ctx context.Context, name string, dial func(context.Context) (transport.Transport, error), rng *rand.Rand) {
	for ctx.Err() == nil {
		t, err := dial(ctx)
		if err != nil {
			dialFailures.Add(1)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		reconnects.Add(1)
		for i := 0; i < 200+rng.IntN(800) && ctx.Err() == nil; i++ {
			if !oneCall(ctx, t, rng) {
				break
			}
		}
		t.Close()
	}
}

// oneCall makes one call of a random kind; false means the connection is
// gone.
func oneCall(ctx context.Context, t transport.Transport, rng *rand.Rand) bool {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	switch k := rng.IntN(100); {
	case k < 50:
		_, err = t.CallTool(cctx, &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: json.RawMessage(`{"message":"soak"}`)})
	case k < 65:
		_, err = t.ListTools(cctx)
	case k < 75:
		_, err = t.CallTool(cctx, &mcp.CallToolParams{Name: mcptest.ToolBig, Arguments: json.RawMessage(`{"bytes":262144}`)})
	case k < 85:
		// Cancelled mid-flight.
		short, c2 := context.WithTimeout(cctx, time.Duration(1+rng.IntN(20))*time.Millisecond)
		_, err = t.CallTool(short, &mcp.CallToolParams{Name: mcptest.ToolSleep, Arguments: json.RawMessage(`{"ms":1000}`)})
		c2()
		if err != nil && short.Err() != nil {
			err = nil
		}
	case k < 95:
		_, err = t.CallTool(cctx, &mcp.CallToolParams{Name: mcptest.ToolSample, Arguments: json.RawMessage(`{"prompt":"hi"}`)})
	default:
		_, err = t.CallTool(cctx, &mcp.CallToolParams{Name: mcptest.ToolRoots, Arguments: json.RawMessage(`{}`)})
	}
	calls.Add(1)
	if err != nil {
		failures.Add(1)
		return !strings.Contains(err.Error(), "closed") && !strings.Contains(err.Error(), "lost")
	}
	return true
}

// faults injects server faults on echo: a delay, a drop (the call's
// timeout ends it), a death (the connection ends), each for a few calls.
func faults(ctx context.Context, srv *mcptest.Server, deaths bool) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		switch i % 4 {
		case 0:
			srv.FaultTool(mcptest.ToolEcho, mcptest.Fault{Delay: 50 * time.Millisecond, Times: 20})
		case 1:
			srv.FaultTool(mcptest.ToolEcho, mcptest.Fault{Drop: true, Times: 2})
		case 2:
			if deaths {
				srv.FaultTool(mcptest.ToolEcho, mcptest.Fault{Die: true, Times: 1})
			}
		case 3:
			srv.ClearFaults()
		}
	}
}

type series struct {
	n              int
	min, max, last float64
	initialised    bool
}

func (s *series) add(v float64) {
	if !s.initialised || v < s.min {
		s.min = v
	}
	if !s.initialised || v > s.max {
		s.max = v
	}
	s.last, s.initialised = v, true
	s.n++
}

func (s series) String() string {
	return fmt.Sprintf("min %.1f max %.1f last %.1f", s.min, s.max, s.last)
}

// rssMiB reads the resident set size from /proc (Linux).
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
