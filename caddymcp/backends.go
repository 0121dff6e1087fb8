package caddymcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/mcpbackend"
)

// backendPool keeps backend clients and their tool lists across config
// reloads: a reload that keeps a backend's settings keeps its connection.
var backendPool = caddy.NewUsagePool()

// pooledBackend lets the pool close a client nobody uses any more.
type pooledBackend struct {
	*mcpbackend.Backend
	local *localTransport // nil when no server of this Caddy could serve its URL
}

func (p pooledBackend) Destruct() error { return p.Close() }

// backendRef is one codemode handler's use of a pooled backend.
type backendRef struct {
	name    string
	key     string
	backend *mcpbackend.Backend
	local   *localTransport
	scopes  *backendScopes // nil when its tools need none
}

func (r *backendRef) release() { _, _ = backendPool.Delete(r.key) }

// loadBackend takes the backend for cfg from the pool, starting one if
// none has these settings, and makes logger the backend's. The key is a
// hash: it holds no header value.
func loadBackend(cfg *CodeModeBackend, logger *zap.Logger) (*backendRef, error) {
	// Scopes are the handler's business, not the connection's.
	keyCfg := *cfg
	keyCfg.Scopes, keyCfg.ToolScopes = nil, nil
	keyJSON, err := json.Marshal(keyCfg)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(keyJSON)
	key := "codemode-backend/" + hex.EncodeToString(sum[:])
	headers := make(map[string]string, len(cfg.Headers))
	for k, v := range cfg.Headers {
		headers[http.CanonicalHeaderKey(k)] = strings.Join(v, ", ")
	}
	val, _, err := backendPool.LoadOrNew(key, func() (caddy.Destructor, error) {
		var local *localTransport
		wrap := func(network http.RoundTripper) http.RoundTripper {
			if local = newLocalTransport(cfg.Name, cfg.URL, network); local == nil {
				return network
			}
			return local
		}
		backend := mcpbackend.New(mcpbackend.Config{
			Name:      cfg.Name,
			URL:       cfg.URL,
			Transport: cfg.Transport,
			Header:    resolveHeaders(headers),
			Tools:     cfg.Tools,
			Timeout:   time.Duration(cfg.Timeout),
			Logger:    logger,

			MaxTools:        cfg.MaxTools,
			MaxToolsSize:    cfg.MaxToolsSize,
			MaxResponseSize: cfg.MaxResponseSize,
			MaxStreamSize:   cfg.MaxStreamSize,

			WrapTransport: wrap,
		})
		return pooledBackend{Backend: backend, local: local}, nil
	})
	if err != nil {
		return nil, err
	}
	// The pool outlives the config that started the backend: its lines go
	// to the config loading it now.
	pooled := val.(pooledBackend)
	pooled.SetLogger(logger)
	return &backendRef{name: cfg.Name, key: key, backend: pooled.Backend, local: pooled.local}, nil
}

// resolveHeaders returns the header function of a backend: placeholders
// are resolved per request, from the MCP request's replacer when the
// request comes from one, else from the global placeholders ({env.X}).
func resolveHeaders(headers map[string]string) func(context.Context) map[string]string {
	if len(headers) == 0 {
		return nil
	}
	global := caddy.NewReplacer()
	return func(ctx context.Context) map[string]string {
		repl, ok := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		if !ok {
			repl = global
		}
		out := make(map[string]string, len(headers))
		for k, v := range headers {
			if v = repl.ReplaceAll(v, ""); v != "" {
				out[k] = v
			}
		}
		return out
	}
}

// bindings gives the code one global per connected backend.
func (cm *CodeMode) bindings(ctx context.Context) []codemode.Binding {
	wait := cm.provisioned.Add(coldStartWait)
	caller := callerOf(ctx)
	out := make([]codemode.Binding, 0, len(cm.backends))
	for i, ref := range cm.backends {
		view, err := cm.describe.view(ctx, i, wait)
		var api *codemode.BackendAPI
		if err != nil {
			api = unavailableAPI(ref.name, err.Error())
		} else {
			api = view.apiFor(caller)
		}
		out = append(out, api.Binding(func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
			return cm.callBackend(ctx, ref, view, caller, tool, args)
		}))
	}
	return out
}

// callBackend is one binding call of the code: the caller's scopes are
// checked again (the sandbox offers only the tools the caller may call,
// except while the backend's list is unknown: then any name reaches
// here), then the backend is called, in its span, and the call counted
// and logged. view is nil while the backend's list is unknown.
func (cm *CodeMode) callBackend(ctx context.Context, ref *backendRef, view *backendView, caller *authorized, tool string, args []byte) (codemode.Answer, error) {
	start := time.Now()
	var ans mcpbackend.Answer
	outcome := outcomeInsufficientScope
	err := ref.scopes.refuse(ref.name, tool, caller)
	if err == nil {
		callCtx, span := startBindingSpan(ctx, ref.name, tool)
		ans, err = ref.backend.Call(callCtx, tool, args)
		outcome = backendOutcome(err)
		endBindingSpan(span, outcome, err)
	}
	var be *mcpbackend.BackendError
	if errors.As(err, &be) {
		err = &codemode.ToolError{Message: be.Message}
	}
	cm.observeBackendCall(ref.name, view, tool, outcome, err, time.Since(start))
	return codemode.Answer(ans), err
}

// observeBackendCall counts and logs a binding call. A backend that is
// down takes any name the code makes up: only the names of its last tool
// list become labels.
func (cm *CodeMode) observeBackendCall(backend string, view *backendView, tool, outcome string, err error, d time.Duration) {
	label := toolLabelUnknown
	if view != nil && view.known[tool] {
		label = backend + "." + tool
	}
	cm.metrics.toolCalls.WithLabelValues("codemode", cm.Name, label, outcome).Inc()
	cm.metrics.toolDuration.WithLabelValues("codemode", cm.Name, label).Observe(d.Seconds())
	if c := cm.logger.Check(zap.DebugLevel, "backend call"); c != nil {
		fields := []zap.Field{zap.String("backend", backend)}
		fields = append(fields, loggedText("tool", tool)...)
		fields = append(fields, zap.Duration("duration", d), zap.String("outcome", outcome))
		if err != nil {
			fields = append(fields, loggedText("error", err.Error())...)
		}
		c.Write(fields...)
	}
}

// unavailableAPI is the API of a backend whose tools are not known now.
func unavailableAPI(name, reason string) *codemode.BackendAPI {
	return codemode.NewBackendAPI(codemode.APIBackend{Name: name, Unavailable: reason})
}

// backendView is what the sandbox and the declarations make of one
// backend's tool list. It is built once per version of the list (see
// description.view) and shared, read-only, by every execution and
// tools/list until the list changes: a backend may list thousands of
// tools.
type backendView struct {
	version uint64
	api     *codemode.BackendAPI
	known   map[string]bool // the backend's tool names

	// For callers whose scopes leave tools out (see apiFor).
	name         string
	tools        []codemode.APITool
	instructions string
	scopes       *backendScopes
	scoped       scopedViews
}

// maxLoggedCollisions bounds the renamed tools one log line lists.
const maxLoggedCollisions = 10

// newBackendView has codemode name the tools for the sandbox, and logs,
// once, the names that collided.
func (cm *CodeMode) newBackendView(ref *backendRef, version uint64, tools []mcpbackend.RemoteTool, instructions string) *backendView {
	name := ref.name
	v := &backendView{version: version, known: make(map[string]bool, len(tools)),
		name: name, instructions: instructions, scopes: ref.scopes}
	apiTools := make([]codemode.APITool, len(tools))
	for i, t := range tools {
		v.known[t.Name] = true
		apiTools[i] = codemode.APITool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
	}
	v.tools = apiTools
	v.api = codemode.NewBackendAPI(codemode.APIBackend{Name: name, Tools: apiTools, Instructions: instructions})
	if collisions := v.api.Collisions(); len(collisions) > 0 {
		var renamed []string
		for _, c := range collisions[:min(len(collisions), maxLoggedCollisions)] {
			renamed = append(renamed, cutLogged(c.Tool)+" -> "+cutLogged(c.Assigned))
		}
		cm.logger.Info("backend tool names collide in the sandbox; renamed",
			zap.String("backend", name), zap.Int("renamed", len(collisions)), zap.Strings("first", renamed))
	}
	return v
}

// description writes the tool's description: what the sandbox is, and
// the API as TypeScript declarations. It keeps each backend's view and
// the text built from them, and rebuilds only what a change touched.
type description struct {
	cm *CodeMode

	mu    sync.Mutex
	views []*backendView    // per backend, the last one built; nil until listed
	keys  []viewKey         // what the texts were built from
	texts map[string]served // per set of scopes held (see callerKey)
	index *codemode.Catalog // the search index of the lists keys names
	ixFor []viewKey         // what index was built from
}

// served is the execute tool's description for one set of scopes held,
// and whether it is in search mode (then tools/list offers search too).
type served struct {
	text   string
	search bool
}

// viewKey is what one backend contributes to the description: its list
// version, or why it is unavailable.
type viewKey struct {
	version uint64
	down    string
}

// view returns backend i's view of its current tool list, building it if
// the list changed. When the backend is unavailable it returns the error
// and the view of its last list, if there was one.
func (d *description) view(ctx context.Context, i int, wait time.Time) (*backendView, error) {
	ref := d.cm.backends[i]
	// The version is read first: the tools may only be newer than it,
	// and a newer list is built again next time.
	version := ref.backend.Version()
	tools, err := ref.backend.Tools(ctx, wait)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.views == nil {
		d.views = make([]*backendView, len(d.cm.backends))
	}
	last := d.views[i]
	if err != nil {
		return last, err
	}
	if last != nil && last.version == version {
		return last, nil
	}
	v := d.cm.newBackendView(ref, version, tools, ref.backend.Instructions())
	d.views[i] = v
	return v, nil
}

// filter is mcp-go's tool filter, used to set the description on each
// tools/list, and to offer the search tool only in search mode.
func (d *description) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	now := d.current(ctx)
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		switch t.Name {
		case d.cm.ToolName:
			t.Description = now.text
		case searchToolName:
			if !now.search {
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// lists returns each backend's view of its current tool list, nil for a
// backend that is unavailable, and the keys saying what they are.
func (d *description) lists(ctx context.Context) ([]*backendView, []viewKey) {
	wait := d.cm.provisioned.Add(coldStartWait)
	views := make([]*backendView, len(d.cm.backends))
	keys := make([]viewKey, len(d.cm.backends))
	for i := range d.cm.backends {
		v, err := d.view(ctx, i, wait)
		if err != nil {
			keys[i].down = err.Error()
			continue
		}
		views[i], keys[i].version = v, v.version
	}
	return views, keys
}

// apisFor is caller's API of each backend, of the lists views and keys
// name.
func (d *description) apisFor(caller *authorized, views []*backendView, keys []viewKey) []*codemode.BackendAPI {
	apis := make([]*codemode.BackendAPI, len(d.cm.backends))
	for i, ref := range d.cm.backends {
		if keys[i].down != "" {
			apis[i] = unavailableAPI(ref.name, keys[i].down)
			continue
		}
		apis[i] = views[i].apiFor(caller)
	}
	return apis
}

// current is the description caller's tools/list gets: in auto mode,
// whether it declares the tools or offers search is decided here, for
// the tools caller may call, each time a backend's list changes.
func (d *description) current(ctx context.Context) served {
	views, keys := d.lists(ctx)
	caller := callerOf(ctx)
	who := d.callerKey(caller)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Equal(keys, d.keys) || d.texts == nil {
		d.keys, d.texts = keys, make(map[string]served)
	}
	if now, ok := d.texts[who]; ok {
		return now
	}
	var now served
	now.text, now.search = codemode.NewAPI(d.apisFor(caller, views, keys)).Describe(d.cm.runner.Limits(), codemode.Discovery{
		Mode:            d.cm.Discovery,
		MaxDescription:  int(min(d.cm.MaxDescription, math.MaxInt32)),
		MaxDeclarations: int(min(d.cm.MaxDeclarations, math.MaxInt32)),
		SearchTool:      searchToolName,
	})
	if len(d.texts) < maxScopedViews {
		d.texts[who] = now
	}
	return now
}

// catalog is the search index of the backends' current tool lists, all
// their tools (each search keeps to its caller's), and caller's APIs.
// It is built again when a list changes.
func (d *description) catalog(ctx context.Context) (*codemode.Catalog, []*codemode.BackendAPI) {
	views, keys := d.lists(ctx)
	mine := d.apisFor(callerOf(ctx), views, keys)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.index == nil || !slices.Equal(keys, d.ixFor) {
		full := make([]*codemode.BackendAPI, len(views))
		for i, v := range views {
			if v == nil {
				full[i] = mine[i] // unavailable: no tools
				continue
			}
			full[i] = v.api
		}
		d.index, d.ixFor = codemode.NewCatalog(full), keys
	}
	return d.index, mine
}

// callerKey says which of the scopes the backends name caller holds:
// callers alike in that read the same description.
func (d *description) callerKey(caller *authorized) string {
	var b strings.Builder
	for _, ref := range d.cm.backends {
		if ref.scopes != nil {
			b.WriteString(ref.scopes.held(caller))
			b.WriteByte('/')
		}
	}
	return b.String()
}
