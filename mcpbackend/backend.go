package mcpbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
)

// Backend transports.
const (
	TransportStreamableHTTP = "streamable_http"
	TransportSSE            = "sse"
)

// Config describes one MCP backend.
type Config struct {
	Name      string // for logs
	URL       string
	Transport string // streamable_http (default) or sse
	// Header returns the headers for a request; ctx is the request's when
	// there is one. The values never leave the transport.
	Header func(ctx context.Context) map[string]string
	// Tools are globs of the tool names to expose; none exposes all.
	Tools   []string
	Timeout time.Duration // per call; default 30s
	// MaxResponseSize bounds the body of one answer, and each line and
	// event of an event stream; default 16MiB. mcp-go reads answers whole,
	// and puts the body of a failed one in its error.
	MaxResponseSize int64
	// MaxStreamSize bounds a session's event stream (the SSE transport's
	// GET, which carries every answer) in total; default 1GiB. Past it the
	// backend is reconnected.
	MaxStreamSize int64
	// MaxTools bounds the tools kept from the backend's list; default 2000.
	MaxTools int
	// MaxToolsSize bounds the JSON of the tools the backend lists, exposed
	// or not, across pages; default 16MiB. Past either bound the first
	// tools are kept and the rest refused, with a warning.
	MaxToolsSize int64
	// RefreshInterval is how old the tool list may get before it is listed
	// again; default 5 minutes. mcp-go's client opens no listening stream,
	// so list_changed notifications may never arrive.
	RefreshInterval time.Duration
	// Logger receives the backend's log lines until SetLogger replaces
	// it. Default: none, the lines are dropped.
	Logger *zap.Logger
	// WrapTransport, when set, is given the network transport and returns
	// the one requests go through (one that serves some of them without
	// the network); the answer limits and tracing stay above it.
	WrapTransport func(network http.RoundTripper) http.RoundTripper
}

// RemoteTool is one backend tool, its schemas as the backend sent them.
type RemoteTool struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Replayable is set when the backend marks the tool read-only or
	// idempotent: a call that may have reached it can be sent again.
	Replayable bool
}

// Backend is a client of one MCP server: it connects in the background,
// reconnects with backoff, re-initializes when the server forgot the
// session, and keeps the server's tool list. Safe for concurrent use.
type Backend struct {
	cfg  Config
	http *http.Client

	mu        sync.Mutex
	conn      *conn // the current connection; nil while there is none
	tools     []RemoteTool
	listedAt  time.Time
	lastErr   error
	refusal   string // the last tool list refusal logged
	strikes   int    // event streams lost in a row, each soon after connecting
	holdUntil time.Time
	firstConn chan struct{} // closed after the first successful connection
	firstOnce sync.Once
	version   atomic.Uint64 // bumped when the tool list changes

	instructions string // from the last initialize answer; a change bumps version too
	// era is the protocol version the backend last spoke, "" before it
	// spoke one or after it refused it: a backend of 2025-11-25 is not
	// probed with server/discover again on each reconnect.
	era string

	// connecting says an attempt to connect is under way.
	connecting bool

	wake     chan struct{} // asks the connection loop to reconnect now
	refresh  chan struct{} // asks for the tool list again
	settled  chan struct{} // closed and replaced after each attempt
	stop     chan struct{}
	stopped  chan struct{}
	closeOne sync.Once
	reqID    atomic.Int64
	logger   atomic.Pointer[zap.Logger]
}

// New starts connecting to the backend in the background; it never
// blocks on the network.
func New(cfg Config) *Backend {
	if cfg.Transport == "" {
		cfg.Transport = TransportStreamableHTTP
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = 5 * time.Minute
	}
	if cfg.MaxResponseSize <= 0 {
		cfg.MaxResponseSize = DefaultMaxBackendResponse
	}
	if cfg.MaxStreamSize <= 0 {
		cfg.MaxStreamSize = DefaultMaxBackendStream
	}
	if cfg.MaxTools <= 0 {
		cfg.MaxTools = DefaultMaxBackendTools
	}
	if cfg.MaxToolsSize <= 0 {
		cfg.MaxToolsSize = DefaultMaxBackendToolsSize
	}
	var base http.RoundTripper = newRetryStaleConn(&http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	})
	if cfg.WrapTransport != nil {
		base = cfg.WrapTransport(base)
	}
	b := &Backend{
		cfg:       cfg,
		firstConn: make(chan struct{}),
		wake:      make(chan struct{}, 1),
		refresh:   make(chan struct{}, 1),
		settled:   make(chan struct{}),
		stop:      make(chan struct{}),
		stopped:   make(chan struct{}),
		http: &http.Client{
			Transport: tracedTransport{boundAnswers{limit: cfg.MaxResponseSize, stream: cfg.MaxStreamSize, sse: cfg.Transport == TransportSSE,
				base: base}},
			// A redirect could carry the configured headers to another host.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	b.reqID.Store(1 << 40)
	b.SetLogger(cfg.Logger)
	go b.loop()
	return b
}

// SetLogger sends the backend's log lines to logger from now on: a
// backend shared by successive configs logs to the newest one's. A nil
// logger drops them.
func (b *Backend) SetLogger(logger *zap.Logger) {
	if logger == nil {
		logger = zap.NewNop()
	}
	b.logger.Store(logger)
}

// Close stops the connection loop and closes the connection.
func (b *Backend) Close() error {
	b.closeOne.Do(func() { close(b.stop) })
	<-b.stopped
	b.mu.Lock()
	cn := b.conn
	b.conn = nil
	b.mu.Unlock()
	if cn != nil {
		cn.close()
	}
	b.http.CloseIdleConnections()
	return nil
}

// Version changes whenever the tool list or the instructions do.
func (b *Backend) Version() uint64 { return b.version.Load() }

// Tools returns the backend's exposed tools. Until wait ends it waits for
// the first successful connection (a failed first attempt is not enough:
// a backend served by the same Caddy refuses connections until Caddy
// listens, after provisioning), and then reports the backend unavailable
// if it is not connected.
func (b *Backend) Tools(ctx context.Context, wait time.Time) ([]RemoteTool, error) {
	if d := time.Until(wait); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-b.firstConn:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == nil {
		if b.lastErr != nil {
			return nil, b.lastErr
		}
		return nil, errors.New("connecting")
	}
	if time.Since(b.listedAt) > b.cfg.RefreshInterval {
		b.askRefresh()
	}
	return b.tools, nil
}

// Call calls a tool and returns its value as JSON: the structured content
// if there is one, else the text parsed as JSON if it is JSON, else the
// text; and the backend's record of a cut, if it cut the result. A tool's
// own error comes back as *BackendError.
func (b *Backend) Call(ctx context.Context, tool string, args json.RawMessage) (Answer, error) {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > b.cfg.Timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.cfg.Timeout)
		defer cancel()
	}
	state := &callState{replayable: b.replayable(tool)}
	ctx = context.WithValue(ctx, callStateKey{}, state)
	// firstSent is when the first attempt was sent: a connection made
	// before it (in the background, as the backend restarted) may carry a
	// session it forgot too, and is worth one more try if the first is
	// refused unrun; one made after it, with that refusal to learn from,
	// is not.
	var firstSent time.Time
	for attempt := 0; ; attempt++ {
		cn, err := b.connected(ctx)
		if err != nil {
			return Answer{}, err
		}
		state.retry()
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		req.Params.Meta = callMeta(ctx)
		if attempt == 0 {
			firstSent = time.Now()
		}
		res, err := cn.CallTool(ctx, req)
		if err == nil {
			if r := state.takenResult(); r != nil {
				return r.value()
			}
			return valueOf(res)
		}
		if bound := state.broken(); bound != nil {
			return Answer{}, bound
		}
		refused := eraRefused(err, state, cn.ProtocolVersion())
		if ctx.Err() == nil && (refused || staleSession(err, state) || unreachable(err)) {
			// The request never ran: reconnect, and try once more. A
			// backend that refused the connection's era was replaced by
			// one of the other era, to be learned again.
			if refused {
				b.forgetEra(cn)
			}
			b.drop(cn, err)
			if attempt == 0 {
				continue
			}
			if attempt < 3 && cn.since.Before(firstSent) {
				continue
			}
			return Answer{}, fmt.Errorf("unavailable: %w", cleanMCPError(err))
		}
		// The answer was to come on the event stream, which ended.
		if lost := b.streamLost(cn); lost != nil {
			return Answer{}, fmt.Errorf("unavailable: %w", lost)
		}
		if ctx.Err() != nil {
			return Answer{}, fmt.Errorf("no answer within %s: %w", b.cfg.Timeout, ctx.Err())
		}
		if unknownTool(err) {
			b.askRefresh()
		}
		return Answer{}, cleanMCPError(err)
	}
}

// replayable reports whether the last tool list marks a tool read-only or
// idempotent.
func (b *Backend) replayable(tool string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.tools {
		if t.Name == tool {
			return t.Replayable
		}
	}
	return false
}
