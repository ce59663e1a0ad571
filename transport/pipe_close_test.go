package transport

import (
	"context"
	"errors"
	"testing"
)

// Regression: closing one end of a Pipe made the other end's Read and
// Write fail with ErrClosed, as if its own owner had closed it, so a
// Session over a pipe whose server went away reported ErrClosed rather
// than ErrConnectionLost.
func TestPipePeerCloseIsConnectionLost(t *testing.T) {
	client, server := Pipe()
	server.Close()
	ctx := context.Background()
	if _, err := client.Read(ctx); !errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrClosed) {
		t.Errorf("Read after the peer closed: %v, want ErrConnectionLost", err)
	}
	if err := client.Write(ctx, nil); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("Write after the peer closed: %v, want ErrConnectionLost", err)
	}
	if _, err := server.Read(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Read on the end that closed: %v, want ErrClosed", err)
	}
	client.Close() // idempotent across ends
	if _, err := server.Read(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Read on the end that closed first, after the other closed too: %v, want ErrClosed", err)
	}
}
