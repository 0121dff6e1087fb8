//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mcpbackend

import "net"

// closedByPeer cannot look at the socket here: a tools/call that fails on
// a pooled connection is not sent again.
func closedByPeer(net.Conn) bool { return false }
