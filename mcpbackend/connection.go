package mcpbackend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/internal/version"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// clientInfo is what the backend client reports of itself.
var clientInfo = mcp.Implementation{Name: version.Name, Version: version.Version}

// conn is one initialized connection to the backend.
type conn struct {
	*client.Client
	end context.CancelFunc // ends the context of the SSE transport's event stream
	// since is when the attempt that made the connection began: its
	// session is from then, though initializing took a while longer.
	since time.Time
	// streamLost is why the session's event stream ended; b.mu. The calls
	// waiting for an answer on it fail with this reason.
	streamLost error
}

func (cn *conn) close() {
	_ = cn.Client.Close()
	cn.end()
}

// connected returns the current connection, asking for one and waiting
// for the attempt when there is none. An attempt already under way when
// the call came began before the call saw the connection fail (it may
// have straddled a restart of the backend, initializing with the old
// server and listing tools with the new): when it fails, the call waits
// for one attempt of its own before giving up.
func (b *Backend) connected(ctx context.Context) (*conn, error) {
	ownAttempt := false
	for waits := 0; ; waits++ {
		b.mu.Lock()
		cn, settled, lastErr, held, own := b.conn, b.settled, b.lastErr, time.Now().Before(b.holdUntil), !b.connecting
		b.mu.Unlock()
		if cn != nil {
			return cn, nil
		}
		if held || waits == 2 || (waits == 1 && ownAttempt) {
			if lastErr == nil {
				lastErr = errors.New("not connected")
			}
			return nil, fmt.Errorf("unavailable: %w", lastErr)
		}
		ownAttempt = own
		select {
		case b.wake <- struct{}{}:
		default:
		}
		select {
		case <-settled:
		case <-ctx.Done():
			return nil, fmt.Errorf("unavailable: no connection within the call's time: %w", ctx.Err())
		case <-b.stop:
			return nil, errors.New("unavailable: the backend is shutting down")
		}
	}
}

func (b *Backend) streamLost(cn *conn) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return cn.streamLost
}

// drop forgets a connection that failed, so that the loop reconnects.
func (b *Backend) drop(cn *conn, err error) {
	err = cleanMCPError(err)
	b.mu.Lock()
	if b.conn == cn {
		b.conn, b.lastErr = nil, err
	}
	b.mu.Unlock()
	go cn.close()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// lose ends a connection whose event stream ended: mcp-go's SSE transport
// would go on sending requests whose answers can no longer arrive. A
// stream that ends soon after it began, again and again, holds off the
// next connection for longer each time: a backend that breaks a bound on
// its stream at once must not be read at the speed of the network.
func (b *Backend) lose(cn *conn, err error, cancelAttempt context.CancelFunc) {
	var bound *StreamLimitError
	if !errors.As(err, &bound) {
		err = fmt.Errorf("the backend's event stream ended: %w", upstream.CleanError(err))
	}
	b.mu.Lock()
	if cn.streamLost == nil {
		cn.streamLost = err
	}
	current := b.conn == cn
	if current {
		if time.Since(cn.since) > time.Minute {
			b.strikes = 0
		}
		b.strikes++
		b.holdUntil = time.Now().Add(holdFor(b.strikes))
	}
	b.mu.Unlock()
	cancelAttempt()
	if current {
		b.drop(cn, err)
	}
}

// holdFor is how long the loop waits before connecting again after the
// n-th event stream in a row that ended soon after it began: not at all
// the first time (a backend restarted), then from 250ms doubling to 30s.
func holdFor(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	return min(250*time.Millisecond<<min(n-2, 8), 30*time.Second)
}

// loop connects, reconnects with backoff while the backend is down, and
// refreshes the tool list on request and on its TTL.
func (b *Backend) loop() {
	defer close(b.stopped)
	backoff := 250 * time.Millisecond
	for {
		b.mu.Lock()
		up, hold := b.conn != nil, time.Until(b.holdUntil)
		b.mu.Unlock()
		if !up {
			if hold > 0 && !b.sleep(hold, false) {
				return
			}
			b.mu.Lock()
			b.connecting = true
			b.mu.Unlock()
			err := b.connect()
			b.settle()
			if err != nil {
				b.logger.Load().Debug("backend unavailable", zap.String("backend", b.cfg.Name), zap.Error(err), zap.Duration("retry_in", backoff))
				if !b.sleep(backoff, true) {
					return
				}
				if backoff *= 2; backoff > 30*time.Second {
					backoff = 30 * time.Second
				}
				continue
			}
			backoff = 250 * time.Millisecond
		}
		t := time.NewTimer(b.cfg.RefreshInterval)
		select {
		case <-b.stop:
			t.Stop()
			return
		case <-b.wake:
		case <-b.refresh:
			b.relist()
		case <-t.C:
			b.relist()
		}
		t.Stop()
	}
}

// sleep waits d, or less if woken and wakeable; it reports false when the
// backend is closing.
func (b *Backend) sleep(d time.Duration, wakeable bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	wake := b.wake
	if !wakeable {
		wake = nil
	}
	select {
	case <-b.stop:
		return false
	case <-wake:
	case <-t.C:
	}
	return true
}

// settle tells waiters that a connection attempt is over.
func (b *Backend) settle() {
	b.mu.Lock()
	b.connecting = false
	close(b.settled)
	b.settled = make(chan struct{})
	b.mu.Unlock()
}

// connect starts a new client, initializes it and lists the tools, in the
// era the backend last spoke. A backend that refuses it now may have been
// replaced by one of the other era: the same attempt learns it again.
func (b *Backend) connect() error {
	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Timeout)
	defer cancel()
	go func() {
		select {
		case <-b.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	era := b.knownEra()
	err := b.connectAs(ctx, cancel, started, era)
	// A remembered 2026-07-28 asks server/discover first and falls back on
	// its own; only a remembered earlier era skips the probe, to be tried
	// once more with it.
	if err != nil && era != "" && !mcp.IsModernProtocol(era) && ctx.Err() == nil && !unreachable(err) {
		b.logger.Load().Debug("backend refused the protocol it spoke before; learning it again",
			zap.String("backend", b.cfg.Name), zap.String("protocol", era), zap.Error(err))
		b.setEra("")
		err = b.connectAs(ctx, cancel, started, "")
	}
	return err
}

// connectAs is one connection attempt in era; "" asks server/discover
// first and falls back to the initialize handshake.
func (b *Backend) connectAs(ctx context.Context, cancel context.CancelFunc, started time.Time, era string) error {
	c, err := b.newClient()
	if err != nil {
		return b.fail(err)
	}
	// The SSE transport reads its event stream under Start's context for
	// as long as the connection lasts: the stream gets a context of its
	// own, which the end of this attempt cancels until the attempt succeeds.
	life, end := context.WithCancel(context.Background())
	unlink := context.AfterFunc(ctx, end)
	cn := &conn{Client: c, end: end}
	c.OnConnectionLost(func(err error) { b.lose(cn, err, cancel) })
	state := &callState{replayable: true}
	calls := context.WithValue(ctx, callStateKey{}, state)
	if err := c.Start(life); err != nil {
		return b.failConnect(cn, state, err)
	}
	init := mcp.InitializeRequest{}
	// mcp-go probes with server/discover only when asked for 2026-07-28
	// or later: a version before it goes straight to initialize.
	init.Params.ProtocolVersion = cmp.Or(era, mcp.LATEST_PROTOCOL_VERSION)
	init.Params.ClientInfo = clientInfo
	initialized, err := c.Initialize(calls, init)
	if err != nil {
		return b.failConnect(cn, state, err)
	}
	tools, err := b.listTools(calls, c)
	if err != nil {
		return b.failConnect(cn, state, err)
	}
	if !unlink() {
		return b.failConnect(cn, state, ctx.Err())
	}
	b.mu.Lock()
	if cn.streamLost != nil {
		b.mu.Unlock()
		return b.failConnect(cn, state, cn.streamLost)
	}
	cn.since = started
	b.conn, b.lastErr = cn, nil
	b.learnEra(c.ProtocolVersion())
	b.setTools(tools)
	b.setInstructions(initialized.Instructions)
	b.mu.Unlock()
	b.firstOnce.Do(func() { close(b.firstConn) })
	b.logger.Load().Debug("backend connected", zap.String("backend", b.cfg.Name),
		zap.String("protocol", c.ProtocolVersion()), zap.Int("tools", len(tools)))
	return nil
}

// failConnect closes the connection of a failed attempt and records why
// it failed: a lost event stream or a broken bound says more than the
// error mcp-go returned for it.
func (b *Backend) failConnect(cn *conn, state *callState, err error) error {
	cn.close()
	if lost := b.streamLost(cn); lost != nil {
		err = lost
	} else if bound := state.broken(); bound != nil {
		err = bound
	}
	return b.fail(err)
}

func (b *Backend) fail(err error) error {
	err = cleanMCPError(err)
	b.mu.Lock()
	b.lastErr = err
	b.mu.Unlock()
	return err
}

func (b *Backend) newClient() (*client.Client, error) {
	header := b.cfg.Header
	if header == nil {
		header = func(context.Context) map[string]string { return nil }
	}
	switch b.cfg.Transport {
	case TransportSSE:
		tr, err := transport.NewSSE(b.cfg.URL,
			transport.WithHTTPClient(b.http),
			transport.WithHeaderFunc(transport.HTTPHeaderFunc(header)))
		if err != nil {
			return nil, fmt.Errorf("failed to create SSE transport: %w", err)
		}
		return client.NewClient(sse{tr}, client.WithDiscoverTimeout(probeTimeout(b.cfg.Timeout))), nil
	case TransportStreamableHTTP:
		tr, err := transport.NewStreamableHTTP(b.cfg.URL,
			transport.WithHTTPBasicClient(b.http),
			transport.WithHTTPHeaderFunc(transport.HTTPHeaderFunc(header)))
		if err != nil {
			return nil, err
		}
		return client.NewClient(streamable{tr}, client.WithDiscoverTimeout(probeTimeout(b.cfg.Timeout))), nil
	default:
		return nil, fmt.Errorf("unknown transport %q", b.cfg.Transport)
	}
}
