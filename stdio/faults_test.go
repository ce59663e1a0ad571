package stdio_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// faultEnv carries a fault matrix row's server fault to the "faults"
// server mode, as JSON.
const faultEnv = "TAKO_STDIO_TEST_FAULT"

type faultSpec struct {
	Tool  string        `json:"tool"`
	Fault mcptest.Fault `json:"fault"`
}

// TestFaults runs the fault matrix on a Session over a real subprocess:
// the test binary serving the reference server with the row's fault, its
// stdout a mcptest.RawStream so that junk, an undecodable answer, a
// trickle and a cut are real bytes on the pipe. The server is killed
// with SIGKILL; a cut is the server writing half an answer and closing
// its end.
func TestFaults(t *testing.T) {
	for _, v := range []string{"", mcp.Version20251125} {
		name := v
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			transporttest.RunFaults(t, func(t *testing.T, f transporttest.Fault) transporttest.FaultTarget {
				spec, err := json.Marshal(faultSpec{Tool: f.Tool, Fault: f.Server})
				if err != nil {
					t.Fatal(err)
				}
				conn := startServer(t, "faults", stdio.Options{MaxMessageSize: f.MaxMessageSize, Env: []string{faultEnv + "=" + string(spec)}})
				opts := f.Options
				opts.ProtocolVersion = v
				s, err := transport.Connect(context.Background(), conn, &opts)
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				return transporttest.FaultTarget{
					Transport: s,
					Kill: func() {
						if p, err := os.FindProcess(conn.Pid()); err == nil {
							p.Kill()
						}
					},
				}
			},
				transporttest.FaultNotApplicable(transporttest.FaultSessionExpired, "stdio has no sessions: the process is the session"),
			)
		})
	}
}

// serveFaults is the "faults" server mode.
func serveFaults() int {
	var spec faultSpec
	if err := json.Unmarshal([]byte(os.Getenv(faultEnv)), &spec); err != nil {
		os.Stderr.WriteString("bad " + faultEnv + ": " + err.Error() + "\n")
		return 2
	}
	srv := mcptest.NewReference(mcptest.Options{})
	if spec.Tool != "" {
		srv.FaultTool(spec.Tool, spec.Fault)
	}
	raw := &mcptest.RawStream{W: os.Stdout}
	conn := mcptest.WithRaw(stdio.NewStreamConn(os.Stdin, raw, stdio.StreamOptions{}), raw)
	if err := srv.Serve(context.Background(), conn); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}
