//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mcpbackend

import (
	"net"
	"syscall"
)

// closedByPeer reports whether the other end has already closed conn: a
// read that would not block finds the end of the stream, or an error. It
// does not consume anything.
func closedByPeer(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	_ = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = (n == 0 && err == nil) || (err != nil && err != syscall.EAGAIN && err != syscall.EWOULDBLOCK)
	})
	return closed
}
