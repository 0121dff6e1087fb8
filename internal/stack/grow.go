package stack

// Grow grows the calling goroutine's stack to 32 KiB at least, while it
// holds a frame or two. A goroutine starts with 8 KiB; one that goes deep
// (Caddy's handler chain, goja's parser and interpreter) grows it there,
// where each doubling copies and adjusts every frame it holds: some tens
// of microseconds a request or an execution. Here, it costs about one.
func Grow() { grow(0) }

//go:noinline
func grow(i int) byte {
	var frame [16 << 10]byte
	frame[i] = 1
	return frame[(i+1)%len(frame)]
}
