package auth_test

import (
	"context"
	"log"
	"os"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/httpauth"
)

// The interactive flow of a command-line program: the browser opens on
// the first 401, tokens are kept in the user's configuration directory and
// refreshed from there on later runs.
func Example_interactive() {
	ctx := context.Background()
	store, err := auth.DefaultFileStore()
	if err != nil {
		log.Fatal(err)
	}
	ac, err := auth.New("https://mcp.example.com/mcp", &auth.Config{
		User:  &auth.Loopback{Out: os.Stderr},
		Store: store,
	})
	if err != nil {
		log.Fatal(err)
	}
	conn, err := streamablehttp.Dial(ctx, "https://mcp.example.com/mcp", &streamablehttp.Options{Auth: ac})
	if err != nil {
		log.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
}

// A machine client with the client credentials grant: no user, a client
// registered ahead of time.
func Example_clientCredentials() {
	ac, err := auth.New("https://mcp.example.com/mcp", &auth.Config{
		Grant:  auth.ClientCredentials{},
		Client: &auth.StaticClient{ID: "reporting-bot", Secret: auth.Secret(os.Getenv("CLIENT_SECRET"))},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = streamablehttp.Dial(context.Background(), "https://mcp.example.com/mcp", &streamablehttp.Options{Auth: ac})
}

// A caller that gets its tokens elsewhere plugs them straight into the
// transport's seam, without this package.
func Example_ownTokenSource() {
	token := func(ctx context.Context) (string, error) { return os.Getenv("MCP_TOKEN"), nil }
	_, _ = streamablehttp.Dial(context.Background(), "https://mcp.example.com/mcp", &streamablehttp.Options{
		Auth: httpauth.TokenSource(token),
	})
}
