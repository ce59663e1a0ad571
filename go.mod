module github.com/tako-mcp/tako

go 1.24.0
