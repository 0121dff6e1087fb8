// The readers of subdirective arguments that the mcp and codemode
// parsers share.

package caddymcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// unmarshalSubdirective parses the endpoint settings shared by mcp and
// codemode; it reports false for any other subdirective.
func (e *Endpoint) unmarshalSubdirective(d *caddyfile.Dispenser) (bool, error) {
	switch d.Val() {
	case "max_request_size":
		return true, sizeArg(d, &e.MaxRequestSize)
	case "allow_origins":
		e.AllowOrigins = d.RemainingArgs()
		if len(e.AllowOrigins) == 0 {
			return true, d.ArgErr()
		}
	case "allow_hosts":
		e.AllowHosts = d.RemainingArgs()
		if len(e.AllowHosts) == 0 {
			return true, d.ArgErr()
		}
	case "list_ttl":
		return true, listTTLArg(d, &e.ListTTL)
	case "authorization":
		var err error
		e.Authorization, err = parseAuthorization(d)
		return true, err
	default:
		return false, nil
	}
	return true, nil
}

func oneArg(d *caddyfile.Dispenser, target *string) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	*target = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

func headerLine(d *caddyfile.Dispenser, h http.Header) error {
	args := d.RemainingArgs()
	if len(args) != 2 {
		return d.ArgErr()
	}
	h.Add(args[0], args[1])
	return nil
}

func durationArg(d *caddyfile.Dispenser, target *caddy.Duration) error {
	key := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil {
		return d.Errf("%s %q: %v", key, s, err)
	}
	if dur <= 0 {
		return d.Errf("%s must be positive, got %q", key, s)
	}
	*target = caddy.Duration(dur)
	return nil
}

// listTTLArg reads a list_ttl, which may be 0.
func listTTLArg(d *caddyfile.Dispenser, target **caddy.Duration) error {
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil {
		return d.Errf("list_ttl %q: %v", s, err)
	}
	ttl := caddy.Duration(dur)
	if err := checkListTTL(&ttl); err != nil {
		return d.WrapErr(err)
	}
	*target = &ttl
	return nil
}

func sizeArg(d *caddyfile.Dispenser, target *int64) error {
	key := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 || n > 1<<40 {
		return d.Errf("%s %q: want a size such as 4MiB", key, s)
	}
	*target = int64(n)
	return nil
}

func countArg(d *caddyfile.Dispenser, target *int) error {
	key := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return d.Errf("%s %q: want a positive whole number", key, s)
	}
	*target = n
	return nil
}

// badJSON says where text, the JSON of the current token, breaks and why
// ("line 5, column 2: invalid character ..."), at the Caddyfile line of
// the broken JSON line; nil when text is JSON.
func badJSON(d *caddyfile.Dispenser, text string) error {
	var v any
	var syntax *json.SyntaxError
	if !errors.As(json.Unmarshal([]byte(text), &v), &syntax) {
		return nil
	}
	before := text[:min(int(syntax.Offset), len(text))]
	line := strings.Count(before, "\n") + 1
	column := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:])
	tok := d.Token()
	tok.Line += line - 1
	if tok.NumLineBreaks() > strings.Count(tok.Text, "\n") {
		tok.Line++ // a heredoc's text starts on the line after <<MARKER
	}
	return errorAt(tok, fmt.Errorf("line %d, column %d: %v", line, column, syntax))
}
