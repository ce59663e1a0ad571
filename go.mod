module github.com/tako-mcp/tako

go 1.24.0

require go.uber.org/goleak v1.3.0
