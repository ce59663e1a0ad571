package streamablehttp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: every stream,
// reconnect loop and POST of a Conn must end by the time Close returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
