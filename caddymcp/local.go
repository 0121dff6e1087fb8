package caddymcp

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/internal/inprocess"
)

// How a backend request was sent: the values of the via label.
const (
	viaInProcess = "in_process"
	viaHTTP      = "http"
)

// localTransport sends a backend's requests to the server of this Caddy
// that listens on the backend URL's address, in process, when there is
// one: the request goes through that server's whole handler chain (its
// matchers, authorization, the mcp handler, its logs and metrics) as if
// it came over a loopback connection, without the sockets and the HTTP
// encoding both ways. Any other request goes over the network.
//
// It is shared by the configs that load the backend (see backendPool),
// so it looks for the server in the running config on each request: a
// server of a config that was replaced never serves one.
type localTransport struct {
	network http.RoundTripper
	host    string // the URL's host:port, as written; other hosts go over the network
	target  localTarget

	route    atomic.Pointer[localRoute]
	requests atomic.Pointer[prometheus.CounterVec] // of the newest config loading it
	name     string                                // the backend's, for the label
}

// localRoute is where the running config serves the backend's URL: srv
// is nil when it does not.
type localRoute struct {
	app   *caddyhttp.App
	ctx   caddy.Context // the config's; done once it is stopped
	srv   *caddyhttp.Server
	local net.Addr // what the connection would have come to
}

// localTarget is a backend URL that this Caddy could serve: http, and a
// host that can only be this machine.
type localTarget struct {
	ip   net.IP
	port int
}

// newLocalTransport returns the transport of a backend at rawURL, or nil
// when no server of this Caddy could serve that URL (https: the request
// would have to carry TLS; a host name: it may resolve to another
// machine).
func newLocalTransport(name, rawURL string, network http.RoundTripper) *localTransport {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	target, ok := localTargetOf(u)
	if !ok {
		return nil
	}
	return &localTransport{network: network, host: u.Host, target: target, name: name}
}

// localTargetOf says whether u may name a server of this Caddy.
func localTargetOf(u *url.URL) (localTarget, bool) {
	if u.Scheme != "http" || u.User != nil {
		return localTarget{}, false
	}
	port := 80
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return localTarget{}, false
		}
		port = n
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if strings.EqualFold(host, "localhost") {
		ip = net.IPv4(127, 0, 0, 1)
	}
	if ip == nil || !isOwnIP(ip) {
		return localTarget{}, false
	}
	return localTarget{ip: ip, port: port}, true
}

// isOwnIP reports whether ip is loopback or an address of one of this
// machine's interfaces.
func isOwnIP(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// findServer returns the name and the server of app that listens on t's
// address, and the address a connection to it would have come to; nil
// when none does, or the one that does would not answer an http request
// as it is (TLS on its listeners, no HTTP/1.1).
func (t localTarget) findServer(app *caddyhttp.App) (string, *caddyhttp.Server, net.Addr) {
	names := make([]string, 0, len(app.Servers))
	for name := range app.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	repl := caddy.NewReplacer()
	for _, name := range names {
		srv := app.Servers[name]
		for _, listen := range srv.Listen {
			addr, err := caddy.ParseNetworkAddress(repl.ReplaceKnown(listen, ""))
			if err != nil || !t.listensOn(addr) {
				continue
			}
			if len(srv.TLSConnPolicies) > 0 || (len(srv.Protocols) > 0 && !slices.Contains(srv.Protocols, "h1")) {
				return "", nil, nil
			}
			return name, srv, &net.TCPAddr{IP: t.ip, Port: t.port}
		}
	}
	return "", nil, nil
}

// listensOn reports whether a connection to t would reach a listener
// bound to addr.
func (t localTarget) listensOn(addr caddy.NetworkAddress) bool {
	switch addr.Network {
	case "tcp", "tcp4", "tcp6":
	default:
		return false
	}
	if uint(t.port) < addr.StartPort || uint(t.port) > addr.EndPort {
		return false
	}
	if addr.Network == "tcp4" && t.ip.To4() == nil || addr.Network == "tcp6" && t.ip.To4() != nil {
		return false
	}
	host := addr.Host
	if host == "" {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		// Bound to localhost, a listener takes 127.0.0.1 and ::1, not the
		// rest of the loopback range.
		return t.ip.Equal(net.IPv4(127, 0, 0, 1)) || t.ip.Equal(net.IPv6loopback)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	return ip.IsUnspecified() || ip.Equal(t.ip)
}

// current is where the running config serves the backend's URL.
func (lt *localTransport) current() *localRoute {
	ctx := caddy.ActiveContext()
	if ctx.Context == nil || ctx.Err() != nil {
		return nil
	}
	v, err := ctx.AppIfConfigured("http")
	if err != nil {
		return nil
	}
	app, ok := v.(*caddyhttp.App)
	if !ok {
		return nil
	}
	if r := lt.route.Load(); r != nil && r.app == app {
		return r
	}
	r := &localRoute{app: app, ctx: ctx}
	_, r.srv, r.local = lt.target.findServer(app)
	lt.route.Store(r)
	return r
}

// RoundTrip serves req in process when the running config has the server
// for it, and sends it over the network otherwise.
func (lt *localTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == lt.host {
		if r := lt.current(); r != nil && r.srv != nil && r.ctx.Err() == nil {
			lt.count(viaInProcess)
			return inprocess.Serve(r.srv, r.local, r.ctx, req, caddy.Log())
		}
	}
	lt.count(viaHTTP)
	return lt.network.RoundTrip(req)
}

func (lt *localTransport) count(via string) {
	if c := lt.requests.Load(); c != nil {
		c.WithLabelValues(lt.name, via).Inc()
	}
}

// CloseIdleConnections reaches the network transport, as http.Client does.
func (lt *localTransport) CloseIdleConnections() {
	if c, ok := lt.network.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// newBackendRequests is the counter of the requests codemode sends its
// backends, by backend name and how they went.
func newBackendRequests(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "mcp", Name: "backend_requests_total",
		Help: "HTTP requests sent to codemode backends, by backend name and how they went: in_process (served by a server of this Caddy without the network) or http.",
	}, []string{"backend", "via"}))
}

// logLocal says, for a backend being provisioned, which way it will be
// reached once the config being loaded runs: in process, by a server of
// app, or over HTTP.
func logLocal(logger *zap.Logger, name, rawURL string, app *caddyhttp.App) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	if target, ok := localTargetOf(u); ok && app != nil {
		if server, srv, _ := target.findServer(app); srv != nil {
			logger.Info("backend reached in process", zap.String("backend", name), zap.String("server", server))
			return
		}
	}
	logger.Info("backend reached over HTTP", zap.String("backend", name))
}

// httpAppOf is the http app that is provisioning the module of ctx, if any.
func httpAppOf(ctx caddy.Context) *caddyhttp.App {
	for _, m := range ctx.Modules() {
		if app, ok := m.(*caddyhttp.App); ok {
			return app
		}
	}
	return nil
}
