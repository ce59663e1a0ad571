// Command peers measures tako's client against the peers' clients and a
// hand-written floor, and prints the tables of bench/README.md.
//
// peers runs itself again with -worker for one suite of one client over
// one transport. The per-call figures (latency, CPU, allocations,
// throughput, connections) come from the side suite: one process per
// transport in which every client, each against a server of its own,
// takes turns of 50 calls, so that all of them meet the same load on a
// shared machine. The others come from a process per client, so that peak
// RSS is that client's alone (the server is yet another process). Runs
// are interleaved (side, then floor, tako, gosdk, mcpgo for each suite,
// then again), -reps times (the side suite -side-reps times), and the
// tables give medians, with each client's ratio to the floor of its
// transport (for side figures, the median of the ratios within each run).
//
//	cd bench && go build -o ../bin/bench/ ./cmd/peers ./servers/gosdk ./servers/bridge
//	../bin/bench/peers -bins ../bin/bench
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tako-mcp/tako/bench"
)

func main() {
	binsDir := flag.String("bins", "", "directory holding the gosdk and bridge server binaries")
	worker := flag.String("worker", "", "internal: measure SUITE/TRANSPORT/CLIENT in this process and print the result as JSON")
	reps := flag.Int("reps", 3, "runs of each client")
	sideReps := flag.Int("side-reps", 7, "runs of the side suite (the per-call figures, whose ratios are the closest to the goals)")
	scaleReps := flag.Int("scale-reps", 1, "runs of the suites that measure cost as the work grows (sessions, scale), which take the longest and whose points are far apart")
	transports := flag.String("transports", "stdio,http,ws,grpc,http-tuned", "transports to measure")
	suites := flag.String("suites", strings.Join(append(slices.Clone(bench.Suites), "sse"), ","), "suites to measure (sse: the SSE readers, in this process)")
	tunedSuites := flag.String("tuned-suites", "side,calls,sessions", "suites measured on http-tuned, the second table and the sessions rows (a shared tuned client changes how calls and sessions use connections, not how a large result is read)")
	sessions := flag.String("sessions", "", "the sessions suite's points, e.g. 1,10,100 (default "+fmt.Sprint(bench.SessionCounts)+")")
	quick := flag.Bool("quick", false, "a tenth of the calls: check the harness, not the figures")
	timeout := flag.Duration("timeout", 3*time.Minute, "bound on one worker")
	flag.Parse()

	cfg := bench.DefaultConfig
	if *quick {
		cfg = bench.Config{Handshakes: 2, Warmup: 20, SeqCalls: 200, ConcCalls: 400,
			Big1Calls: 2, Big16Calls: 1, Tools: 2000, ListCalls: 1, Sessions: []int{1, 10}, SessionIdle: time.Second,
			SizePoints: []int{1 << 10, 1 << 20}, ToolPoints: []int{100}}
		bench.SizePoints, bench.ToolPoints = cfg.SizePoints, cfg.ToolPoints
		bench.SessionCounts = cfg.Sessions
	}
	if *sessions != "" {
		cfg.Sessions = nil
		for _, f := range strings.Split(*sessions, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				fmt.Fprintln(os.Stderr, "peers: -sessions: want counts like 1,10,100")
				os.Exit(2)
			}
			cfg.Sessions = append(cfg.Sessions, n)
		}
		bench.SessionCounts = cfg.Sessions
	}
	if *binsDir == "" {
		fmt.Fprintln(os.Stderr, "peers: -bins is required")
		os.Exit(2)
	}
	// Absolute, or exec would look the names up on PATH.
	if abs, err := filepath.Abs(*binsDir); err == nil {
		*binsDir = abs
	}
	bins := bench.Bins{GoSDK: filepath.Join(*binsDir, "gosdk"), Bridge: filepath.Join(*binsDir, "bridge"), Tiny: filepath.Join(*binsDir, "tiny")}

	if *worker != "" {
		parts := strings.Split(*worker, "/")
		if len(parts) != 3 {
			fmt.Fprintln(os.Stderr, "peers: -worker SUITE/TRANSPORT/CLIENT")
			os.Exit(2)
		}
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		defer cancel()
		res, err := bench.Run(ctx, parts[0], parts[1], parts[2], bins, cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peers:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(res)
		return
	}

	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
	began := time.Now()
	all := results{}
	repsOf := func(suite string) int {
		switch suite {
		case "side":
			return *sideReps
		case "sessions", "scale":
			return *scaleReps
		}
		return *reps
	}
	for rep := range max(*reps, *sideReps, *scaleReps) {
		for _, suite := range strings.Split(*suites, ",") {
			if rep >= repsOf(suite) || suite == "sse" {
				continue // sse runs in this process, after the workers
			}
			for _, tn := range strings.Split(*transports, ",") {
				t := bench.TransportByName(tn)
				if t == nil {
					fmt.Fprintln(os.Stderr, "peers: no transport", tn)
					os.Exit(2)
				}
				if tn == "http-tuned" && !slices.Contains(strings.Split(*tunedSuites, ","), suite) {
					continue
				}
				if suite == "sessions" && !slices.Contains(bench.SessionTransports, tn) ||
					suite == "scale" && !slices.Contains(bench.ScaleTransports, tn) {
					continue
				}
				if suite == "footprint" && tn != "stdio" {
					continue
				}
				names := t.Clients()
				if suite == "side" {
					names = []string{bench.SideClient}
				}
				for _, cn := range names {
					exe := self
					args := []string{"-worker", suite + "/" + tn + "/" + cn, "-bins", *binsDir, "-timeout", timeout.String()}
					if *quick {
						args = append(args, "-quick")
					}
					if *sessions != "" {
						args = append(args, "-sessions", *sessions)
					}
					if suite == "footprint" {
						// A binary of the client's own (cmd/footprint-*).
						exe = filepath.Join(*binsDir, "footprint-"+cn)
						args = []string{"-server", bins.GoSDK}
					}
					start := time.Now()
					res, err := runWorker(exe, args, *timeout+30*time.Second)
					fmt.Fprintf(os.Stderr, "rep %d %-5s %-10s %-5s %6.1fs", rep+1, suite, tn, cn, time.Since(start).Seconds())
					if err != nil {
						fmt.Fprintf(os.Stderr, "  fails: %v", err)
						res = &bench.Result{Fails: map[string]string{"*": err.Error()}}
					}
					fmt.Fprintln(os.Stderr)
					all.add(suite, tn, cn, res)
				}
			}
		}
	}
	var sseTable bytes.Buffer
	if slices.Contains(strings.Split(*suites, ","), "sse") {
		start := time.Now()
		if err := printSSE(&sseTable); err != nil {
			fmt.Fprintln(os.Stderr, "peers: sse:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "sse %6.1fs\n", time.Since(start).Seconds())
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("Run %s UTC, %s, %s/%s, %d cores, load average at the end %s; %d runs of each client (%d of the side suite, %d of the sessions and scale suites), interleaved; took %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04"), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(),
		strings.Join(strings.Fields(string(load))[:3], " "), *reps, *sideReps, *scaleReps, time.Since(began).Round(time.Second))
	all.print(os.Stdout, strings.Split(*transports, ","))
	os.Stdout.Write(sseTable.Bytes())
}

// printSSE runs the same SSE streams through tako's reader and
// r3labs/sse's, in turns, and prints the table.
func printSSE(w io.Writer) error {
	cases, err := bench.SSECases()
	if err != nil {
		return err
	}
	tako, r3, err := bench.CompareSSE(cases)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The SSE reader: the same streams, handed out 64 KiB a read, through tako's (internal/sse) and github.com/r3labs/sse/v2's EventStreamReader (which only splits the stream into events), in turns in one process:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| stream | tako: time | r3labs/sse: time | tako: heap | r3labs/sse: heap |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for i, c := range cases {
		fmt.Fprintf(w, "| %s (%s) | %s | %s (%s×) | %s | %s |\n", c.Name, bytesLabel(len(c.Stream)),
			durLabel(tako[i].Time), durLabel(r3[i].Time), ratio(float64(r3[i].Time)/float64(tako[i].Time)),
			bytesLabel(int(tako[i].Heap)), bytesLabel(int(r3[i].Heap)))
	}
	return nil
}

func durLabel(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return format(float64(d)/float64(time.Millisecond), "ms")
	}
	return format(float64(d)/float64(time.Microsecond), "µs")
}

func bytesLabel(n int) string {
	switch {
	case n >= 1<<20:
		return format(float64(n)/(1<<20), "MiB")
	case n >= 1<<10:
		return format(float64(n)/(1<<10), "KiB")
	}
	return fmt.Sprintf("%d B", n)
}

func runWorker(self string, args []string, timeout time.Duration) (*bench.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("%v: %s", err, msg)
	}
	var res bench.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("worker printed %q: %v", out.String(), err)
	}
	return &res, nil
}

// results are every run's, by suite, transport and client.
type results map[string]map[string]map[string][]*bench.Result

func (r results) add(suite, t, c string, res *bench.Result) {
	if suite == "side" {
		// One worker measured every client: file each client's figures
		// under its name, so that rep i of every client comes from the
		// same process (sideRatio relies on it).
		for _, name := range bench.TransportByName(t).Clients() {
			one := &bench.Result{Values: map[string]float64{}, Fails: map[string]string{}}
			for k, v := range res.Values {
				if key, ok := strings.CutPrefix(k, name+"."); ok {
					one.Values[key] = v
				}
			}
			for k, why := range res.Fails {
				if k == "*" {
					one.Fails[k] = why
				} else if key, ok := strings.CutPrefix(k, name+"."); ok {
					one.Fails[key] = why
				}
			}
			r.addOne(suite, t, name, one)
		}
		return
	}
	r.addOne(suite, t, c, res)
}

func (r results) addOne(suite, t, c string, res *bench.Result) {
	if r[suite] == nil {
		r[suite] = map[string]map[string][]*bench.Result{}
	}
	if r[suite][t] == nil {
		r[suite][t] = map[string][]*bench.Result{}
	}
	r[suite][t][c] = append(r[suite][t][c], res)
}

// cell is the median of the runs that gave the figure, or why none did.
func (r results) cell(suite, t, c, key string) (v float64, ok bool, why string) {
	var vs []float64
	for _, res := range r[suite][t][c] {
		if x, has := res.Values[key]; has {
			vs = append(vs, x)
			continue
		}
		if w := res.Fails[key]; w != "" {
			why = w
		} else if w := res.Fails["*"]; w != "" {
			why = w
		}
	}
	if len(vs) == 0 {
		return 0, false, why
	}
	return medianOf(vs), true, ""
}

// medianOf is the median of xs, which it sorts.
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// sideRatio is the median over runs of c's figure divided by the floor's
// in the same run: in the side suite both come from one process, taking
// turns, which is the point of measuring them so.
func (r results) sideRatio(t, c, key string) (float64, bool) {
	cs, fs := r["side"][t][c], r["side"][t]["floor"]
	var xs []float64
	for i := range min(len(cs), len(fs)) {
		v, ok1 := cs[i].Values[key]
		f, ok2 := fs[i].Values[key]
		if ok1 && ok2 && f > 0 {
			xs = append(xs, v/f)
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return medianOf(xs), true
}

// row is one figure of the tables.
type row struct {
	suite, key, label, unit string
	// only lists the transports the row applies to; empty means all.
	only []string
	// noRatio: the figure is not compared with the floor's (a count of
	// connections, where the floor's own may be zero).
	noRatio bool
	// mul scales the figure for its unit (1024: MiB shown in KiB); 0 is 1.
	mul float64
}

var callRows = []row{
	{suite: "side", key: "handshake_ms", label: "handshake (start to ready)", unit: "ms"},
	{suite: "side", key: "handshake_list_ms", label: "handshake and tools/list (start to the tool list)", unit: "ms"},
	{suite: "side", key: "seq_median_us", label: "echo call, median latency", unit: "µs"},
	{suite: "side", key: "seq_p99_us", label: "echo call, p99 latency", unit: "µs"},
	{suite: "side", key: "cpu_us", label: "client CPU per call", unit: "µs"},
	{suite: "side", key: "allocs", label: "allocations per call", unit: ""},
	{suite: "side", key: "bytes", label: "bytes allocated per call", unit: "B"},
	{suite: "side", key: "conc_calls_s", label: "calls/s at 16 concurrent callers", unit: ""},
	{suite: "side", key: "conc_p99_us", label: "p99 latency at 16 concurrent callers", unit: "µs"},
	{suite: "calls", key: "close_ms", label: "Close after a busy session", unit: "ms"},
	{suite: "side", key: "seq_conns", label: "TCP connections opened, 2,000 sequential calls", only: []string{"http", "http-tuned"}, noRatio: true},
	{suite: "side", key: "conc_conns", label: "TCP connections opened, 4,500 calls at 16 callers", only: []string{"http", "http-tuned"}, noRatio: true},
	{suite: "calls", key: "rss_mib", label: "peak RSS, echo session", unit: "MiB"},
	{suite: "footprint", key: "rss_idle_mib", label: "client alone in its binary: peak RSS, connected, before any large result", unit: "MiB", only: []string{"stdio"}},
}

// bigRows are the big suite's rows for each payload kind and size, then
// its memory after them.
func bigRows() []row {
	var rs []row
	for _, kind := range []struct{ key, label string }{
		{"text", "log text"}, {"json", "JSON document as text"}, {"image", "base64 image"},
	} {
		for _, size := range []struct{ key, label string }{{"big1", "1 MiB"}, {"big16", "16 MiB"}} {
			rs = append(rs,
				row{suite: "big", key: kind.key + "." + size.key + "_ms", label: size.label + " " + kind.label + " result, time", unit: "ms"},
				row{suite: "big", key: kind.key + "." + size.key + "_heap_mib", label: size.label + " " + kind.label + " result, heap allocated", unit: "MiB"})
		}
	}
	return append(rs,
		row{suite: "big", key: "rss_idle_mib", label: "peak RSS, connected, before any large result (every client's code in the process)", unit: "MiB"},
		row{suite: "big", key: "rss_mib", label: "peak RSS, after the large results (every client's code in the process)", unit: "MiB"},
		row{suite: "footprint", key: "rss_peak_mib", label: "client alone in its binary: peak RSS after 1 and 16 MiB results", unit: "MiB", only: []string{"stdio"}},
		row{suite: "footprint", key: "rss_exit_mib", label: "client alone in its binary: RSS left after them, free pages returned", unit: "MiB", only: []string{"stdio"}})
}

var toolRows = []row{
	{suite: "tools", key: "list_ms", label: "ListTools, 2,002 tools (~4.7 MB), time", unit: "ms"},
	{suite: "tools", key: "list_heap_mib", label: "ListTools, 2,002 tools, heap allocated", unit: "MiB"},
}

// rows are every row of the main tables, in order.
var rows = slices.Concat(callRows, bigRows(), toolRows)

// scaleRows are the rows of the table of cost as the work grows.
func scaleRows() []row {
	var rs []row
	for _, n := range bench.SessionCounts {
		pre := fmt.Sprintf("%s idle sessions", commas(int64(n)))
		if n == 1 {
			pre = "1 idle session"
		}
		k := fmt.Sprintf("sessions.%d.", n)
		rs = append(rs,
			row{suite: "sessions", key: k + "heap_kb", label: pre + ": heap per session", unit: "KB"},
			row{suite: "sessions", key: k + "stack_kb", label: pre + ": goroutine stacks per session", unit: "KB"},
			row{suite: "sessions", key: k + "goroutines", label: pre + ": goroutines per session", unit: ""},
			row{suite: "sessions", key: k + "rss_kb", label: pre + ": RSS per session", unit: "KB"},
			row{suite: "sessions", key: k + "connect_ms", label: pre + ": time to connect them, one after another", unit: "ms"})
	}
	for _, n := range bench.SizePoints {
		k := fmt.Sprintf("size.%d_", n)
		heap := row{suite: "scale", key: k + "heap_mib", label: sizeLabel(n) + " log text result, heap allocated", unit: "MiB"}
		if n < 1<<20 {
			heap.unit, heap.mul = "KiB", 1024
		}
		rs = append(rs,
			row{suite: "scale", key: k + "ms", label: sizeLabel(n) + " log text result, time", unit: "ms"}, heap)
	}
	for _, n := range bench.ToolPoints {
		k := fmt.Sprintf("tools.%d.", n)
		pre := commas(int64(n)) + " tools"
		rs = append(rs,
			row{suite: "scale", key: k + "list_ms", label: "ListTools of " + pre + " (~2 KB schemas), time", unit: "ms"},
			row{suite: "scale", key: k + "list_heap_mib", label: "ListTools of " + pre + ", heap allocated", unit: "MiB"})
	}
	for _, n := range bench.ToolPoints {
		k := fmt.Sprintf("registry.%d.", n)
		pre := commas(int64(n)) + " local tools"
		// The tako worker over stdio measures them (runScale): no other
		// transport's rows, which would be dashes.
		stdio := []string{"stdio"}
		rs = append(rs,
			row{suite: "scale", key: k + "dispatch_us", label: pre + ": registry Dispatch of one call (arguments validated)", unit: "µs", only: stdio},
			row{suite: "scale", key: k + "dispatch_bytes", label: pre + ": registry Dispatch, bytes allocated", unit: "B", only: stdio},
			row{suite: "scale", key: k + "turn_us", label: pre + ": one agent turn, the model answering at once", unit: "µs", only: stdio},
			row{suite: "scale", key: k + "turn_bytes", label: pre + ": one agent turn, bytes allocated", unit: "B", only: stdio},
			row{suite: "scale", key: k + "turn_anthropic_us", label: pre + ": one agent turn through the Anthropic provider and a local server", unit: "µs", only: stdio},
			row{suite: "scale", key: k + "turn_anthropic_bytes", label: pre + ": that turn, bytes allocated", unit: "B", only: stdio})
	}
	return rs
}

// sizeLabel is n bytes as "16 KiB" or "4 MiB".
func sizeLabel(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

var clients = []string{"floor", "tako", "gosdk", "mcpgo"}

var transportLabels = map[string]string{
	"stdio": "stdio", "http": "HTTP", "http-tuned": "HTTP (tuned)", "ws": "WebSocket", "grpc": "gRPC",
}

func (r results) print(w io.Writer, transports []string) {
	var main, tuned []string
	for _, t := range transports {
		if !r.measured(t) {
			continue
		}
		if t == "http-tuned" {
			tuned = append(tuned, t)
		} else {
			main = append(main, t)
		}
	}
	var notes []string
	if len(main) > 0 {
		fmt.Fprintln(w, "Each client with its own defaults:")
		fmt.Fprintln(w)
		notes = r.table(w, main, notes)
	}
	if r["sessions"] != nil || r["scale"] != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Cost as the work grows:")
		fmt.Fprintln(w)
		notes = r.tableOf(w, append(slices.Clone(main), tuned...), scaleRows(), notes)
	}
	if len(tuned) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Every client on one shared tuned HTTP client (MaxIdleConnsPerHost 64):")
		fmt.Fprintln(w)
		notes = r.table(w, tuned, notes)
	}
	if r["side"] != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "The handshake rows and the per-call rows (echo call latency, CPU, allocations and bytes per call, 16 concurrent callers, TCP connections) come from one process per transport and run in which every client, each with a server of its own, takes turns (a handshake each, 20 times; then 50 calls each); their ratio is the median over the runs of each run's ratio, so it need not be the quotient of the two medians shown.")
	}
	for i, n := range notes {
		fmt.Fprintf(w, "\n[%d] %s\n", i+1, n)
	}
}

// measured reports whether any suite was run on transport t.
func (r results) measured(t string) bool {
	for _, byT := range r {
		if byT[t] != nil {
			return true
		}
	}
	return false
}

func (r results) table(w io.Writer, transports []string, notes []string) []string {
	return r.tableOf(w, transports, rows, notes)
}

func (r results) tableOf(w io.Writer, transports []string, rows []row, notes []string) []string {
	fmt.Fprintln(w, "| figure | floor | tako | go-sdk v1.8.0 | mcp-go v1.2.1 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, t := range transports {
		for _, rw := range rows {
			if len(rw.only) > 0 && !slices.Contains(rw.only, t) {
				continue
			}
			if r[rw.suite][t] == nil {
				continue
			}
			cells := []string{transportLabels[t] + ": " + rw.label}
			floor, floorOK, _ := r.cell(rw.suite, t, "floor", rw.key)
			if rw.mul != 0 {
				floor *= rw.mul
			}
			for _, c := range clients {
				if r[rw.suite][t][c] == nil {
					cells = append(cells, "—")
					continue
				}
				v, ok, why := r.cell(rw.suite, t, c, rw.key)
				if !ok && why == "" {
					// Measured for other clients only (the registry's
					// and the agent's rows are tako's).
					cells = append(cells, "—")
					continue
				}
				if !ok {
					// One note for each client's reason: a client that
					// fails every large result fails them for one reason.
					note := fmt.Sprintf("%s, %s: %s", transportLabels[t], c, why)
					n := slices.Index(notes, note)
					if n < 0 {
						notes = append(notes, note)
						n = len(notes) - 1
					}
					cells = append(cells, fmt.Sprintf("fails [%d]", n+1))
					continue
				}
				if rw.mul != 0 {
					v *= rw.mul
				}
				s := format(v, rw.unit)
				if c != "floor" && floorOK && floor > 0 && !rw.noRatio {
					x := v / floor
					if sx, ok := r.sideRatio(t, c, rw.key); ok && rw.suite == "side" {
						x = sx
					}
					s += fmt.Sprintf(" (%s×)", ratio(x))
				}
				cells = append(cells, s)
			}
			fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
		}
	}
	return notes
}

func format(v float64, unit string) string {
	var s string
	switch {
	case v >= 1000:
		s = commas(int64(v + 0.5))
	case v >= 100:
		s = fmt.Sprintf("%.0f", v)
	case v >= 10:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

func ratio(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
