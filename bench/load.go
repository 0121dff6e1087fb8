package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Target is what a run sends: a plain REST GET, or an MCP tools/call in
// one protocol era.
type Target struct {
	URL string
	// Protocol is "REST", "2025-11-25" (initialize, then calls carrying
	// the session id if the server gives one) or "2026-07-28" (stateless:
	// each call carries its protocol metadata).
	Protocol string
	Tool     string
	Args     string // JSON object
	// Tokens, when set, gives each session a bearer token of its own,
	// for URL, sent on every one of its requests.
	Tokens *issuer
}

var transport = &http.Transport{
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConns:        1024,
	MaxIdleConnsPerHost: 1024,
	IdleConnTimeout:     30 * time.Second,
	DisableCompression:  true,
}

var httpClient = &http.Client{Transport: transport, Timeout: 30 * time.Second}

// session is one client: for MCP 2025-11-25, an initialized session. Its
// load requests go over a connection of its own, prepared once.
type session struct {
	t     Target
	id    string // Mcp-Session-Id, if the server gave one
	token string // the bearer token, if the target needs one
	seq   atomic.Int64
	raw   rawConn
	req   []byte
}

func newSession(ctx context.Context, t Target) (*session, error) {
	s := &session{t: t}
	if t.Tokens != nil {
		var err error
		if s.token, err = t.Tokens.token(t.URL, time.Now()); err != nil {
			return nil, err
		}
	}
	if t.Protocol != "2025-11-25" {
		return s, s.prepare()
	}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"caddy-mcp-bench","version":"1"}}}`
	resp, body, err := s.post(ctx, init, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"protocolVersion"`)) {
		return nil, fmt.Errorf("initialize: %d %.200s", resp.StatusCode, body)
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	resp, body, err = s.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("notifications/initialized: %d %.200s", resp.StatusCode, body)
	}
	return s, s.prepare()
}

// prepare builds the load request of the session once: one call at a time
// is in flight on a session, so one JSON-RPC id serves them all.
func (s *session) prepare() error {
	u, err := url.Parse(s.t.URL)
	if err != nil {
		return err
	}
	s.raw.addr = u.Host
	var header [][2]string
	if s.token != "" {
		header = append(header, [2]string{"Authorization", "Bearer " + s.token})
	}
	if s.t.Protocol == "REST" {
		s.req = rawRequest(u, http.MethodGet, header, nil)
		return nil
	}
	header = append(header,
		[2]string{"Content-Type", "application/json"},
		[2]string{"Accept", "application/json, text/event-stream"},
		[2]string{"Mcp-Protocol-Version", s.t.Protocol},
	)
	if s.id != "" {
		header = append(header, [2]string{"Mcp-Session-Id", s.id})
	}
	var body string
	if s.t.Protocol == "2026-07-28" {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
			`"io.modelcontextprotocol/clientInfo":{"name":"caddy-mcp-bench","version":"1"}}}}`, s.t.Tool, s.t.Args)
		header = append(header, [2]string{"Mcp-Method", "tools/call"}, [2]string{"Mcp-Name", s.t.Tool})
	} else {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, s.t.Tool, s.t.Args)
	}
	s.req = rawRequest(u, http.MethodPost, header, []byte(body))
	return nil
}

func (s *session) post(ctx context.Context, body string, extra map[string]string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.t.URL, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if s.t.Protocol != "REST" {
		h.Set("Mcp-Protocol-Version", s.t.Protocol)
	}
	if s.id != "" {
		h.Set("Mcp-Session-Id", s.id)
	}
	if s.token != "" {
		h.Set("Authorization", "Bearer "+s.token)
	}
	for k, v := range extra {
		h.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

var (
	resultMark  = []byte(`"result"`)
	isErrorMark = []byte(`"isError":true`)
)

// call sends the session's load request and checks the answer.
func (s *session) call(ctx context.Context) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	status, body, err := s.raw.do(s.req, deadline)
	if err != nil {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return context.DeadlineExceeded // the run ended during the request
		}
		return err
	}
	if status != 200 {
		return fmt.Errorf("status %d: %.300s", status, body)
	}
	if s.t.Protocol != "REST" && (!bytes.Contains(body, resultMark) || bytes.Contains(body, isErrorMark)) {
		return fmt.Errorf("not a successful tool result: %.300s", body)
	}
	return nil
}

// sessions makes n clients of t.
func sessions(t Target, n int) ([]*session, error) {
	out := make([]*session, n)
	for i := range out {
		s, err := newSession(context.Background(), t)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// saturate runs closed-loop load: each session sends its next request as
// soon as the previous one is answered, for d. It returns the requests
// answered and the errors.
func saturate(ss []*session, d time.Duration) (done, failed int, firstErr error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var ok, bad atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func(s *session) {
			defer wg.Done()
			for ctx.Err() == nil {
				err := s.call(ctx)
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, context.DeadlineExceeded):
					// the run ended during the request
				default:
					bad.Add(1)
					once.Do(func() { firstErr = err })
				}
			}
		}(s)
	}
	wg.Wait()
	return int(ok.Load()), int(bad.Load()), firstErr
}

// fixedRate runs open-loop load: requests start at rate per second for d,
// whatever the answers, each on a free session of ss. A latency counts
// from when the request was due, so a server that falls behind shows it.
func fixedRate(ss []*session, rate float64, d time.Duration) (lat []time.Duration, failed int, firstErr error) {
	free := make(chan *session, len(ss))
	for _, s := range ss {
		free <- s
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if due.Sub(start) >= d {
			break
		}
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		s := <-free
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { free <- s }()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := s.call(ctx)
			cancel()
			took := time.Since(due)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			lat = append(lat, took)
		}()
	}
	wg.Wait()
	return lat, failed, firstErr
}

// percentile returns the p-th percentile (0..100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

func sortDurations(d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
