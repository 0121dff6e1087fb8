package stack

import "testing"

// deep recurses n frames of about 256 bytes each, as a handler chain or
// a parser does.
//
//go:noinline
func deep(n int) int {
	var pad [32]int
	pad[n%len(pad)] = n
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[(n+1)%len(pad)]
}

// BenchmarkFreshGoroutine: a fresh goroutine that goes 100 frames deep
// (about 25 KiB of stack), growing its stack there or at its start.
func BenchmarkFreshGoroutine(b *testing.B) {
	for _, grow := range []bool{false, true} {
		name := "grows-deep"
		if grow {
			name = "grown-first"
		}
		b.Run(name, func(b *testing.B) {
			done := make(chan int)
			for i := 0; i < b.N; i++ {
				go func() {
					if grow {
						Grow()
					}
					done <- deep(100)
				}()
				<-done
			}
		})
	}
}
