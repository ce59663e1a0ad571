package bench

import (
	"testing"
)

// TestSSEReaders checks the comparison rather than measuring it: both
// readers find every event of the small cases, and CompareSSE reports a
// figure for each.
func TestSSEReaders(t *testing.T) {
	cases, err := SSECases()
	if err != nil {
		t.Fatal(err)
	}
	var small []SSECase
	for _, c := range cases {
		if len(c.Stream) < 2<<20 {
			c.Runs = 1
			small = append(small, c)
		}
	}
	tako, r3, err := CompareSSE(small)
	if err != nil {
		t.Fatal(err)
	}
	if len(tako) != len(small) || len(r3) != len(small) {
		t.Fatalf("%d and %d figures for %d cases", len(tako), len(r3), len(small))
	}
}

// BenchmarkSSEReader runs each case through each reader: ns/op is one
// stream read to its end (go test -bench SSEReader -benchtime 3x; the
// 16 MiB event takes r3labs/sse about a second and a half).
func BenchmarkSSEReader(b *testing.B) {
	cases, err := SSECases()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		for _, r := range []struct {
			name string
			read func([]byte) (int, error)
		}{{"tako", ReadSSETako}, {"r3labs", ReadSSER3labs}} {
			b.Run(c.Name+"/"+r.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.Stream)))
				for b.Loop() {
					if n, err := r.read(c.Stream); err != nil || n != c.Events {
						b.Fatalf("%d events, %v; want %d", n, err, c.Events)
					}
				}
			})
		}
	}
}
