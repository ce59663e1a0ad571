//go:build !unix && !windows

package auth

import "os"

// No advisory locks here (plan9, wasm): processes sharing a FileStore are
// not coordinated; the Client's own lock still orders its refreshes.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}
