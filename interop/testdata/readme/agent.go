// The README's agent fragment. The test has put, on the ports the
// fragment names, a scripted model that speaks the Chat Completions API
// and server-everything over Streamable HTTP.
package main

import (
	"context"
	"fmt"
	"log"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/orchestrator/openai"
	"github.com/tako-mcp/tako/registry"
)

func main() {
	ctx := context.Background()
	//README
}
