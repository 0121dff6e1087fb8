package upstream

import (
	"errors"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
)

// A backend speaks one of two eras: 2026-07-28 and later, stateless, whose
// client learns the server with server/discover, or 2025-11-25 and before,
// with the initialize handshake and a session. mcp-go's client finds the
// era at each connection: it sends server/discover first and, on any
// answer but one of 2026-07-28's own errors, falls back to initialize.
// That costs a refused request (or, from a server that ignores it, the
// probe's five seconds) on every reconnect to a backend of 2025-11-25, so
// the backend remembers the era it spoke and asks for that version: mcp-go
// sends a request for a version before 2026-07-28 straight to initialize.
// A connection of 2026-07-28 still begins with server/discover, which is
// that era's handshake (it carries the capabilities and instructions).
//
// The era is learned again when the backend refuses it: a call answered
// with UnsupportedProtocolVersion (-32022), or a connection attempt in the
// remembered era that fails with an answer, as after a restart with a
// build of the other era on the same URL.

// probeTimeout bounds the server/discover probe of a connection attempt
// bounded by timeout: mcp-go's own five seconds, or half the attempt's
// time when that is shorter, so that a server that never answers the probe
// still leaves time for the handshake it does answer.
func probeTimeout(timeout time.Duration) time.Duration {
	return min(5*time.Second, timeout/2)
}

// Protocol is the protocol version the backend last spoke; "" before it
// spoke one, or after it refused the one it spoke before.
func (b *Backend) Protocol() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.era
}

func (b *Backend) knownEra() string { return b.Protocol() }

func (b *Backend) setEra(era string) {
	b.mu.Lock()
	b.era = era
	b.mu.Unlock()
}

// learnEra records the era of a new connection; b.mu.
func (b *Backend) learnEra(era string) {
	if b.era != "" && b.era != era {
		b.logger.Load().Info("backend protocol changed", zap.String("backend", b.cfg.Name),
			zap.String("was", b.era), zap.String("now", era))
	}
	b.era = era
}

// forgetEra forgets the era of cn's connection, unless a newer connection
// already learned one.
func (b *Backend) forgetEra(cn *conn) {
	b.mu.Lock()
	if b.conn == cn || b.conn == nil {
		b.era = ""
	}
	b.mu.Unlock()
}

// versionRefused reports an answer refusing the request's protocol version:
// UnsupportedProtocolVersion (-32022), which 2026-07-28 defines. A request
// refused for its version did not run.
func versionRefused(err error) bool {
	var unsupported mcp.UnsupportedProtocolVersionError
	return errors.As(err, &unsupported)
}
