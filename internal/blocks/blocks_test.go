package blocks

import (
	"bytes"
	"testing"
)

func TestJoinAndDrain(t *testing.T) {
	var l List
	var want []byte
	for i, n := range []int{1, Size - 1, 2, 3 * Size, 0, 17} {
		p := bytes.Repeat([]byte{byte('a' + i)}, n)
		l.Write(p)
		want = append(want, p...)
	}
	if l.Len() != len(want) {
		t.Fatalf("Len %d, want %d", l.Len(), len(want))
	}
	got := l.Join([]byte("tail"))
	want = append(want, "tail"...)
	if !bytes.Equal(got, want) || cap(got) != len(got) {
		t.Fatalf("Join: %d bytes (cap %d), want %d", len(got), cap(got), len(want))
	}
	if l.Len() != 0 {
		t.Fatalf("Len after Join: %d", l.Len())
	}
	l.Write([]byte("xyz"))
	var drained []byte
	l.Drain(func(b []byte) { drained = append(drained, b...) })
	if string(drained) != "xyz" || l.Len() != 0 {
		t.Fatalf("Drain gave %q, Len %d", drained, l.Len())
	}
}
