// Package blocks gathers a long message in pooled fixed-size blocks, so
// that it can be copied once into a slice of exactly its size when its end
// is seen.
//
// Why: a slice grown by append as a message arrives allocates about five
// times its final size on the way (append grows large slices by a
// quarter), and a copy made at the end from blocks that are then reused
// costs the message's size once. The blocks come from one pool shared by
// every connection in the process, so a client that reads one 16 MiB
// result after another allocates the blocks once; the garbage collector
// empties the pool when nothing uses it.
package blocks

import "sync"

// Size is the size of one block.
const Size = 64 << 10

var pool = sync.Pool{New: func() any { b := make([]byte, 0, Size); return &b }}

// List is the bytes of one message so far. The zero value is empty and
// ready to use. A List is not safe for concurrent use.
//
// A List keeps up to keep blocks (1 MiB) of its own between messages, and
// takes from and gives to the pool beyond that: a connection that reads
// results of a megabyte or so keeps its blocks even when the collector,
// which empties the pool, runs between them.
type List struct {
	list []*[]byte
	free []*[]byte
	n    int
}

const keep = 16

// Len reports the bytes held.
func (l *List) Len() int { return l.n }

// Write appends b.
func (l *List) Write(b []byte) {
	l.n += len(b)
	for len(b) > 0 {
		if len(l.list) == 0 || len(*l.list[len(l.list)-1]) == Size {
			var blk *[]byte
			if k := len(l.free); k > 0 {
				blk, l.free[k-1] = l.free[k-1], nil
				l.free = l.free[:k-1]
			} else {
				blk = pool.Get().(*[]byte)
			}
			*blk = (*blk)[:0]
			l.list = append(l.list, blk)
		}
		last := l.list[len(l.list)-1]
		k := min(len(b), Size-len(*last))
		*last = append(*last, b[:k]...)
		b = b[k:]
	}
}

// Join returns what was written followed by tail, in one new slice of
// exactly that size, and empties l.
func (l *List) Join(tail []byte) []byte {
	out := make([]byte, 0, l.n+len(tail))
	l.Drain(func(b []byte) { out = append(out, b...) })
	return append(out, tail...)
}

// Drain passes the bytes held to fn, block by block in order, and empties
// l; fn must not keep the slices it is given.
func (l *List) Drain(fn func([]byte)) {
	for i, blk := range l.list {
		fn(*blk)
		if len(l.free) < keep {
			l.free = append(l.free, blk)
		} else {
			pool.Put(blk)
		}
		l.list[i] = nil
	}
	l.list, l.n = l.list[:0], 0
}

// Reset empties l and gives every block it holds back to the pool, its own
// included: for a List that is done with.
func (l *List) Reset() {
	l.Drain(func([]byte) {})
	for i, blk := range l.free {
		pool.Put(blk)
		l.free[i] = nil
	}
	l.free = l.free[:0]
}
