package bench

import (
	"context"
	"testing"
)

// TestClients checks the harness rather than measuring it: every client
// starts against the server, makes an echo call and a small big call, makes
// 64 calls from 16 goroutines, and closes, over stdio and over Streamable
// HTTP. A benchmark that measured a broken client would report a figure for
// nothing.
func TestClients(t *testing.T) {
	bin := serverBin(t)
	var all []kind
	for _, k := range kinds {
		all = append(all, kind{name: "stdio/" + k.name, start: k.start})
	}
	for _, k := range httpKinds {
		all = append(all, kind{name: "http/" + k.name, start: k.start})
	}
	for _, k := range all {
		t.Run(k.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			c, err := k.start(ctx, bin)
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			if err := c.echo(ctx); err != nil {
				t.Errorf("echo: %v", err)
			}
			if n, err := c.big(ctx, 4096); err != nil || n != 4096 {
				t.Errorf("big(4096) = %d, %v; want 4096 bytes", n, err)
			}
			if err := callConcurrently(c, 64); err != nil {
				t.Errorf("concurrent calls: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}
