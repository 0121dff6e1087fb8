//go:build unix

// Package prismtest runs Stoplight Prism (@stoplight/prism-cli, pinned in
// this folder's package-lock.json, on Node 22 from npm) as a mock of an
// OpenAPI document on 127.0.0.1, so that a test can show that every request
// a gateway sends is one the document allows.
//
// Prism validates each request against the operation it routes to: path,
// query (deserialized by each parameter's style), headers, security,
// content type and body, against their schemas. Where the request breaks
// the document it answers with the operation's own 422 or 400 answer, or
// with a 422 of its own when the document has none, and it logs each
// problem. The status alone does not tell (a document may answer 400 for
// other reasons), so Server reads Prism's log and collects every problem
// as a Violation, and also records what reached Prism, in front of it, so
// that a test can check the wire form (a query style, a header, a body)
// that Prism accepts without telling.
package prismtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/npmtest"
)

const (
	prismMain = "@stoplight/prism-cli/dist/index.js"
	nodeBin   = "node/bin/node"
	// syncPath is a path no document has: a request for it marks a point
	// in Prism's log, which is written after the answer is sent.
	syncPath = "/__prismtest/sync/"
	// startTimeout bounds Prism's start-up: it reads and dereferences the
	// whole document first (GitHub's takes about 9 s here).
	startTimeout = 90 * time.Second
	maxBody      = 8 << 20
	keptLogLines = 400
	// responseViolations starts the error of an answer of Prism's own
	// that breaks the document (with --errors, a 500).
	responseViolations = "https://stoplight.io/prism/errors#VIOLATIONS"
)

// Dir is this package's source folder, which holds package.json.
func Dir(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("prismtest: no caller information to find the package folder")
	}
	return filepath.Dir(file)
}

// Node returns the Node 22 binary installed beside Prism, installing both
// first when needed.
func Node(tb testing.TB) string {
	tb.Helper()
	dir := Dir(tb)
	npmtest.Install(tb, dir, prismMain)
	return filepath.Join(dir, "node_modules", nodeBin)
}

// Server is one Prism mocking one document, behind a recording front.
type Server struct {
	// URL is the front's base URL (http://127.0.0.1:<port>, no path): what
	// the gateway's upstream is. Prism serves the document's paths at its
	// root, whatever its servers say.
	URL string

	prismURL  string
	client    *http.Client
	listening chan struct{} // closed when Prism says it listens
	waited    chan struct{} // closed when the process has ended

	mu         sync.Mutex
	changed    *sync.Cond
	requests   []Request
	violations []Violation
	synced     int // the last sync request seen in the log
	syncs      int // the last sync request sent
	exited     bool
	log        []string // the last keptLogLines lines

	// Parsing state: the request whose lines come now.
	current      string
	currentFound bool // a validator problem was logged for it
}

// Request is one request that went through the front to Prism, and
// Prism's answer's status.
type Request struct {
	Method   string
	Path     string // as sent, escaped
	RawQuery string
	Header   http.Header
	Body     []byte
	Status   int
}

// URI is the path and the query, as sent.
func (r Request) URI() string {
	if r.RawQuery == "" {
		return r.Path
	}
	return r.Path + "?" + r.RawQuery
}

// Violation is one problem Prism logged about a request, or about its own
// answer (Location starting with "response"), or a request Prism refused
// outright (no such path or method, an Accept it cannot serve).
type Violation struct {
	// Request is "GET /pet/findByStatus": method and path, as Prism
	// logged them. Prism logs a request's lines together once it has read
	// its body; requests sent one at a time are told apart for sure.
	Request  string
	Severity string // "error", or "warning" (a deprecated parameter)
	Location string // "request.query.status.0", when Prism named one
	Message  string
}

// OfResponse reports whether the violation is of Prism's own answer, not
// of the request.
func (v Violation) OfResponse() bool { return strings.HasPrefix(v.Location, "response") }

func (v Violation) String() string {
	loc := ""
	if v.Location != "" {
		loc = " at " + v.Location
	}
	return fmt.Sprintf("%s: %s%s: %s", v.Request, v.Severity, loc, v.Message)
}

// Mark is a point in what a Server saw, for Since.
type Mark struct{ requests, violations int }

// Options are how Prism answers; the zero value answers from the
// document's examples.
type Options struct {
	// Dynamic makes Prism generate its answers from the response schemas
	// (json-schema-faker, seeded, so the same each run) instead of taking
	// the document's examples, which some documents (GitHub's) do not keep
	// to their own schemas.
	Dynamic bool
	// Drift lets Prism answer with the document's examples even where
	// they break the document's own schemas, as the real API does: no
	// --errors, so such an answer is sent with its violations logged
	// (Violations at "response"), not replaced by a 500. Requests are
	// still validated and reported.
	Drift bool
}

// Document is a document for Prism to mock (a file), and how.
type Document struct {
	Path    string
	Options Options
}

// Start runs Prism on document (a file) on a free port of 127.0.0.1 and
// waits until it listens. Unless o.Drift, it runs with --errors: an answer
// of its own that breaks the document is a 500 and a Violation at
// "response", so that a test never takes Prism's mistake for the
// gateway's. Everything stops
// when the test ends; Prism's last log lines are shown if the test failed.
func Start(tb testing.TB, document string, o Options) *Server {
	tb.Helper()
	return StartAll(tb, Document{document, o})[0]
}

// StartAll is Start for several documents at once: each Prism reads its
// document while the others read theirs.
func StartAll(tb testing.TB, docs ...Document) []*Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts Prism on Node")
	}
	node := Node(tb)
	started := time.Now()
	servers := make([]*Server, len(docs))
	for i, d := range docs {
		servers[i] = launch(tb, node, d)
	}
	for i, s := range servers {
		select {
		case <-s.listening:
		case <-s.waited:
			tb.Fatalf("prism exited before it listened; its log:\n%s", s.LogTail())
		case <-time.After(startTimeout - time.Since(started)):
			tb.Fatalf("prism did not listen on %s within %s; its log:\n%s", s.prismURL, startTimeout, s.LogTail())
		}
		tb.Logf("prism mocks %s on %s after %s", filepath.Base(docs[i].Path), s.prismURL, time.Since(started).Round(time.Millisecond))
		front := httptest.NewServer(s.recorder()) // 127.0.0.1
		tb.Cleanup(front.Close)
		s.URL = front.URL
	}
	return servers
}

// launch starts one Prism, stopped (its process group) when the test
// ends.
func launch(tb testing.TB, node string, d Document) *Server {
	tb.Helper()
	document, err := filepath.Abs(d.Path)
	if err != nil {
		tb.Fatal(err)
	}
	port := incaddy.FreePort(tb)
	args := []string{filepath.Join(Dir(tb), "node_modules", prismMain), "mock", document,
		"--host", "127.0.0.1", "--port", port}
	if !d.Options.Drift {
		args = append(args, "--errors")
	}
	if d.Options.Dynamic {
		args = append(args, "--dynamic", "--seed", "caddy-mcp")
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = tb.TempDir()
	cmd.Env = []string{
		"PATH=" + filepath.Dir(node) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + cmd.Dir,
		"NO_COLOR=1", "FORCE_COLOR=0", // plain log lines to parse
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	s := &Server{
		prismURL:  "http://127.0.0.1:" + port,
		client:    &http.Client{Timeout: 30 * time.Second},
		listening: make(chan struct{}),
		waited:    make(chan struct{}),
	}
	s.changed = sync.NewCond(&s.mu)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting prism: %v", err)
	}
	go func() {
		s.read(stdout)
		_ = cmd.Wait() // after the pipe's end, as Wait requires
		s.mu.Lock()
		s.exited = true
		s.changed.Broadcast()
		s.mu.Unlock()
		close(s.waited)
	}()
	tb.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.waited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-s.waited
		}
		if tb.Failed() {
			tb.Logf("prism's last log lines (%s):\n%s", filepath.Base(document), s.LogTail())
		}
	})
	return s
}

// recorder forwards each request to Prism as it came, and records it.
func (s *Server) recorder() http.Handler {
	target, _ := url.Parse(s.prismURL)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ModifyResponse: func(resp *http.Response) error {
			i, _ := resp.Request.Context().Value(indexKey{}).(int)
			s.mu.Lock()
			s.requests[i].Status = resp.StatusCode
			s.mu.Unlock()
			return nil
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			http.Error(w, "prismtest: request body unreadable or over 8 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		i := len(s.requests)
		s.requests = append(s.requests, Request{
			Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
			Header: r.Header.Clone(), Body: body,
		})
		s.mu.Unlock()
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), indexKey{}, i)))
	})
}

// Mark returns the point reached now.
func (s *Server) Mark() Mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Mark{len(s.requests), len(s.violations)}
}

// Since returns the requests that reached Prism since m, and the
// violations Prism logged for them. It first waits until Prism's log has
// caught up with every answer already sent.
func (s *Server) Since(tb testing.TB, m Mark) ([]Request, []Violation) {
	tb.Helper()
	s.sync(tb)
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests[m.requests:]...), append([]Violation(nil), s.violations[m.violations:]...)
}

// sync sends Prism a request for a path no document has and waits until
// its log shows the answer: the log is one ordered stream, so the lines of
// every request answered before are in by then.
func (s *Server) sync(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	s.syncs++
	n := s.syncs
	s.mu.Unlock()
	resp, err := s.client.Get(s.prismURL + syncPath + strconv.Itoa(n))
	if err != nil {
		select {
		case <-s.waited:
			tb.Fatalf("prism has exited (%v); its last log lines:\n%s", err, s.LogTail())
		case <-time.After(time.Second):
			tb.Fatalf("prism does not answer: %v", err)
		}
	}
	resp.Body.Close()
	deadline := time.AfterFunc(10*time.Second, func() {
		s.mu.Lock()
		s.changed.Broadcast()
		s.mu.Unlock()
	})
	defer deadline.Stop()
	start := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.synced < n {
		if s.exited {
			tb.Fatalf("prism exited; its log:\n%s", strings.Join(s.log, "\n"))
		}
		if time.Since(start) >= 10*time.Second {
			tb.Fatalf("prism's log did not show request %d within 10 s", n)
		}
		s.changed.Wait()
	}
}

// LogTail returns Prism's last log lines.
func (s *Server) LogTail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}

// logLine matches Prism's log lines (signale's, without colors):
//
//	[5:44:08 PM] › [HTTP SERVER] get /pet/findByStatus ℹ  info      Request received
//	[5:44:08 PM] ›     [VALIDATOR] ✖  error     Request query must have required property 'status'
var logLine = regexp.MustCompile(`^\[[^\]]*\] \S+\s+\[([A-Z ]+)\](?: ([a-z]+) (\S+))? \S+\s+([a-z]+)\s+(.*)$`)

// violationLine is the validator's summary of one problem, after the
// answer: "Violation: request.query.status.0 Request query parameter ...".
var violationLine = regexp.MustCompile(`^Violation: (\S*) (.*)$`)

func (s *Server) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	announced := false
	for sc.Scan() {
		line := sc.Text()
		s.mu.Lock()
		s.log = append(s.log, line)
		if len(s.log) > keptLogLines {
			s.log = s.log[len(s.log)-keptLogLines:]
		}
		s.parse(line)
		s.mu.Unlock()
		if !announced && strings.Contains(line, "Prism is listening on") {
			announced = true
			close(s.listening)
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// parse reads one log line; s.mu is held.
func (s *Server) parse(line string) {
	m := logLine.FindStringSubmatch(line)
	if m == nil {
		return
	}
	source, method, path, level, msg := m[1], strings.ToUpper(m[2]), m[3], m[4], m[5]
	switch {
	case source == "HTTP SERVER" && strings.HasPrefix(path, syncPath):
		if strings.HasPrefix(msg, "Request terminated with error") {
			if n, err := strconv.Atoi(strings.TrimPrefix(path, syncPath)); err == nil && n > s.synced {
				s.synced = n
				s.changed.Broadcast()
			}
		}
		s.current = ""
	case source == "HTTP SERVER" && msg == "Request received":
		s.current = method + " " + path
		s.currentFound = false
	case source == "HTTP SERVER" && level == "error":
		// A refusal before or instead of validation (no such path or
		// method, an Accept Prism cannot serve, its own answer invalid);
		// a failed validation ends here too, already recorded.
		msg = strings.TrimPrefix(msg, "Request terminated with error: ")
		loc := ""
		if strings.HasPrefix(msg, responseViolations) {
			loc = "response"
		}
		if loc != "" || !s.currentFound || s.current != method+" "+path {
			s.add(Violation{Request: method + " " + path, Severity: "error", Location: loc, Message: msg})
		}
	case source == "VALIDATOR" && (level == "error" || level == "warning"):
		if msg == "Request did not pass the validation rules" {
			return
		}
		if v := violationLine.FindStringSubmatch(msg); v != nil {
			for i := len(s.violations) - 1; i >= 0 && s.violations[i].Request == s.current; i-- {
				if s.violations[i].Message == v[2] && s.violations[i].Location == "" {
					s.violations[i].Location = v[1]
					return
				}
			}
			s.add(Violation{Request: s.current, Severity: level, Location: v[1], Message: v[2]})
			return
		}
		s.add(Violation{Request: s.current, Severity: level, Message: msg})
	}
}

func (s *Server) add(v Violation) {
	if v.Request == "" {
		return // the sync request's
	}
	s.violations = append(s.violations, v)
	s.currentFound = true
}

// indexKey keys the index of a request in Server.requests.
type indexKey struct{}

// Documents returns the folder of the real OpenAPI documents that the
// openapi package's tests use (openapi/testdata/node_modules: GitHub's,
// from @octokit/openapi, and @readme/oas-examples), installing them first
// when needed.
func Documents(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(Dir(tb), "..", "..", "openapi", "testdata")
	npmtest.Install(tb, dir, "@readme/oas-examples/3.0/json/petstore.json")
	return filepath.Join(dir, "node_modules")
}
