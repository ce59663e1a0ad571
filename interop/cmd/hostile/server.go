package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// envelope is what the servers read of a message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

const initResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`

func answer(id json.RawMessage, result string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
}

func notFound(id json.RawMessage) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32601,"message":"not offered"}}`
}

func runServer(name string) error {
	switch name {
	case "pings", "notify":
		return stdioServer(name)
	case "pings-http", "huge-http":
		return httpServer(name)
	}
	return fmt.Errorf("unknown probe %q", name)
}

// stdioServer answers the handshake, then floods stdout; for pings it
// stops reading stdin, so that the client's answers fill the pipe.
func stdioServer(name string) error {
	var mu sync.Mutex
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	write := func(lines ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			out.WriteString(l)
			out.WriteByte('\n')
		}
		out.Flush()
	}
	flooded := make(chan struct{})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<26)
	for in.Scan() {
		var m envelope
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method == "initialize":
			write(answer(m.ID, initResult))
		case m.Method == "notifications/initialized":
			if name == "pings" {
				floodPings(write)
				select {} // never read again; the client's Close ends us
			}
			go func() { floodNotifications(write); close(flooded) }()
		case m.Method == "tools/call":
			// The answer comes after the flood, on the same stream: a
			// response is never dropped, so the client learns the flood
			// has been read even if it dropped notifications.
			go func(id json.RawMessage) { <-flooded; write(answer(id, `{"content":[]}`)) }(m.ID)
		case m.Method != "" && len(m.ID) > 0:
			write(notFound(m.ID))
		}
	}
	return in.Err()
}

func floodPings(write func(...string)) {
	for i := range n("pings") {
		write(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"ping"}`, i))
	}
	write(`{"jsonrpc":"2.0","method":"` + doneMethod + `"}`)
}

func floodNotifications(write func(...string)) {
	note := `{"jsonrpc":"2.0","method":"notifications/hostile/flood","params":{"data":"` + strings.Repeat("x", 1024) + `"}}`
	for range n("notify") {
		write(note)
	}
}

// httpServer serves Streamable HTTP (2025-11-25) on loopback and prints
// its URL as its first line.
func httpServer(name string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	var text []byte
	if name == "huge-http" {
		text = []byte(strings.Repeat("x", *huge))
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			return
		case http.MethodGet:
			if name != "pings-http" {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			bw := bufio.NewWriterSize(w, 1<<16)
			for i := range n("pings-http") {
				fmt.Fprintf(bw, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i)
			}
			fmt.Fprintf(bw, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":%q}\n\n", doneMethod)
			bw.Flush()
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m envelope
		if json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer(m.ID, initResult))
		case len(m.ID) == 0 || m.Method == "":
			// A notification, or the client's answer to one of our pings:
			// a server that stopped reading takes its time over each.
			if name == "pings-http" && m.Method == "" {
				time.Sleep(time.Second)
			}
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "tools/call" && name == "huge-http":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"`)
			w.Write(text)
			io.WriteString(w, `"}]}}`+"\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, notFound(m.ID))
		}
	})
	return http.Serve(ln, h)
}

// startHTTPServer runs the HTTP server of probe as a child and returns its
// URL.
func startHTTPServer(self, probe string) (*exec.Cmd, string, error) {
	cmd := exec.Command(self, "-serve", probe, "-n", fmt.Sprint(*count), "-huge", fmt.Sprint(*huge))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", errNoURL
	}
	return cmd, strings.TrimSpace(line), nil
}
