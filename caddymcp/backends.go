package caddymcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// backendPool keeps backend clients and their tool lists across config
// reloads: a reload that keeps a backend's settings keeps its connection.
var backendPool = caddy.NewUsagePool()

// pooledBackend lets the pool close a client nobody uses any more.
type pooledBackend struct{ *upstream.Backend }

func (p pooledBackend) Destruct() error { return p.Close() }

// backendRef is one codemode handler's use of a pooled backend.
type backendRef struct {
	name    string
	key     string
	backend *upstream.Backend
}

func (r *backendRef) release() { _, _ = backendPool.Delete(r.key) }

// loadBackend takes the backend for cfg from the pool, starting one if
// none has these settings. The key is a hash: it holds no header value.
func loadBackend(cfg *CodeModeBackend, logger *zap.Logger) (*backendRef, error) {
	keyJSON, err := json.Marshal(cfg)
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
		return pooledBackend{upstream.NewBackend(upstream.BackendConfig{
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
		})}, nil
	})
	if err != nil {
		return nil, err
	}
	return &backendRef{name: cfg.Name, key: key, backend: val.(pooledBackend).Backend}, nil
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
	out := make([]codemode.Binding, 0, len(cm.backends))
	for _, ref := range cm.backends {
		ref := ref
		tools, err := ref.backend.Tools(ctx, wait)
		b := codemode.Binding{Name: ref.name, Tools: make(map[string]string, len(tools))}
		if err != nil {
			b.Unavailable = err.Error()
		} else {
			names := make([]string, len(tools))
			for i, t := range tools {
				names[i] = t.Name
			}
			idents, _ := codemode.AssignNames(names)
			for i, id := range idents {
				b.Tools[id] = names[i]
			}
		}
		b.Call = func(ctx context.Context, tool string, args []byte) ([]byte, error) {
			start := time.Now()
			out, err := ref.backend.Call(ctx, tool, args)
			outcome := outcomeOK
			var be *upstream.BackendError
			switch {
			case errors.As(err, &be):
				outcome = outcomeStatus
				err = &codemode.ToolError{Message: be.Message}
			case err != nil:
				outcome = outcomeUnreachable
			}
			cm.metrics.toolCalls.WithLabelValues("codemode", cm.Name, ref.name+"."+tool, outcome).Inc()
			cm.metrics.toolDuration.WithLabelValues("codemode", cm.Name, ref.name+"."+tool).Observe(time.Since(start).Seconds())
			if c := cm.logger.Check(zap.DebugLevel, "backend call"); c != nil {
				c.Write(zap.String("backend", ref.name), zap.String("tool", tool),
					zap.Duration("duration", time.Since(start)), zap.String("outcome", outcome), zap.Error(err))
			}
			return out, err
		}
		out = append(out, b)
	}
	return out
}

// description writes the tool's description: what the sandbox is, and
// the API as TypeScript declarations. It is rebuilt when a backend's tool
// list changes.
type description struct {
	cm *CodeMode

	mu       sync.Mutex
	versions []uint64
	text     string
	built    bool
}

// filter is mcp-go's tool filter, used to set the description on each
// tools/list.
func (d *description) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	text := d.current(ctx)
	out := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		if t.Name == d.cm.ToolName {
			t.Description = text
		}
		out[i] = t
	}
	return out
}

func (d *description) current(ctx context.Context) string {
	wait := d.cm.provisioned.Add(coldStartWait)
	decls := make([]codemode.BackendDecl, len(d.cm.backends))
	versions := make([]uint64, len(d.cm.backends))
	for i, ref := range d.cm.backends {
		tools, err := ref.backend.Tools(ctx, wait)
		versions[i] = ref.backend.Version()
		decls[i] = codemode.BackendDecl{Name: ref.name}
		if err != nil {
			decls[i].Description = "unavailable right now (" + err.Error() + "); calls to it fail until it is back"
			versions[i] = ^uint64(0) // rebuild once it is back
			continue
		}
		names := make([]string, len(tools))
		for j, t := range tools {
			names[j] = t.Name
		}
		idents, collisions := codemode.AssignNames(names)
		for _, c := range collisions {
			d.cm.logger.Info("backend tool names collide in the sandbox; renamed",
				zap.String("backend", ref.name), zap.String("tool", c.Tool), zap.String("renamed", c.Assigned))
		}
		for j, t := range tools {
			decls[i].Tools = append(decls[i].Tools, codemode.ToolDecl{
				Name: t.Name, Ident: idents[j], Description: t.Description,
				InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
			})
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.built && equalVersions(versions, d.versions) && !contains(versions, ^uint64(0)) {
		return d.text
	}
	d.text = d.cm.sandboxRules() + "\n\n```ts\n" + codemode.Declarations(decls) + "```"
	d.versions, d.built = versions, true
	return d.text
}

func equalVersions(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// sandboxRules is the part of the description that explains the sandbox.
func (cm *CodeMode) sandboxRules() string {
	l := cm.runner.Limits()
	names := make([]string, len(cm.backends))
	for i, b := range cm.backends {
		names[i] = b.name
	}
	example := "api"
	if len(names) > 0 {
		example = names[0]
	}
	return fmt.Sprintf(`Run JavaScript or TypeScript in a sandbox that can call the tools declared below. Write the body of an async function: use await, and return the result (it comes back as JSON).

- Each backend is a global object (%s); each of its tools is an async function taking one object: const r = await %s.<tool>({...}).
- A call resolves to the tool's structured result, or its text parsed as JSON when it is JSON, or its text. A failed call throws an Error with the backend's message.
- Start independent calls together with Promise.all. Filter, join and compute in the code, and return only what is needed.
- console.log output is returned too. The result and output together are cut at %d bytes.
- Limits: %s per run, %d tool calls per run. There is no network, no fetch, no modules (import, require), no file system; setTimeout works within the run.`,
		strings.Join(names, ", "), example, l.MaxOutput, l.Timeout, l.MaxToolCalls)
}
