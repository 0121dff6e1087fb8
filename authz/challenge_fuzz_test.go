package authz

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/textproto"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// b64token is RFC 6750 section 2.1's b64token, written apart from
// isToken68 so that the two can disagree.
var b64token = regexp.MustCompile(`^[A-Za-z0-9._~+/-]+=*$`)

// FuzzBearerToken holds BearerToken to RFC 6750 section 2.1 for any header
// value: it gives back either a refusal or exactly the b64token after one
// "Bearer" (any ASCII case) and its spaces; the scheme's case changes
// nothing, and "Bearer " + token gives the token back.
func FuzzBearerToken(f *testing.F) {
	for _, header := range []string{
		"Bearer abc.def-ghi_~+/==", "bearer abc", "BEARER abc", "Bearer   abc", "", "Bearer", "Bearer ",
		"Bearer ===", "Basic dXNlcjpwYXNz", "Bearer abc def", "Bearer abc,Bearer def", "Bearer a=b",
		"Bearer\tabc", "Token abc", "Bearer abc ", " Bearer abc", "Bearer a\x00b", "Bearer a\r\nX: y",
		"Bearer é", "Bearerabc", "Bearer, abc", "Bearer =abc", "bearer\u00a0abc", "Bearer abc=",
	} {
		f.Add(header, byte(0))
	}
	f.Fuzz(func(t *testing.T, header string, caseBits byte) {
		token, err := BearerToken(header)
		want, ok := referenceBearer(header)
		if !ok {
			var refusal *Error
			if err == nil || token != "" || !errors.As(err, &refusal) {
				t.Fatalf("BearerToken(%q) = %q, %v; want a refusal", header, token, err)
			}
			kind := ErrInvalidToken
			if header == "" {
				kind = ErrNoToken
			}
			if !errors.Is(err, kind) {
				t.Fatalf("BearerToken(%q): %v is not %v", header, err, kind)
			}
			return
		}
		if err != nil || token != want {
			t.Fatalf("BearerToken(%q) = %q, %v; want %q", header, token, err, want)
		}
		if strings.ContainsAny(token, " ,\t\"\\") || strings.IndexFunc(token, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
			t.Fatalf("BearerToken(%q) = %q, not a b64token", header, token)
		}
		if again, err := BearerToken("Bearer " + token); err != nil || again != token {
			t.Fatalf(`BearerToken("Bearer " + %q) = %q, %v`, token, again, err)
		}
		// The same header with the scheme's letters in other cases.
		scheme := []byte("bearer")
		for i := range scheme {
			if caseBits>>i&1 != 0 {
				scheme[i] -= 'a' - 'A'
			}
		}
		recased := string(scheme) + header[len("bearer"):]
		if again, err := BearerToken(recased); err != nil || again != token {
			t.Fatalf("BearerToken(%q) = %q, %v; want %q as for %q", recased, again, err, token, header)
		}
	})
}

// referenceBearer is what BearerToken must answer: the b64token after
// "Bearer" (ASCII letters in any case) and one or more spaces.
func referenceBearer(header string) (string, bool) {
	if len(header) < len("bearer ") || !strings.EqualFold(header[:len("bearer")], "bearer") {
		return "", false
	}
	rest := header[len("bearer"):]
	token := strings.TrimLeft(rest, " ")
	if len(token) == len(rest) || !b64token.MatchString(token) {
		return "", false
	}
	return token, true
}

// challengeErrors are the error codes a Challenge is documented to carry;
// the fuzzer may also pick its own string.
var challengeErrors = []string{"", "invalid_token", "invalid_request", "insufficient_scope"}

// FuzzChallenge renders challenges of arbitrary descriptions, scopes
// (scopes is split on '|' into Challenge.Scope) and metadata URLs, and
// requires one header line of printable ASCII that an RFC 7235 parser
// reads back as exactly the fields given, in the documented order
// (error, error_description, scope, resource_metadata), each control or
// non-ASCII character replaced by '?'.
func FuzzChallenge(f *testing.F) {
	const meta = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	f.Add(byte(0), "", "", "", meta)
	f.Add(byte(1), "", "the token has expired", "", meta)
	f.Add(byte(2), "", "send the token in the Authorization header, not in the URL", "mcp", meta)
	f.Add(byte(3), "", "the token lacks a scope this request needs", "refunds:write|mcp", meta)
	f.Add(byte(0), "", "a \"quoted\" \\ back\r\nSet-Cookie: x\u00e9", "", `https://h/"x`)
	f.Add(byte(4), `x", error="invalid_token`, "\\\"", "a\"b|\\", "\x00\x7f\xff\xfe")
	f.Add(byte(1), "", "", "||", "")
	f.Add(byte(0), "", "\u2028\u0085\t", "a b|c", "https://h/?a=b,c=\"d\"")
	f.Fuzz(func(t *testing.T, pick byte, errorCode, description, scopes, metadata string) {
		c := Challenge{Description: description, ResourceMetadata: metadata}
		if int(pick) < len(challengeErrors) {
			c.Error = challengeErrors[pick]
		} else {
			c.Error = errorCode
		}
		if pick&0x80 == 0 && scopes != "" {
			c.Scope = strings.Split(scopes, "|")
		} else if pick&0x80 != 0 {
			c.Scope = []string{} // empty, not nil: still no scope parameter
		}
		value := c.String()
		for i := 0; i < len(value); i++ {
			if value[i] < 0x20 || value[i] > 0x7e {
				t.Fatalf("byte %#x at %d in %q", value[i], i, value)
			}
		}
		// One header line: written and read back as HTTP/1.1 does, the
		// value is the same, and alone.
		var wire bytes.Buffer
		if err := (http.Header{"Www-Authenticate": {value}}).Write(&wire); err != nil {
			t.Fatal(err)
		}
		wire.WriteString("\r\n")
		read, err := textproto.NewReader(bufio.NewReader(&wire)).ReadMIMEHeader()
		if err != nil || len(read) != 1 || len(read["Www-Authenticate"]) != 1 || read.Get("Www-Authenticate") != value {
			t.Fatalf("%q read back from the wire as %q, %v", value, read, err)
		}

		var want []authParam
		if c.Error != "" {
			want = append(want, authParam{"error", printable(c.Error)})
		}
		if c.Description != "" {
			want = append(want, authParam{"error_description", printable(c.Description)})
		}
		if len(c.Scope) > 0 {
			want = append(want, authParam{"scope", printable(strings.Join(c.Scope, " "))})
		}
		if c.ResourceMetadata != "" {
			want = append(want, authParam{"resource_metadata", printable(c.ResourceMetadata)})
		}
		got, err := parseBearerChallenge(value)
		if err != nil {
			t.Fatalf("%q: %v", value, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q reads as %q, want %q", value, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q reads as %q, want %q", value, got, want)
			}
		}
	})
}

// printable is s with each control or non-ASCII character (each byte of
// invalid UTF-8 counting as one) replaced by '?'.
func printable(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

type authParam struct{ name, value string }

// parseBearerChallenge reads a WWW-Authenticate value holding one
// challenge of the Bearer scheme (RFC 9110 section 11.2, formerly RFC
// 7235): "Bearer" [ 1*SP auth-param *( OWS "," OWS auth-param ) ], every
// auth-param token "=" ( token / quoted-string ).
func parseBearerChallenge(s string) ([]authParam, error) {
	rest, ok := strings.CutPrefix(s, "Bearer")
	if !ok {
		return nil, errors.New("not of the Bearer scheme")
	}
	if rest == "" {
		return nil, nil
	}
	if rest[0] != ' ' {
		return nil, errors.New("no space after the scheme")
	}
	rest = strings.TrimLeft(rest, " ")
	var params []authParam
	for {
		n := 0
		for n < len(rest) && isTchar(rest[n]) {
			n++
		}
		if n == 0 {
			return nil, errors.New("no parameter name at " + rest)
		}
		name := rest[:n]
		rest = rest[n:]
		if rest == "" || rest[0] != '=' {
			return nil, errors.New("no = after " + name)
		}
		rest = rest[1:]
		var value string
		var err error
		if rest != "" && rest[0] == '"' {
			value, rest, err = readQuoted(rest)
			if err != nil {
				return nil, err
			}
		} else {
			n = 0
			for n < len(rest) && isTchar(rest[n]) {
				n++
			}
			value, rest = rest[:n], rest[n:]
		}
		params = append(params, authParam{name, value})
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			return params, nil
		}
		if rest[0] != ',' {
			return nil, errors.New("no comma before " + rest)
		}
		rest = strings.TrimLeft(rest[1:], " \t")
	}
}

// readQuoted reads the quoted-string s starts with and returns its
// content and what follows it.
func readQuoted(s string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String(), s[i+1:], nil
		case c == '\\':
			i++
			if i == len(s) || (s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f {
				return "", "", errors.New("a bad quoted-pair")
			}
			b.WriteByte(s[i])
		case c < 0x20 && c != '\t', c == 0x7f:
			return "", "", errors.New("a control character in a quoted-string")
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("an unterminated quoted-string")
}

func isTchar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
