package mcpbackend

import (
	"errors"
	"net/http"
	"slices"
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

// eraRefused reports an answer to a request in version that a backend of the
// other era gives, refusing it before any tool ran: the backend was
// replaced by one of the other era, to be learned again.
//
//   - UnsupportedProtocolVersion (-32022), which 2026-07-28 defines, when it
//     does not list version among those the backend supports (a backend
//     that lists it refused something else).
//   - On a 2026-07-28 connection, HTTP 400 or 404 with any error but those
//     a 2026-07-28 server answers a request it read with (invalid params,
//     unknown method, the header and capability errors): a server of an
//     earlier era refuses a request without a session, or a version it does
//     not know, so (400 with -32000 and "Mcp-Session-Id header is required"
//     from the TypeScript SDK, plain text from others).
func eraRefused(err error, state *callState, version string) bool {
	var unsupported mcp.UnsupportedProtocolVersionError
	if errors.As(err, &unsupported) {
		return !slices.Contains(unsupported.Supported, version)
	}
	if !mcp.IsModernProtocol(version) {
		return false
	}
	if status, _ := state.answer(); status != http.StatusBadRequest && status != http.StatusNotFound {
		return false
	}
	return !errors.Is(err, mcp.ErrInvalidParams) && !errors.Is(err, mcp.ErrMethodNotFound) &&
		!errors.Is(err, mcp.HeaderMismatchError{}) && !errors.Is(err, mcp.MissingRequiredClientCapabilityError{})
}
