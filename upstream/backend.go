package upstream

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
)

// Backend transports.
const (
	TransportStreamableHTTP = "streamable_http"
	TransportSSE            = "sse"
)

// BackendConfig describes one MCP backend.
type BackendConfig struct {
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
	Logger          *zap.Logger
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

// DefaultMaxBackendResponse bounds a backend answer when the config sets
// no limit. It is well above the mcp handler's max_response_size, since an
// answer carries a REST body escaped as JSON text.
const DefaultMaxBackendResponse = 16 << 20

// AnswerTooLargeError reports a backend answer over the size limit.
type AnswerTooLargeError struct{ Limit int64 }

func (e *AnswerTooLargeError) Error() string {
	return fmt.Sprintf("the backend's answer is larger than %s", FormatSize(e.Limit))
}

// BackendError is a backend tool's own error result (isError).
type BackendError struct{ Message string }

func (e *BackendError) Error() string { return e.Message }

// Backend is a client of one MCP server: it connects in the background,
// reconnects with backoff, re-initializes when the server forgot the
// session, and keeps the server's tool list. Safe for concurrent use.
type Backend struct {
	cfg  BackendConfig
	http *http.Client

	mu        sync.Mutex
	client    *conn
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

	wake     chan struct{} // asks the connection loop to reconnect now
	refresh  chan struct{} // asks for the tool list again
	settled  chan struct{} // closed and replaced after each attempt
	stop     chan struct{}
	stopped  chan struct{}
	closeOne sync.Once
	reqID    atomic.Int64
}

// conn is one initialized connection to the backend.
type conn struct {
	*client.Client
	end   context.CancelFunc // ends the context of the SSE transport's event stream
	since time.Time
	// streamLost is why the session's event stream ended; b.mu. The calls
	// waiting for an answer on it fail with this reason.
	streamLost error
}

func (cn *conn) close() {
	_ = cn.Client.Close()
	cn.end()
}

// NewBackend starts connecting to the backend in the background; it never
// blocks on the network.
func NewBackend(cfg BackendConfig) *Backend {
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
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
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
			Transport: boundAnswers{limit: cfg.MaxResponseSize, stream: cfg.MaxStreamSize, sse: cfg.Transport == TransportSSE,
				base: newRetryStale(&http.Transport{
					DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
					MaxIdleConnsPerHost: 64,
					IdleConnTimeout:     90 * time.Second,
					TLSHandshakeTimeout: 10 * time.Second,
				})},
			// A redirect could carry the configured headers to another host.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	b.reqID.Store(1 << 40)
	go b.loop()
	return b
}

// Close stops the connection loop and closes the client.
func (b *Backend) Close() error {
	b.closeOne.Do(func() { close(b.stop) })
	<-b.stopped
	b.mu.Lock()
	cn := b.client
	b.client = nil
	b.mu.Unlock()
	if cn != nil {
		cn.close()
	}
	b.http.CloseIdleConnections()
	return nil
}

// retryStale sends a request once more, on a new connection, when it
// failed on a pooled connection that the backend had closed (it
// restarted, or dropped idle connections) before answering anything.
// net/http does this itself only for requests it deems idempotent, and
// every MCP request is a POST. A tools/call is sent again only if the
// backend had closed the connection before the request went out: one that
// broke later may have run the tool, which must not run twice.
//
// The second attempt goes out on a new connection, never a pooled one: a
// backend that closed one idle connection has usually closed them all (a
// restart, or the shutdown of its servers on every Caddy reload), and
// another pooled connection would fail the same way.
type retryStale struct {
	base  *http.Transport
	fresh *http.Transport // base's settings, without keep-alive
}

func newRetryStale(base *http.Transport) retryStale {
	fresh := base.Clone()
	fresh.DisableKeepAlives = true
	return retryStale{base: base, fresh: fresh}
}

func (t retryStale) RoundTrip(req *http.Request) (*http.Response, error) {
	reused, closedBefore := false, false
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		reused = info.Reused
		if reused {
			conn := info.Conn
			if tc, ok := conn.(*tls.Conn); ok {
				conn = tc.NetConn()
			}
			closedBefore = closedByPeer(conn)
		}
	}}
	resp, err := t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err == nil || !reused || req.GetBody == nil || req.Context().Err() != nil || !staleConnection(err) {
		return resp, err
	}
	if state, ok := req.Context().Value(callStateKey{}).(*callState); ok && !closedBefore && !state.replayable {
		return resp, err
	}
	body, gerr := req.GetBody()
	if gerr != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	again.Body = body
	return t.fresh.RoundTrip(again)
}

func (t retryStale) CloseIdleConnections() {
	t.base.CloseIdleConnections()
	t.fresh.CloseIdleConnections()
}

func staleConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "server closed idle connection")
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
	if b.client == nil {
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
// text. A tool's own error comes back as *BackendError.
func (b *Backend) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > b.cfg.Timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.cfg.Timeout)
		defer cancel()
	}
	state := &callState{replayable: b.replayable(tool)}
	ctx = context.WithValue(ctx, callStateKey{}, state)
	// refusedAt is when the first attempt was refused unrun: a connection
	// made before it (in the background, as the backend restarted) may
	// carry a session it forgot too, and is worth one more try.
	var refusedAt time.Time
	for attempt := 0; ; attempt++ {
		cn, err := b.connected(ctx)
		if err != nil {
			return nil, err
		}
		state.retry()
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := cn.CallTool(ctx, req)
		if err == nil {
			return valueOf(res)
		}
		if bound := state.broken(); bound != nil {
			return nil, bound
		}
		if ctx.Err() == nil && (staleSession(err, state) || unreachable(err)) {
			// The request never ran: reconnect, and try once more.
			b.drop(cn, err)
			if attempt == 0 {
				refusedAt = time.Now()
				continue
			}
			if attempt < 3 && cn.since.Before(refusedAt) {
				continue
			}
			return nil, fmt.Errorf("unavailable: %w", cleanMCPError(err))
		}
		// The answer was to come on the event stream, which ended.
		if lost := b.streamLost(cn); lost != nil {
			return nil, fmt.Errorf("unavailable: %w", lost)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer within %s: %w", b.cfg.Timeout, ctx.Err())
		}
		if unknownTool(err) {
			b.askRefresh()
		}
		return nil, cleanMCPError(err)
	}
}

// connected returns the current connection, asking for one and waiting
// for the attempt when there is none.
func (b *Backend) connected(ctx context.Context) (*conn, error) {
	for tries := 0; tries < 2; tries++ {
		b.mu.Lock()
		cn, settled, lastErr, held := b.client, b.settled, b.lastErr, time.Now().Before(b.holdUntil)
		b.mu.Unlock()
		if cn != nil {
			return cn, nil
		}
		if tries == 1 || held {
			if lastErr == nil {
				lastErr = errors.New("not connected")
			}
			return nil, fmt.Errorf("unavailable: %w", lastErr)
		}
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
	return nil, errors.New("unavailable")
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
	if b.client == cn {
		b.client, b.lastErr = nil, err
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
		err = fmt.Errorf("the backend's event stream ended: %w", CleanError(err))
	}
	b.mu.Lock()
	if cn.streamLost == nil {
		cn.streamLost = err
	}
	current := b.client == cn
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

func (b *Backend) askRefresh() {
	select {
	case b.refresh <- struct{}{}:
	default:
	}
}

// loop connects, reconnects with backoff while the backend is down, and
// refreshes the tool list on request and on its TTL.
func (b *Backend) loop() {
	defer close(b.stopped)
	backoff := 250 * time.Millisecond
	for {
		b.mu.Lock()
		up, hold := b.client != nil, time.Until(b.holdUntil)
		b.mu.Unlock()
		if !up {
			if hold > 0 && !b.sleep(hold, false) {
				return
			}
			err := b.connect()
			b.settle()
			if err != nil {
				b.cfg.Logger.Debug("backend unavailable", zap.String("backend", b.cfg.Name), zap.Error(err), zap.Duration("retry_in", backoff))
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
	close(b.settled)
	b.settled = make(chan struct{})
	b.mu.Unlock()
}

// connect starts a new client, initializes it and lists the tools.
func (b *Backend) connect() error {
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Timeout)
	defer cancel()
	go func() {
		select {
		case <-b.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
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
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "caddy-mcp", Version: "0.1.0"}
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
	cn.since = time.Now()
	b.client, b.lastErr = cn, nil
	b.setTools(tools)
	b.setInstructions(initialized.Instructions)
	b.mu.Unlock()
	b.firstOnce.Do(func() { close(b.firstConn) })
	b.cfg.Logger.Debug("backend connected", zap.String("backend", b.cfg.Name),
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

// relist lists the tools again on the current client.
func (b *Backend) relist() {
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Timeout)
	defer cancel()
	b.Relist(ctx)
}

// Relist lists the tools again now, if the backend is connected, within
// ctx. A config reload may have changed a backend served by the same
// Caddy, whose list was read from the previous config.
func (b *Backend) Relist(ctx context.Context) {
	b.mu.Lock()
	cn := b.client
	b.mu.Unlock()
	if cn == nil {
		return
	}
	state := &callState{replayable: true}
	tools, err := b.listTools(context.WithValue(ctx, callStateKey{}, state), cn.Client)
	if err != nil {
		if staleSession(err, state) || unreachable(err) {
			b.drop(cn, err)
		}
		return
	}
	b.mu.Lock()
	b.setTools(tools)
	b.mu.Unlock()
}

// setTools stores a new tool list; b.mu is held.
func (b *Backend) setTools(tools []RemoteTool) {
	b.listedAt = time.Now()
	if !sameTools(b.tools, tools) {
		b.tools = tools
		b.version.Add(1)
	}
}

func sameTools(a, b []RemoteTool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || a[i].Replayable != b[i].Replayable ||
			string(a[i].InputSchema) != string(b[i].InputSchema) || string(a[i].OutputSchema) != string(b[i].OutputSchema) {
			return false
		}
	}
	return true
}

func (b *Backend) newClient() (*client.Client, error) {
	header := b.cfg.Header
	if header == nil {
		header = func(context.Context) map[string]string { return nil }
	}
	switch b.cfg.Transport {
	case TransportSSE:
		return client.NewSSEMCPClient(b.cfg.URL,
			transport.WithHTTPClient(b.http),
			transport.WithHeaderFunc(transport.HTTPHeaderFunc(header)))
	case TransportStreamableHTTP:
		tr, err := transport.NewStreamableHTTP(b.cfg.URL,
			transport.WithHTTPBasicClient(b.http),
			transport.WithHTTPHeaderFunc(transport.HTTPHeaderFunc(header)))
		if err != nil {
			return nil, err
		}
		return client.NewClient(tr), nil
	default:
		return nil, fmt.Errorf("unknown transport %q", b.cfg.Transport)
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

// exposed reports whether the tools globs let a tool through.
func (b *Backend) exposed(name string) bool {
	if len(b.cfg.Tools) == 0 {
		return true
	}
	for _, g := range b.cfg.Tools {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// valueOf turns a tool result into the value the code receives.
func valueOf(res *mcp.CallToolResult) (json.RawMessage, error) {
	var texts []string
	others := false
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		} else {
			others = true
		}
	}
	if res.IsError {
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the tool failed and gave no message"
		}
		return nil, &BackendError{Message: msg}
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	if others {
		return json.Marshal(res.Content)
	}
	text := strings.Join(texts, "\n")
	if t := strings.TrimSpace(text); t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t), nil
	}
	return json.Marshal(text)
}

// staleSession reports a request the backend refused because it no longer
// knows the session, and so did not run: the answer to a request that
// carried a session was 404 (mcp-go's ErrSessionTerminated) or 400
// (server-everything, mcp-go's SSE server), or mcp-go did not send it at
// all because an earlier answer had ended the session. It goes by status
// and error type only: a tool's own answer, whatever its text, came with
// another status, and a request that may have reached the tool is never
// sent again.
func staleSession(err error, state *callState) bool {
	status, session := state.answer()
	if status == 0 {
		return errors.Is(err, transport.ErrSessionTerminated)
	}
	return session && (status == http.StatusNotFound || status == http.StatusBadRequest)
}

// unreachable reports an error where the request cannot have reached the
// server, so that trying again is safe.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}

// unknownTool reports the JSON-RPC error of a call the server refused for
// its method or tool: -32602 (invalid params, which the spec and mcp-go
// answer for an unknown tool) or -32601. Invalid arguments answer -32602
// too, so this may list the tools again for nothing; it never retries.
func unknownTool(err error) bool {
	return errors.Is(err, mcp.ErrInvalidParams) || errors.Is(err, mcp.ErrMethodNotFound)
}

// cleanMCPError drops the wrappers and URLs net/http and mcp-go put around
// an error, and cuts its text to a preview: mcp-go puts the whole body of
// a failed answer in it.
func cleanMCPError(err error) error {
	var tooLarge *AnswerTooLargeError
	if errors.As(err, &tooLarge) {
		return tooLarge
	}
	var bound *StreamLimitError
	if errors.As(err, &bound) {
		return bound
	}
	var te *transport.Error
	if errors.As(err, &te) && te.Err != nil {
		err = te.Err
	}
	err = CleanError(err)
	if msg := err.Error(); len(msg) > errorBodyPreview {
		return &cutError{msg: preview([]byte(strings.ToValidUTF8(msg, "\uFFFD"))), err: err}
	}
	return err
}

// cutError is an error whose text was cut; errors.Is still sees the cause.
type cutError struct {
	msg string
	err error
}

func (e *cutError) Error() string { return e.msg }
func (e *cutError) Unwrap() error { return e.err }
