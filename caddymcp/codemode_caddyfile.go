package caddymcp

import (
	"net/http"
	"path"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

func init() {
	registerEndpointDirective("codemode", parseCodeMode)
	httpcaddyfile.RegisterDirectiveOrder("codemode", httpcaddyfile.Before, "respond")
}

func parseCodeMode(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	cm := new(CodeMode)
	err := cm.UnmarshalCaddyfile(h.Dispenser)
	return cm, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	codemode [<matcher>] {
//		name          <server-name>
//		instructions  <text>
//		tool_name     <name>
//		backend <name> <url> {
//			header    <field> <value>
//			transport streamable_http|sse
//			tools     <glob...>
//			timeout   <duration>
//			max_tools         <n>
//			max_tools_size    <size>
//			max_response_size <size>
//			max_stream_size   <size>
//			scopes            <scope...>
//			tool_scopes       <glob> <scope...>   (repeatable)
//		}
//		timeout         <duration>
//		max_tool_calls  <n>
//		max_output      <size>
//		max_code_size   <size>
//		max_concurrent  <n>
//		isolation       process
//		max_memory      <size>
//		workers         <n>
//		discovery       all|search|auto
//		max_description  <size>
//		max_declarations <size>
//		max_request_size <size>
//		list_ttl         <duration>
//		allow_origins   <origin...>
//		allow_hosts     <host...>
//		authorization   { ... }   (see parseAuthorization)
//	}
func (cm *CodeMode) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := make(map[string]bool)
	for d.NextBlock(0) {
		key := d.Val()
		if key != "backend" {
			if seen[key] {
				return d.Errf("%s is set twice", key)
			}
			seen[key] = true
		}
		var err error
		switch key {
		case "name":
			err = oneArg(d, &cm.Name)
		case "instructions":
			err = oneArg(d, &cm.Instructions)
		case "tool_name":
			err = oneArg(d, &cm.ToolName)
		case "backend":
			var b *CodeModeBackend
			if b, err = parseBackend(d); err == nil {
				cm.Backends = append(cm.Backends, b)
			}
		case "timeout":
			err = durationArg(d, &cm.Timeout)
		case "max_tool_calls":
			err = countArg(d, &cm.MaxToolCalls)
		case "max_output":
			err = sizeArg(d, &cm.MaxOutput)
		case "max_code_size":
			err = sizeArg(d, &cm.MaxCodeSize)
		case "max_concurrent":
			err = countArg(d, &cm.MaxConcurrent)
		case "max_memory":
			err = sizeArg(d, &cm.MaxMemory)
		case "isolation":
			err = oneArg(d, &cm.Isolation)
			if err == nil {
				if why := checkIsolation(cm.Isolation); why != nil {
					err = d.Err(why.Error())
				}
			}
		case "workers":
			err = countArg(d, &cm.Workers)
		case "discovery":
			err = oneArg(d, &cm.Discovery)
			switch {
			case err != nil:
			case cm.Discovery != codemode.DiscoveryAll && cm.Discovery != codemode.DiscoverySearch && cm.Discovery != codemode.DiscoveryAuto:
				err = d.Errf("discovery %q: want all, search or auto", cm.Discovery)
			}
		case "max_description":
			err = sizeArg(d, &cm.MaxDescription)
		case "max_declarations":
			err = sizeArg(d, &cm.MaxDeclarations)
		default:
			var handled bool
			handled, err = cm.Endpoint.unmarshalSubdirective(d)
			if !handled {
				return d.Errf("unknown subdirective %q", key)
			}
		}
		if err != nil {
			return err
		}
	}
	if cm.ToolName == searchToolName && cm.Discovery != codemode.DiscoveryAll {
		return d.Errf("tool_name %q is the name of the search tool: choose another, or discovery all", cm.ToolName)
	}
	for _, b := range cm.Backends {
		if cm.Authorization == nil && (len(b.Scopes) > 0 || len(b.ToolScopes) > 0) {
			return d.Errf("backend %s: %v", b.Name, errScopesWithoutAuthorization)
		}
	}
	return nil
}

func parseBackend(d *caddyfile.Dispenser) (*CodeModeBackend, error) {
	b := &CodeModeBackend{}
	args := d.RemainingArgs()
	if len(args) != 2 {
		return nil, d.ArgErr()
	}
	b.Name, b.URL = args[0], args[1]
	if _, err := httpURL(b.URL); err != nil {
		return nil, d.Errf("backend %s: url %q: %v", b.Name, b.URL, err)
	}
	seen := make(map[string]bool)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if key != "header" && key != "tool_scopes" {
			if seen[key] {
				return nil, d.Errf("backend %s: %s is set twice", b.Name, key)
			}
			seen[key] = true
		}
		var err error
		switch key {
		case "header":
			if b.Headers == nil {
				b.Headers = make(http.Header)
			}
			err = headerLine(d, b.Headers)
		case "transport":
			if err = oneArg(d, &b.Transport); err == nil && b.Transport != "streamable_http" && b.Transport != "sse" {
				return nil, d.Errf("backend %s: transport %q: want streamable_http or sse", b.Name, b.Transport)
			}
		case "tools":
			if b.Tools = d.RemainingArgs(); len(b.Tools) == 0 {
				return nil, d.ArgErr()
			}
		case "timeout":
			err = durationArg(d, &b.Timeout)
		case "max_tools":
			err = countArg(d, &b.MaxTools)
		case "max_tools_size":
			err = sizeArg(d, &b.MaxToolsSize)
		case "max_response_size":
			err = sizeArg(d, &b.MaxResponseSize)
		case "max_stream_size":
			err = sizeArg(d, &b.MaxStreamSize)
		case "scopes":
			if b.Scopes = d.RemainingArgs(); len(b.Scopes) == 0 {
				return nil, d.ArgErr()
			}
			if err = checkScopes(b.Scopes); err != nil {
				err = d.Errf("backend %s: scopes: %v", b.Name, err)
			}
		case "tool_scopes":
			args := d.RemainingArgs()
			if len(args) < 2 {
				return nil, d.ArgErr()
			}
			ts := BackendToolScopes{Tool: args[0], Scopes: args[1:]}
			if _, err = path.Match(ts.Tool, ""); err != nil {
				err = d.Errf("backend %s: tool_scopes %q: not a glob of tool names", b.Name, ts.Tool)
			} else if err = checkScopes(ts.Scopes); err != nil {
				err = d.Errf("backend %s: tool_scopes %s: %v", b.Name, ts.Tool, err)
			}
			b.ToolScopes = append(b.ToolScopes, ts)
		default:
			return nil, d.Errf("backend %s: unknown subdirective %q", b.Name, key)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Interface guards
var _ caddyfile.Unmarshaler = (*CodeMode)(nil)
