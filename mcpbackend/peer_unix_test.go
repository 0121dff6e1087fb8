//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mcpbackend

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestClosedByPeer: a pooled connection whose backend closed or reset it
// is told from one that is open, with or without bytes waiting, and
// looking does not consume the bytes.
func TestClosedByPeer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		peer    func(net.Conn) // what the other end does before the look
		want    bool
		waiting string // what the peer sent
	}{
		{"open and quiet", func(net.Conn) {}, false, ""},
		{"open, bytes waiting", func(c net.Conn) { c.Write([]byte("x")) }, false, "x"},
		{"closed", func(c net.Conn) { c.Close() }, true, ""},
		{"reset", func(c net.Conn) { c.(*net.TCPConn).SetLinger(0); c.Close() }, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			peer, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer peer.Close()
			tt.peer(peer)
			if tt.want {
				waitFor(t, "look that finds the connection closed", func() bool { return closedByPeer(conn) })
				return
			}
			time.Sleep(50 * time.Millisecond) // time for a close to arrive, were there one
			if closedByPeer(conn) {
				t.Fatal("an open connection looks closed")
			}
			// What was waiting is still there to read.
			conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			got, _ := io.ReadAll(conn)
			if string(got) != tt.waiting {
				t.Errorf("read %q after the look, want %q", got, tt.waiting)
			}
		})
	}
}
