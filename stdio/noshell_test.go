package stdio_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
)

// TestStartNoShell: the command's arguments reach it exactly as given,
// shell syntax and all, and nothing of them runs: no shell is between
// tako and the server (DESIGN.md rule 6), so a config file's or a server
// list's argument cannot smuggle in a command.
func TestStartNoShell(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	args := []string{"$(touch " + marker + ")", "; touch " + marker, "`touch " + marker + "`", "*", "'quoted' \"twice\"", "a\nb", "$HOME"}
	c := startServer(t, "echo", stdio.Options{Args: args, Dir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, request(t, mcp.Int64ID(1), "args", nil)); err != nil {
		t.Fatal(err)
	}
	msg, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Args []string }
	if err := json.Unmarshal(msg.Result, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Args, args) {
		t.Errorf("the server got arguments %q, want %q as given", got.Args, args)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("an argument ran as a command: %s exists", marker)
	}
}
