package upstream

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/text/unicode/norm"
)

// Run longer with, for example:
//
//	go test ./upstream -run '^$' -fuzz '^FuzzPathTemplate$' -fuzztime 5m
//	go test ./upstream -run '^$' -fuzz '^FuzzNewRequest$' -fuzztime 5m

// fuzzNonce returns random hex the fuzzer cannot guess, so that finding it
// where it must not be is never a coincidence of the input.
func fuzzNonce(t testing.TB) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// fuzzReplacer stands in for Caddy's replacer and records every text it is
// asked to resolve: {env.SECRET} becomes the secret, any other {x.y}
// becomes "R". Argument text must never reach it.
type fuzzReplacer struct {
	secret string
	seen   []string
}

func (r *fuzzReplacer) ReplaceAll(s, empty string) string {
	r.seen = append(r.seen, s)
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		if s[i:i+j+1] == "{env.SECRET}" {
			b.WriteString(r.secret)
		} else {
			b.WriteString("R")
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// decodeLoosely percent-decodes what decodes and keeps the rest, the way a
// lenient server reads a path.
func decodeLoosely(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := hex.DecodeString(s[i+1 : i+3]); err == nil {
				b.WriteByte(v[0])
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodedDotSegments counts the "." and ".." segments of a path after one round
// of percent-decoding and NFKC normalization (a fullwidth dot is a dot),
// with both / and \ as separators (some servers take either).
func decodedDotSegments(path string) int {
	return dotSegmentsOf(norm.NFKC.String(decodeLoosely(path)))
}

func dotSegmentsOf(s string) int {
	n := 0
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == "." || seg == ".." {
			n++
		}
	}
	return n
}

// hasControl reports a C0, DEL or C1 control character in s.
func hasControl(s string) bool { return strings.IndexFunc(s, unicode.IsControl) >= 0 }

// FuzzPathTemplate expands fuzzed path templates with fuzzed values.
// Invariants: no panic; the values never add a "." or ".." segment (after
// percent-decoding and NFKC) or a '?' or '#' beyond what the template's own
// text has; a value in a slot holds no control character and is no dot
// segment once normalized; the replacer never sees argument text.
func FuzzPathTemplate(f *testing.F) {
	for _, seed := range []struct{ tmpl, a, b string }{
		{"/repos/{a}/{b}", "caddyserver", "caddy"},
		{"/files/{path}", "docs/readme.md", ""},
		{"/t/{env.TENANT}/files/{a}", "a b", "x"},
		{"/x/{a}{b}", ".", "."},
		{"/x/.{a}", ".", ""},
		{"/x/{a}.", ".", ""},
		{"/x/{a}/", "..", ""},
		{"/x/{a}", "%2e%2e", ""},
		{"/x/{a}", "a/../../etc/passwd", ""},
		{"/x/{a}", `a\..\b`, ""},
		{"/x/{a}", "{env.SECRET}", ""},
		{"/x/{a}", "?q=1#frag", ""},
		{"/x/{a}", "\r\nX-Injected: 1", ""},
		{`/x/\{a\}/{b}`, "", "v"},
		{"/x/{a", "v", ""},
		{"/x/{}", "v", ""},
		{"/x/{nope}", "v", ""},
		{"/{a}{b}{path}", "é", "\x00"},
		{"/a/{a}/{env.X}/{b}/{http.request.header.X}", "..", "/"},
		{"/x/{a}", "..\x00", ""},
		{"/x/{a}", "..\t", ""},
		{"/x/{a}", "\u0085..", ""},
		{"/x/{a}", "\uff0e\uff0e", ""},
		{"/x/.{a}", "\uff0e", ""},
		{"/x/{a}", "a\uff0f\uff0e\uff0e\uff3cb", "\u2025"},
		{"/raw/%{a}", "00", "0a"},
		{"", "", ""},
	} {
		f.Add(seed.tmpl, seed.a, seed.b)
	}
	nonce := fuzzNonce(f)
	f.Fuzz(func(t *testing.T, tmpl, a, b string) {
		isArg := func(name string) bool { return name == "a" || name == "b" || name == "path" }
		tpl, err := ParseTemplate(tmpl, isArg)
		if err != nil {
			return
		}
		for _, s := range tpl.Slots() {
			if !isArg(s) || !tpl.HasSlot(s) {
				t.Fatalf("slot %q is not an argument", s)
			}
		}
		repl := &fuzzReplacer{secret: "S"}
		args := map[string]any{"a": a, "b": b, "path": a + "/" + b}
		got, err := tpl.ExpandPath(args, repl)
		if err != nil {
			return
		}
		// The baseline values are hex digits, so that a '%' in the
		// template before a slot makes a valid escape with them too; an
		// escape the template starts may still make a control character
		// with them ("%{a}" and 00, "%0{a}" and any digit), which is
		// refused, so a second plain value is tried. Neither may expand
		// ("%0{a}" always makes one): then there is nothing to compare.
		var baseline string
		for _, plain := range []string{"41", "7a"} {
			if baseline, err = tpl.ExpandPath(map[string]any{"a": plain, "b": plain, "path": plain}, &fuzzReplacer{secret: "S"}); err == nil {
				break
			}
		}
		if err != nil {
			return
		}
		if n, m := decodedDotSegments(got), decodedDotSegments(baseline); n > m {
			t.Errorf("template %q with a=%q b=%q expands to %q: %d dot segments, the template alone has %d", tmpl, a, b, got, n, m)
		}
		for _, slot := range tpl.Slots() {
			v := args[slot].(string)
			if hasControl(v) || dotSegmentsOf(norm.NFKC.String(v)) > 0 {
				t.Errorf("template %q: the value %q of %s was sent as %q", tmpl, v, slot, got)
			}
		}
		for _, c := range []string{"?", "#"} {
			if strings.Count(got, c) != strings.Count(baseline, c) {
				t.Errorf("template %q with a=%q b=%q expands to %q: a value added a %q", tmpl, a, b, got, c)
			}
		}
		for _, in := range repl.seen {
			if strings.Contains(in, nonce) {
				t.Fatalf("the replacer saw argument text: %q", in)
			}
		}

		// The same values with a placeholder appended: it must stay text.
		marked := "{n." + nonce + "}"
		repl = &fuzzReplacer{secret: "S"}
		got, err = tpl.ExpandPath(map[string]any{"a": a + marked, "b": b + marked, "path": a + marked}, repl)
		for _, in := range repl.seen {
			if strings.Contains(in, nonce) {
				t.Fatalf("template %q: the replacer saw argument text %q", tmpl, in)
			}
		}
		if err == nil && len(tpl.Slots()) > 0 && !strings.Contains(got, nonce) {
			t.Fatalf("template %q: the argument text is missing from %q", tmpl, got)
		}
	})
}

// FuzzNewRequest builds upstream requests from fuzzed specs and fuzzed
// argument objects. Invariants: no panic; the request goes to the base
// URL's scheme, host and path prefix; no header value holds CR, LF or
// another control character; an argument adds no header field and no query
// key other than its own (its wire name); the fixed query keys (of the
// base URL and the query lines) keep exactly their configured value, and
// no argument of any case of those names is in the query or at the top of
// a JSON or form body; a null argument is in no query or form body, and is
// null in a JSON body; the configured secret appears only where the
// configuration puts it, never in the call's label; argument text never
// reaches the replacer.
//
// Styled arguments add only what their style writes: an exploded object
// (form, deepObject) adds its own property keys, never one that is fixed;
// an array in a style that joins its items is one value.
//
// The placement byte places b (its high bit makes b nullable); wire is
// the wire name of q; the style byte styles t and o in the query, and id
// and h (in the path and a header) by its bits 3 to 5.
func FuzzNewRequest(f *testing.F) {
	for _, seed := range []struct {
		method, path, headerName string
		placement, body          byte
		args                     string
		wire                     string
		style                    byte
	}{
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":["a","b,c"],"t":["x|y","z"],"o":{"key":"k","status":"open"},"h":["1","2"]}`, "", 0x0b},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","t":["a b","c"],"o":{"Fixed":"2"}}`, "", 0x01},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","t":["a","b"],"o":{"a&key=x":"b=c","q":"1"},"q":"2"}`, "", 0x06},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","o":{"x":"1&fixed=2","y][z":1}}`, "", 0x05},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":{"a":"..","b":"x/y"},"h":{"a":"1\r\nX: 2"},"o":{"n":{"deep":1}}}`, "", 0x38},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","t":[],"o":{},"perPage":"x"}`, "", 0x03},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","o":{"perPage":"2"},"p":1}`, "", 0x06},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","q":"open","p":10,"b":"x"}`, "filter[status]", 0},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","q":5,"filter[status]":"x","perPage":1000}`, "$top", 0},
		{"POST", "/items", "X-H", 0x83, 0, `{"q":null,"b":null,"p":null,"x":null}`, "dueDate", 0},
		{"PATCH", "/items/{id}", "X-H", 0x83, 1, `{"id":"1","q":null,"b":null}`, "user[name]", 0},
		{"GET", "/items/{id}", "X-H", 0x84, 0, `{"id":"1","b":null}`, "a&key=stolen", 0},
		{"GET", "/items/{perPage}", "X-H", 0, 0, `{"p":"7","q":"v"}`, "id", 0},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","q":"v"}`, "KEY", 0},
		{"GET", "/items/{id}", "X-H", 1, 0, `{"id":"1","q":"v"}`, "a\r\nb", 0},
		{"GET", "/items/{x}", "X-H", 1, 0, `{"id":"1","q":"v"}`, "x", 0},
		{"get", "/repos/{id}", "X-Request-Id", 0, 0, `{"id":"caddy","q":"open","h":"r-1"}`, "", 0},
		{"GET", "/items/{id}", "X-Trace", 1, 0, `{"id":42,"q":["a","b"],"t":[1,2.5,true]}`, "", 0},
		{"post", "/items", "X-Trace", 3, 0, `{"id":"x","b":{"nested":[1,{"a":null}]},"extra":"e"}`, "", 0},
		{"put", "/list/{id}", "X-H", 3, 2, `{"id":"7","b":[1,"two"]}`, "", 0},
		{"patch", "/form", "X-H", 3, 1, `{"b":["x","y"],"q":"1 2"}`, "", 0},
		{"delete", "/x/{id}", "X-H", 0, 0, `{"id":"..","force":true}`, "", 0},
		{"head", "/x/{id}", "X-H", 2, 0, `{"id":"a/../b"}`, "", 0},
		{"GET", "/x/{id}", "X-H", 2, 0, `{"id":"ok","h":"a\r\nX-Injected: 1"}`, "", 0},
		{"GET", "/x/{id}", "X-H", 2, 0, `{"id":"ok","h":"a\u0000b","q":"a&key=stolen#f"}`, "", 0},
		{"GET", "/x/{id}", "Authorization", 2, 0, `{"id":"ok","h":"Bearer mine"}`, "", 0},
		{"GET", "/x/{id}", "Host", 2, 0, `{"id":"ok","h":"evil.example"}`, "", 0},
		{"GET", "/x/{id}/{env.SECRET}", "X-H", 2, 0, `{"id":"{env.SECRET}","q":"{env.SECRET}","h":"{env.SECRET}"}`, "", 0},
		{"GET", "/x/{id}", "X-H", 2, 0, `{"id":1e400}`, "", 0},
		{"GET", "/x/{id}", "X-H", 2, 0, `{"id":9007199254740993,"q":-0.0}`, "", 0},
		{"POST", "/x", "X-H", 1, 9, `{"b":"v"}`, "", 0},
		{"GET", "/x/{id}", "X-H", 0, 0, `{"id":"ok","key":"attacker","V":"2","fixed":["a","b"]}`, "", 0},
		{"POST", "/x/{id}", "X-H", 3, 0, `{"id":"ok","key":"attacker","b":1}`, "", 0},
		{"PATCH", "/x/{id}", "X-H", 3, 1, `{"id":"ok","Fixed":"x"}`, "", 0},
		{"PUT", "/x/{id}", "X-H", 3, 2, `{"id":"ok","b":{"key":"v"},"extra":"replaces the body"}`, "", 0},
		{"GET", "/x/{id}", "X-H", 0, 0, `{"id":"..\u0000"}`, "", 0},
		{"GET", "/x/{id}", "X-H", 0, 0, `{"id":"\uff0e\uff0e"}`, "", 0},
		{"GET", "/x/{id}", "X-H", 0, 0, `{"id":"a\u0085b"}`, "", 0},
		{"GET", "/x/%{id}", "X-H", 0, 0, `{"id":"0a"}`, "", 0},
		{"TRACE", "/", "", 0, 0, `{}`, "", 0},
		{"GET", "x", "", 0, 0, `null`, "", 0},
		{"GET", "/?q", "", 0, 0, `[]`, "", 0},
	} {
		f.Add(seed.method, seed.path, seed.headerName, seed.placement, seed.body, []byte(seed.args), seed.wire, seed.style)
	}
	secret := fuzzNonce(f)
	nonce := fuzzNonce(f)
	base, err := url.Parse("https://api.example.com/v2/?fixed=1")
	if err != nil {
		f.Fatal(err)
	}
	placements := []Placement{"", InQuery, InHeader, InBody, InPath, "cookie"}
	modes := []BodyMode{"", BodyJSON, BodyForm, BodyArg}

	styles := []struct {
		style   Style
		explode *bool
	}{{"", nil}, {StyleForm, nil}, {StyleForm, boolPtr(false)}, {StyleSpaceDelimited, nil}, {StylePipeDelimited, nil}, {StyleDeepObject, nil}, {StyleForm, boolPtr(true)}, {StylePipeDelimited, boolPtr(true)}}
	simpleExplode := []*bool{nil, boolPtr(false), boolPtr(true), boolPtr(true)}

	f.Fuzz(func(t *testing.T, method, path, headerName string, placement, body byte, rawArgs []byte, wire string, style byte) {
		queryStyle := styles[style&7]
		var simple Style
		if style&8 != 0 {
			simple = StyleSimple
		}
		simpleArg := func(a planArg) planArg {
			a.Style = simple
			if simple != "" {
				a.explodeSet = simpleExplode[style>>4&3]
			}
			return a
		}
		spec := planSpec{
			Method: method,
			Path:   path,
			Args: []planArg{
				simpleArg(planArg{Name: "id"}),
				{Name: "q", Wire: wire},
				simpleArg(planArg{Name: "h", In: InHeader, HeaderName: headerName}),
				{Name: "b", In: placements[int(placement&0x7f)%len(placements)], Nullable: placement&0x80 != 0},
				{Name: "t", Type: "array", In: InQuery, Style: queryStyle.style, explodeSet: queryStyle.explode},
				{Name: "o", In: InQuery, Style: queryStyle.style, explodeSet: queryStyle.explode},
				{Name: "p", Wire: "perPage", In: InQuery, Nullable: true},
				{Name: "x", Wire: "X-Api-Version", In: InHeader, Nullable: true},
			},
			Query:  []Field{{Name: "key", Value: "{env.SECRET}"}, {Name: "v", Value: "1"}},
			Header: []Field{{Name: "Authorization", Value: "Bearer {env.SECRET}"}, {Name: "X-Fixed", Value: "fixed {http.vars.x}"}},
		}
		if i := int(body) % (len(modes) + 1); i < len(modes) {
			spec.Body = modes[i]
		} else {
			spec.Body = "xml"
		}
		if spec.Body == BodyArg {
			spec.BodyArg = "b"
		}
		tool, err := newRequestPlan(spec)
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(rawArgs))
		dec.UseNumber()
		var args map[string]any
		if dec.Decode(&args) != nil {
			return
		}
		args = tool.applyDefaults(args)

		repl := &fuzzReplacer{secret: secret}
		req, call, err := tool.build(context.Background(), base, args, repl)
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error shows the secret: %v", err)
			}
			return
		}
		checkRequest(t, tool, path, req, call, args, secret, spec.Body)

		// Every string argument with a placeholder appended: it must stay
		// text, never go through the replacer.
		repl = &fuzzReplacer{secret: secret}
		marked := markStrings(args, "{env.SECRET}{n."+nonce+"}").(map[string]any)
		req, call, err = tool.build(context.Background(), base, marked, repl)
		for _, in := range repl.seen {
			if strings.Contains(in, nonce) {
				t.Fatalf("the replacer saw argument text %q", in)
			}
		}
		if err == nil {
			checkRequest(t, tool, path, req, call, marked, secret, spec.Body)
		}
	})
}

// markStrings returns v with suffix appended to every string in it.
func markStrings(v any, suffix string) any {
	switch v := v.(type) {
	case string:
		return v + suffix
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = markStrings(x, suffix)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = markStrings(x, suffix)
		}
		return out
	}
	return v
}

// fuzzFixedQuery is what the base URL and the query lines of FuzzNewRequest
// fix, and the one value each must arrive with.
var fuzzFixedQuery = map[string]string{"fixed": "1", "key": "", "v": "1"}

func checkRequest(t *testing.T, tool *requestPlan, tmpl string, req *http.Request, call Target, args map[string]any, secret string, mode BodyMode) {
	t.Helper()
	// The wire names of the arguments given, by place, and the value each
	// was given.
	sent := map[wireKey]any{}
	for name, v := range args {
		_, in, key := tool.keyOf(name)
		sent[wireKey{in, key}] = v
	}
	if req.URL.Scheme != "https" || req.URL.Host != "api.example.com" || req.Host != "api.example.com" {
		t.Fatalf("the request left the upstream: URL %s, Host %q", req.URL, req.Host)
	}
	if !strings.HasPrefix(req.URL.EscapedPath(), "/v2/") || !strings.HasPrefix(req.URL.Path, "/v2/") {
		t.Fatalf("the request left the base path: %q (%q)", req.URL.EscapedPath(), req.URL.Path)
	}
	if req.URL.Fragment != "" || req.URL.RawFragment != "" || req.URL.User != nil || req.URL.Opaque != "" {
		t.Fatalf("unexpected URL parts: %#v", req.URL)
	}
	allowedHeaders := map[string]bool{"Authorization": true, "X-Fixed": true, "User-Agent": true, "Content-Type": true}
	for name, values := range req.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			t.Fatalf("invalid header field name %q", name)
		}
		argHeader := !allowedHeaders[name]
		for _, v := range values {
			if strings.ContainsAny(v, "\r\n") || !httpguts.ValidHeaderFieldValue(v) {
				t.Fatalf("header %s has a value with control characters: %q", name, v)
			}
			if name != "Authorization" && strings.Contains(v, secret) {
				t.Fatalf("header %s shows the secret: %q", name, v)
			}
		}
		if argHeader && len(values) != 1 {
			t.Fatalf("argument header %s has %d values", name, len(values))
		}
	}
	if got := req.Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer "+secret {
		t.Fatalf("the configured Authorization was replaced: %q", got)
	}
	query, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		t.Fatalf("the query %q does not parse: %v", req.URL.RawQuery, err)
	}
	// The keys the properties of styled objects make, and the argument.
	properties := map[string]string{}
	for name, v := range args {
		a := tool.args[name]
		obj, isObject := v.(map[string]any)
		if a == nil || a.In != InQuery || !isObject {
			continue
		}
		for prop, pv := range obj {
			switch {
			case pv == nil:
			case a.Style == StyleForm && a.Explode:
				properties[prop] = name
			case a.Style == StyleDeepObject:
				properties[a.Wire+"["+prop+"]"] = name
			}
		}
	}
	for key, values := range query {
		v, isArg := sent[wireKey{InQuery, key}]
		if key != "fixed" && key != "key" && key != "v" && !isArg && properties[key] == "" {
			t.Fatalf("query key %q comes from no argument: %q", key, req.URL.RawQuery)
		}
		if a := tool.args[properties[key]]; a != nil && (!isArg || sent[wireKey{InQuery, key}] == nil) {
			if len(values) != 1 || values[0] != scalarText(args[a.Name].(map[string]any), key, a) {
				t.Fatalf("query key %q of argument %s has %q: %q", key, a.Name, values, req.URL.RawQuery)
			}
		}
		if a := tool.args["t"]; key == a.Wire && a.Style != "" && !a.Explode && len(values) != 1 {
			t.Fatalf("style %s sent %d values for %s: %q", a.Style, len(values), key, req.URL.RawQuery)
		}
		if isArg && v == nil {
			t.Fatalf("query key %q is a null argument: %q", key, req.URL.RawQuery)
		}
		for _, v := range values {
			if key != "key" && strings.Contains(v, secret) {
				t.Fatalf("query %s shows the secret", key)
			}
		}
	}
	for key, want := range fuzzFixedQuery {
		if want == "" {
			want = secret
		}
		if got := query[key]; len(got) != 1 || got[0] != want {
			t.Fatalf("the fixed query parameter %s was changed: %q", key, got)
		}
		for k := range query {
			if k != key && strings.EqualFold(k, key) {
				t.Fatalf("an argument %s stands beside the fixed query parameter %s: %q", k, key, req.URL.RawQuery)
			}
		}
	}
	for _, s := range []string{call.Label, call.Path} {
		if strings.Contains(s, secret) {
			t.Fatalf("the label shows the secret: %q", s)
		}
	}
	if !hasControl(decodeLoosely(tmpl)) && hasControl(req.URL.Path) {
		t.Fatalf("an argument put a control character in the path %q", req.URL.Path)
	}
	// A path template may put the secret in the path itself (config text
	// says so); an argument never does.
	if !strings.Contains(tmpl, "{env.SECRET}") {
		for _, s := range []string{req.URL.Path, req.URL.EscapedPath()} {
			if strings.Contains(s, secret) {
				t.Fatalf("the path shows the secret: %q", s)
			}
		}
	}
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("the body shows the secret: %q", b)
		}
		// A whole body argument is the caller's own document, and only
		// that argument's; the keys of an object or form body are
		// argument names.
		var keys []string
		switch mode {
		case BodyArg:
			if want, _ := json.Marshal(args["b"]); !bytes.Equal(b, want) {
				t.Fatalf("the body %q is not the body argument %s", b, want)
			}
		case BodyForm:
			form, _ := url.ParseQuery(string(b))
			for k := range form {
				keys = append(keys, k)
				if v, isArg := sent[wireKey{InBody, k}]; !isArg || v == nil {
					t.Fatalf("form key %q is no argument, or a null one: %q", k, b)
				}
			}
		case "", BodyJSON:
			var obj map[string]json.RawMessage
			_ = json.Unmarshal(b, &obj)
			for k, raw := range obj {
				keys = append(keys, k)
				v, isArg := sent[wireKey{InBody, k}]
				if !isArg || (v == nil) != (string(raw) == "null") {
					t.Fatalf("body key %q is no argument, or null is not sent as null: %q", k, b)
				}
			}
		}
		for _, k := range keys {
			for fixed := range fuzzFixedQuery {
				if strings.EqualFold(k, fixed) {
					t.Fatalf("the body has %s beside the fixed query parameter %s: %q", k, fixed, b)
				}
			}
		}
	}
}

// scalarText is the text the property of obj that makes the query key
// key is sent as.
func scalarText(obj map[string]any, key string, a *planArg) string {
	prop := key
	if a.Style == StyleDeepObject {
		prop = strings.TrimSuffix(strings.TrimPrefix(key, a.Wire+"["), "]")
	}
	s, _ := scalarString(obj[prop])
	return s
}
