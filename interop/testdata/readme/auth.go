// The README's authorization fragment: it is built, not run (it needs a
// remote server, and a person at a browser).
package main

import (
	"context"
	"os"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport/httpauth"
)

func myToken(context.Context) (string, error) { return "a token", nil }

func main() {
	ctx := context.Background()
	url := "https://mcp.example.com/mcp"
	//README
	_, _ = ac, conn
}
