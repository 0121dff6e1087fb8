package caddymcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddytls"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/mcpbackend"
)

// Only a URL that can name no other machine, over plain HTTP, may be
// served in process.
func TestLocalTargetOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		url  string
		ok   bool
		ip   string
		port int
	}{
		{"http://127.0.0.1:8080/mcp", true, "127.0.0.1", 8080},
		{"http://localhost/mcp", true, "127.0.0.1", 80},
		{"http://LOCALHOST:81/mcp", true, "127.0.0.1", 81},
		{"http://[::1]:8080/mcp", true, "::1", 8080},
		{"http://127.0.0.2:8080/mcp", true, "127.0.0.2", 8080},
		{"https://127.0.0.1:8443/mcp", false, "", 0},             // the request would carry TLS
		{"http://api.example.com:8080/mcp", false, "", 0},        // may resolve anywhere
		{"http://192.0.2.1:8080/mcp", false, "", 0},              // no interface of this machine
		{"http://u:p@127.0.0.1:8080/mcp", false, "", 0},          // credentials in the URL
		{"http://127.0.0.1:0/mcp", false, "", 0},                 // no such port
		{"http://127.0.0.1:70000/mcp", false, "", 0},             // no such port
		{"unix:///run/caddy.sock", false, "", 0},                 // not http
		{"http://localhost.example.test:8080/mcp", false, "", 0}, // a name, not localhost
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := localTargetOf(u)
		if ok != tt.ok || ok && (got.ip.String() != tt.ip || got.port != tt.port) {
			t.Errorf("%s: %v %v, want %v %s:%d", tt.url, got, ok, tt.ok, tt.ip, tt.port)
		}
	}
}

// A listener serves the target when a connection to it would reach it.
func TestLocalTargetListensOn(t *testing.T) {
	t.Parallel()
	v4 := localTarget{ip: []byte{127, 0, 0, 1}, port: 8080}
	for _, tt := range []struct {
		listen string
		want   bool
	}{
		{":8080", true},
		{"127.0.0.1:8080", true},
		{"0.0.0.0:8080", true},
		{"[::]:8080", true},
		{"localhost:8080", true},
		{"tcp4/:8080", true},
		{"tcp/127.0.0.1:8000-8090", true},
		{"tcp6/:8080", false},
		{"127.0.0.2:8080", false},
		{":8081", false},
		{"udp/:8080", false},
		{"unix//run/caddy.sock", false},
		{"example.com:8080", false},
	} {
		addr, err := caddy.ParseNetworkAddress(tt.listen)
		if err != nil {
			t.Fatalf("%s: %v", tt.listen, err)
		}
		if got := v4.listensOn(addr); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.listen, got, tt.want)
		}
	}
	// Bound to localhost, a listener has 127.0.0.1 and ::1 only.
	addr, _ := caddy.ParseNetworkAddress("localhost:8080")
	for ip, want := range map[string]bool{"127.0.0.5": false, "::1": true} {
		if got := (localTarget{ip: net.ParseIP(ip), port: 8080}).listensOn(addr); got != want {
			t.Errorf("%s on localhost:8080: %v, want %v", ip, got, want)
		}
	}
}

// A server with TLS on its listeners, or without HTTP/1.1, would not
// answer a plain http request as it is: it is not chosen.
func TestLocalFindServer(t *testing.T) {
	target := localTarget{ip: []byte{127, 0, 0, 1}, port: 8080}
	plain := &caddyhttp.Server{Listen: []string{":9000", ":8080"}}
	app := &caddyhttp.App{Servers: map[string]*caddyhttp.Server{"a": {Listen: []string{":9000"}}, "b": plain}}
	if name, srv, local := target.findServer(app); name != "b" || srv != plain || local.String() != "127.0.0.1:8080" {
		t.Fatalf("found %q %p %v", name, srv, local)
	}
	for _, srv := range []*caddyhttp.Server{
		{Listen: []string{":8080"}, TLSConnPolicies: caddytls.ConnectionPolicies{{}}},
		{Listen: []string{":8080"}, Protocols: []string{"h2c"}},
	} {
		app := &caddyhttp.App{Servers: map[string]*caddyhttp.Server{"s": srv}}
		if _, found, _ := target.findServer(app); found != nil {
			t.Errorf("chose %+v", srv)
		}
	}
}

// backendPair is one backend URL reached twice: over the network, and
// through localTransport, which counts its requests in requests. Both
// connect as the pair is made; warmed is closed once both have their
// tools, or have given up on them for 5 s (a backend that refuses them).
type backendPair struct {
	network, local *mcpbackend.Backend
	requests       *prometheus.CounterVec
	warmed         chan struct{}
}

func newBackendPair(t testing.TB, rawURL string, header map[string]string) *backendPair {
	t.Helper()
	p := &backendPair{requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "r"}, []string{"backend", "via"})}
	cfg := mcpbackend.Config{Name: "b", URL: rawURL, Timeout: 5 * time.Second}
	if header != nil {
		cfg.Header = func(context.Context) map[string]string { return header }
	}
	p.network = mcpbackend.New(cfg)
	cfg.WrapTransport = func(network http.RoundTripper) http.RoundTripper {
		lt := newLocalTransport("b", rawURL, network)
		if lt == nil {
			t.Fatalf("%s is not a local URL", rawURL)
		}
		lt.requests.Store(p.requests)
		return lt
	}
	p.local = mcpbackend.New(cfg)
	p.warmed = make(chan struct{})
	go func() {
		defer close(p.warmed)
		wait := time.Now().Add(5 * time.Second)
		_, _ = p.network.Tools(context.Background(), wait)
		_, _ = p.local.Tools(context.Background(), wait)
	}()
	t.Cleanup(func() { <-p.warmed; p.network.Close(); p.local.Close() })
	return p
}

// call calls tool both ways and fails unless both give the same.
func (p *backendPair) call(t *testing.T, tool, args string) (string, error) {
	t.Helper()
	<-p.warmed
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	viaNet, errNet := p.network.Call(ctx, tool, []byte(args))
	viaLocal, errLocal := p.local.Call(ctx, tool, []byte(args))
	if string(viaNet.Value) != string(viaLocal.Value) || string(viaNet.Cut) != string(viaLocal.Cut) || fmt.Sprint(errNet) != fmt.Sprint(errLocal) {
		t.Errorf("%s(%s):\nover HTTP   %s %s %v\nin process  %s %s %v", tool, args, viaNet.Value, viaNet.Cut, errNet, viaLocal.Value, viaLocal.Cut, errLocal)
	}
	return string(viaLocal.Value), errLocal
}

func (p *backendPair) count(via string) float64 {
	var m dto.Metric
	if err := p.requests.WithLabelValues("b", via).Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// In process, an mcp endpoint of this Caddy answers as it does over the
// network: results, validation errors, an upstream that is down, a token
// refused, a path nothing serves.
func TestLiveLocalBackendAnswersAsOverHTTP(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	as := authtest.New(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /rest {
		upstream %[1]s
		tool echo {
			description "Echo the arguments."
			post /anything
			arg word string required
		}
		tool status {
			description "Answer a status code."
			get /status/{code}
			arg code integer required
		}
	}
	mcp /down {
		upstream http://%[2]s
		tool get {
			description "Get."
			get /item
		}
	}
	mcp /private {
		upstream %[1]s
		authorization {
			issuer %[3]s
			require_scopes orders:read
		}
		tool echo {
			description "Echo."
			get /get
		}
	}
}`, bin, mcptest.ClosedAddr(t), as.Issuer))
	base := "http://127.0.0.1:" + livePort

	// Every pair connects at once: those refused their tools wait
	// out their 5 s together.
	rest := newBackendPair(t, base+"/rest", nil)
	down := newBackendPair(t, base+"/down", nil)
	noScope := newBackendPair(t, base+"/private", map[string]string{"Authorization": "Bearer " + as.Token(t, base+"/private", "", nil)})
	scoped := newBackendPair(t, base+"/private", map[string]string{"Authorization": "Bearer " + as.Token(t, base+"/private", "orders:read", nil)})
	nothing := newBackendPair(t, base+"/nothing", nil)

	if out, err := rest.call(t, "echo", `{"word":"caddy"}`); err != nil || !strings.Contains(out, `"caddy"`) {
		t.Errorf("echo: %s %v", out, err)
	}
	if _, err := rest.call(t, "status", `{"code":503}`); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("status 503: %v", err)
	}
	if _, err := rest.call(t, "status", `{"code":"x"}`); err == nil || !strings.Contains(err.Error(), "invalid arguments") {
		t.Errorf("invalid arguments: %v", err)
	}
	if _, err := rest.call(t, "nope", `{}`); err == nil {
		t.Error("an unknown tool answered")
	}

	if _, err := down.call(t, "get", `{}`); err == nil {
		t.Error("a tool whose upstream is down answered")
	}

	if _, err := noScope.call(t, "echo", `{}`); err == nil {
		t.Error("a token without the endpoint's scope was taken")
	}
	if out, err := scoped.call(t, "echo", `{}`); err != nil || !strings.Contains(out, "headers") {
		t.Errorf("with the scope: %s %v", out, err)
	}

	if _, err := nothing.call(t, "echo", `{}`); err == nil {
		t.Error("a path nothing serves answered")
	}

	for name, p := range map[string]*backendPair{"rest": rest, "down": down, "noScope": noScope, "scoped": scoped, "nothing": nothing} {
		if p.count(viaInProcess) == 0 || p.count(viaHTTP) != 0 {
			t.Errorf("%s: %v requests in process, %v over HTTP", name, p.count(viaInProcess), p.count(viaHTTP))
		}
	}
}

// Code mode reaches a backend of this Caddy in process, says so in its
// log and metrics, and a backend elsewhere over HTTP; the server's own
// access log sees the requests come from no connection (port 0).
func TestLiveCodeModeLocalBackend(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	otherAddr := "127.0.0.1:" + freePort()
	listenOn(t, otherAddr, false)
	dir := t.TempDir()
	debugLog, accessLog := filepath.Join(dir, "debug.log"), filepath.Join(dir, "access.log")
	sites := func(tools string) string {
		return fmt.Sprintf(`http://:{$LIVE_PORT} {
	log {
		output file %s
	}
	mcp /rest {
		upstream %s
		tool echo {
			description "Echo the arguments."
			post /anything
			arg word string required
		}%s
	}
	codemode /code {
		backend rest http://127.0.0.1:{$LIVE_PORT}/rest
		backend other http://%s/mcp
	}
}`, accessLog, bin, tools, otherAddr)
	}
	global := fmt.Sprintf("log {\n\t\toutput file %s\n\t\tlevel DEBUG\n\t}\n\tmetrics", debugLog)
	loadCaddyfile(t, global, sites(""))

	c := connect(t, "/code", eras[0], nil)
	res := execute(t, c, `const a = await rest.echo({word: "near"});
const b = await other.ping_back({word: "far"});
return [a.json.word, b]`)
	if text := wantOK(t, res); text != `["near","pong far"]` {
		t.Fatalf("text %q", text)
	}

	reached := map[string]string{}
	for _, e := range readLogs(t, debugLog) {
		if msg, _ := e["msg"].(string); strings.HasPrefix(msg, "backend reached") {
			reached[e["backend"].(string)] = msg
		}
	}
	if reached["rest"] != "backend reached in process" || reached["other"] != "backend reached over HTTP" {
		t.Errorf("provision lines %v", reached)
	}
	_, body := do(t, mustRequest(t, http.MethodGet, "http://"+adminAddr+"/metrics"))
	for _, want := range []string{`caddy_mcp_backend_requests_total{backend="rest",via="in_process"}`, `caddy_mcp_backend_requests_total{backend="other",via="http"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, unwanted := range []string{`backend="rest",via="http"`, `backend="other",via="in_process"`} {
		if strings.Contains(string(body), unwanted) {
			t.Errorf("metrics have %s", unwanted)
		}
	}
	restLines := 0
	for _, e := range readLogs(t, accessLog) {
		req, _ := e["request"].(map[string]any)
		if req["uri"] != "/rest" {
			continue
		}
		restLines++
		if req["remote_port"] != "0" {
			t.Errorf("a request to /rest came over a connection: %v", req)
		}
	}
	if restLines == 0 {
		t.Error("the access log has no request to /rest")
	}

	// A reload: the pooled backend is kept, and its requests go to the
	// new config's server (the tool only it has), still in process.
	loadCaddyfile(t, global, sites(`
		tool status {
			description "Answer a status code."
			get /status/{code}
			arg code integer required
		}`))
	c = connect(t, "/code", eras[1], nil)
	res = execute(t, c, `const s = await rest.status({code: 200}); return [typeof s, (await rest.echo({word: "again"})).json.word]`)
	if text := wantOK(t, res); !strings.Contains(text, `"again"`) {
		t.Fatalf("after the reload: %q", text)
	}
	_, body = do(t, mustRequest(t, http.MethodGet, "http://"+adminAddr+"/metrics"))
	if !strings.Contains(string(body), `caddy_mcp_backend_requests_total{backend="rest",via="in_process"}`) || strings.Contains(string(body), `backend="rest",via="http"`) {
		t.Errorf("after the reload, metrics:\n%s", grepLines(string(body), "backend_requests"))
	}
}

func grepLines(text, word string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, word) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// BenchmarkLocalBackendCall is one binding call to an mcp endpoint of
// this Caddy, over loopback HTTP and in process; the difference is what
// the network costs. The endpoint's REST upstream answers at once.
func BenchmarkLocalBackendCall(b *testing.B) {
	api := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"a1","total":12}`))
	})}
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go api.Serve(apiLn)
	defer api.Close()
	loadCaddyfile(b, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /fast {
		upstream http://%s
		tool get {
			description "Get an order."
			get /orders/{id}
			arg id string required
		}
	}
}`, apiLn.Addr()))
	p := newBackendPair(b, "http://127.0.0.1:"+livePort+"/fast", nil)
	ctx := context.Background()
	wait := time.Now().Add(5 * time.Second)
	args := []byte(`{"id":"a1"}`)
	for _, way := range []struct {
		name    string
		backend *mcpbackend.Backend
	}{{"http", p.network}, {"in_process", p.local}} {
		if _, err := way.backend.Tools(ctx, wait); err != nil {
			b.Fatal(err)
		}
		b.Run(way.name, func(b *testing.B) {
			b.ReportAllocs()
			// The process's CPU time, both ends of the call: on a shared
			// machine it moves less than the wall time does.
			cpu := processCPU(b)
			for i := 0; i < b.N; i++ {
				if _, err := way.backend.Call(ctx, "get", args); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
