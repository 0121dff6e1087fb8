// Package stack grows a fresh goroutine's stack before it goes deep.
package stack
