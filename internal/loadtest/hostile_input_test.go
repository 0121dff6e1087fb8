//go:build linux

package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/caddy-mcp/caddy-mcp/internal/hostileinput"
)

// hostileLimit is the address space the Caddy of these tests runs under:
// an answer or a document that makes it allocate past it ends the
// process ("fatal error: out of memory"), as it would end a production
// Caddy a little later. A nested answer once took 3.2 GB to cut, a
// document of anchors 3.3 GB to load.
const hostileLimit = 3 << 30

// hostileAnswers are the answers of the hostile upstream, by path.
func hostileAnswers() map[string][]byte {
	answers := map[string][]byte{"/bytes": []byte(`{"s":"` + hostileinput.NotUTF8() + `","t":["` + hostileinput.NotUTF8() + `"]}`)}
	for _, a := range hostileinput.DeepAnswers() {
		answers[a.Path] = a.Body
	}
	return answers
}

// TestHostileAnswers: an upstream whose answers are nested nearly as deep
// as JSON is read (objects under long keys, arrays), hold thousands of
// strings to cut under a deep chain, or bytes that are not UTF-8, cannot
// end Caddy, and what a client receives stays within max_result_size:
// text and structuredContent each, and a cut record of at most 4 KiB.
func TestHostileAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy processes")
	}
	t.Parallel()
	answers := hostileAnswers()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(up.Close)

	// Each tool's name is its path; "structured" has an output schema.
	limits := map[string]int64{"objects": 1 << 20, "structured": 1 << 20, "arrays": 1 << 20, "strings": 4 << 10, "bytes": 1 << 10}
	answers["/structured"] = answers["/objects"]
	var tools strings.Builder
	for name, limit := range limits {
		schema := ""
		if name == "structured" {
			schema = `output_schema {"type":"object"}`
		}
		fmt.Fprintf(&tools, `
		tool %s {
			description "A hostile answer."
			get /%s
			max_result_size %d
			%s
		}`, name, name, limit, schema)
	}
	port := freePort(t)
	sites := fmt.Sprintf(`http://127.0.0.1:%d {
	mcp /mcp {
		upstream %s
		max_response_size 8MiB
%s
	}
}
`, port, up.URL, tools.String())
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := startCaddyLimited(t, "answers", sites, hostileLimit, addr)
	s, err := newMCPSession("http://"+addr+"/mcp", eraModern)
	if err != nil {
		t.Fatal(err)
	}
	defer s.conn.close()

	for round := range 2 {
		for name, limit := range limits {
			a, err := s.conn.do(s.toolCall(name, map[string]any{}, false), time.Now().Add(time.Minute))
			if err != nil {
				select {
				case <-p.done:
					t.Fatalf("round %d, %s: Caddy died (%v):\n%s", round, name, p.waitErr, tail(p.logPath, 20))
				default:
				}
				t.Fatalf("round %d, %s: %v", round, name, err)
			}
			checkShapedAnswer(t, name, a, limit)
		}
	}
	select {
	case <-p.done:
		t.Fatalf("Caddy died (%v):\n%s", p.waitErr, tail(p.logPath, 20))
	default:
	}
}

// checkShapedAnswer reads a tools/call answer and checks what a client
// gets of it against limit.
func checkShapedAnswer(t *testing.T, name string, a answer, limit int64) {
	t.Helper()
	body := a.body
	if i := bytes.Index(body, []byte("data: ")); bytes.HasPrefix(body, []byte("event:")) && i >= 0 {
		body = body[i+len("data: "):]
	}
	var msg struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Meta              struct {
				Cut json.RawMessage `json:"io.github.caddy-mcp/cut"`
			} `json:"_meta"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if a.status != 200 || json.Unmarshal(bytes.TrimSpace(body), &msg) != nil || len(msg.Result.Content) == 0 {
		t.Fatalf("%s: status %d: %.300s", name, a.status, a.body)
	}
	text := msg.Result.Content[0].Text
	if int64(len(text)) > limit || !utf8.ValidString(text) || !strings.Contains(text, "[cut to max_result_size") {
		t.Errorf("%s: %d bytes of text (valid UTF-8 %v), limit %d: %.200s", name, len(text), utf8.ValidString(text), limit, text)
	}
	if sc := msg.Result.StructuredContent; len(sc) > 0 {
		var v any
		_ = json.Unmarshal(sc, &v)
		if read, _ := json.Marshal(v); int64(len(read)) > limit {
			t.Errorf("%s: %d bytes of structuredContent, limit %d", name, len(read), limit)
		}
	}
	if n := len(msg.Result.Meta.Cut); n == 0 || n > 4<<10 {
		t.Errorf("%s: a cut record of %d bytes, want 1 to 4096", name, n)
	}
	t.Logf("%s: %d bytes sent; text %d, structuredContent %d, cut record %d; limit %d",
		name, len(a.body), len(text), len(msg.Result.StructuredContent), len(msg.Result.Meta.Cut), limit)
}

const goodDocument = `{"openapi":"3.0.3","info":{"title":"good","version":"1"},"paths":{"/items":{"get":{"operationId":"list_items","responses":{"200":{"description":"ok"}}}}}}`

// documentSites is an mcp endpoint importing source beside an inline
// tool.
func documentSites(port int, upstream, source string) string {
	return fmt.Sprintf(`http://127.0.0.1:%d {
	mcp /mcp {
		upstream %s
		openapi %s
		tool ping {
			description "Inline, beside the imported tools."
			get /ping
		}
	}
}
`, port, upstream, source)
}

// TestHostileDocuments: a document of anchors or of schemas referenced
// thousands of times, from a file or a URL, cannot end Caddy, on start or
// on reload: anchors past the bound are a config error (a reload keeps
// the config that runs), schemas past theirs skip their operations.
func TestHostileDocuments(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy processes")
	}
	t.Parallel()
	// Anchors 7 levels deep, 10 aliases a level (1.2 KB, ten million
	// values expanded); a schema with a 100 KB description written out by
	// 4,000 properties of a body of three operations (268 KB, a 400 MB
	// input schema each).
	docs := map[string][]byte{
		"/good.json":    []byte(goodDocument),
		"/aliases.yaml": hostileinput.AliasBomb(7, 10),
		"/schemas.json": hostileinput.SchemaBomb(3, 4000, 100<<10, "input"),
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := docs[r.URL.Path]; ok {
			w.Write(body)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(server.Close)
	dir := t.TempDir()
	aliasFile := filepath.Join(dir, "aliases.yaml")
	if err := os.WriteFile(aliasFile, docs["/aliases.yaml"], 0o644); err != nil {
		t.Fatal(err)
	}
	bombs := []struct {
		name, source string
		refused      bool // a config error; else the operations are skipped
	}{
		{"anchors from a URL", server.URL + "/aliases.yaml", true},
		{"anchors from a file", aliasFile, true},
		{"schemas from a URL", server.URL + "/schemas.json", false},
	}

	// On reload: each bomb, then the good document again.
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := startCaddyLimited(t, "documents", documentSites(port, server.URL, server.URL+"/good.json"), hostileLimit, addr)
	tools := func() string {
		s, err := newMCPSession("http://"+addr+"/mcp", eraModern)
		if err != nil {
			t.Fatal(err)
		}
		defer s.conn.close()
		a, err := s.conn.do(s.toolsList(), time.Now().Add(30*time.Second))
		if err != nil || a.status != 200 {
			t.Fatalf("tools/list: %v %.300s\n%s", err, a.body, tail(p.logPath, 20))
		}
		return string(a.body)
	}
	if list := tools(); !strings.Contains(list, `"list_items"`) {
		t.Fatalf("the good document's tool is not listed: %.300s", list)
	}
	for _, b := range bombs {
		_, _, err := p.reload(dir, documentSites(port, server.URL, b.source), time.Minute)
		select {
		case <-p.done:
			t.Fatalf("%s: Caddy died on reload (%v):\n%s", b.name, p.waitErr, tail(p.logPath, 20))
		default:
		}
		list := tools()
		if b.refused {
			if err == nil || !strings.Contains(err.Error(), "alias bomb") {
				t.Errorf("%s: reload: %v, want the alias bomb refused", b.name, err)
			}
			if !strings.Contains(list, `"list_items"`) {
				t.Errorf("%s: the config that ran is not kept: %.300s", b.name, list)
			}
		} else {
			if err != nil {
				t.Errorf("%s: reload: %v", b.name, err)
			}
			if !strings.Contains(list, `"ping"`) || strings.Contains(list, `"bomb0"`) {
				t.Errorf("%s: want ping listed and the bomb's operations skipped: %.300s", b.name, list)
			}
		}
		t.Logf("%s: reload %v", b.name, err)
	}

	// On start.
	for _, b := range bombs {
		if !b.refused {
			port := freePort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			start := startCaddyLimited(t, "start", documentSites(port, server.URL, b.source), hostileLimit, addr)
			s, err := newMCPSession("http://"+addr+"/mcp", eraModern)
			if err != nil {
				t.Fatal(err)
			}
			a, err := s.conn.do(s.toolsList(), time.Now().Add(30*time.Second))
			s.conn.close()
			if err != nil || !bytes.Contains(a.body, []byte(`"ping"`)) || bytes.Contains(a.body, []byte(`"bomb0"`)) {
				t.Errorf("%s: on start: %v: %.300s", b.name, err, a.body)
			}
			start.stop(t)
			continue
		}
		out, err := runUntilExit(t, documentSites(freePort(t), server.URL, b.source), time.Minute)
		if strings.Contains(out, "out of memory") || strings.Contains(out, "fatal error") {
			t.Fatalf("%s: Caddy died on start:\n%s", b.name, lastLines(out, 20))
		}
		if err == nil || !strings.Contains(out, "alias bomb") {
			t.Errorf("%s: on start: %v, want the alias bomb refused:\n%s", b.name, err, lastLines(out, 10))
		}
	}
}

// runUntilExit runs Caddy on sites under hostileLimit and returns what
// it wrote and its error once it exits (a config error); nil if it still
// runs after wait, a hang guard, when it is stopped.
func runUntilExit(t *testing.T, sites string, wait time.Duration) (string, error) {
	t.Helper()
	bin := caddyBinary(t)
	dir := t.TempDir()
	config, err := writeCaddyfile(dir, "start", fmt.Sprintf("127.0.0.1:%d", freePort(t)), sites)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, hostileLimit>>10),
		bin, "run", "--config", config, "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ctx.Err() != nil {
		return out.String(), nil // it ran until stopped
	}
	if err == nil {
		err = fmt.Errorf("exited with no error")
	}
	return out.String(), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
