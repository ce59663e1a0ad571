package stdio

// SpareReaders reports how many read buffers are on the spare list
// (readers.go), after emptying it if empty is set.
func SpareReaders(empty bool) int {
	spareReaders.Lock()
	defer spareReaders.Unlock()
	n := len(spareReaders.free)
	if empty {
		clear(spareReaders.free)
		spareReaders.free = spareReaders.free[:0]
	}
	return n
}
