package upstream

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// PreviewSize is how much of a failed answer's body an error shows: a
// Preview of a longer text is cut.
const PreviewSize = 512

// Target names the request one call sent, in results, errors and logs,
// without what may be secret.
type Target struct {
	// Label is "<METHOD> <tool path>": the expanded path template, without
	// the upstream's base path (which may hold a token) or the query string
	// (which may hold a key).
	Label string
	// Path is the expanded tool path, escaped.
	Path string
	// URI addresses binary results: caddy-mcp://<operation name><Path>.
	URI string
	// Sent is the escaped path the request went to, and Base the escaped
	// path of the upstream base URL; both may hold a token (the base path,
	// a resolved placeholder), so a redirect's target below them is shown
	// as a tool path, like Path.
	Sent, Base string
}

// result maps the answer to a tool result of op. A 2xx JSON answer, through
// op's jq filter if it has one, is its JSON text and, when op has an
// output schema, also structuredContent validated against it; text,
// images and audio map to their content types; anything else is an error
// result naming the status.
func (r *Response) result(ctx context.Context, target Target, op *Operation) (*mcp.CallToolResult, []string) {
	output := op.output != nil
	if r.Status < 200 || r.Status > 299 {
		return ErrorResult(r.statusError(target)), nil
	}
	if len(r.Body) == 0 {
		if output {
			// Clients require structuredContent from a tool with an output
			// schema; there is nothing to give.
			return ErrorResult(fmt.Sprintf("%s: the tool has an output_schema, but the upstream answered %s with no content",
				target.Label, statusText(r.Status))), nil
		}
		return TextResult(fmt.Sprintf("%s: upstream answered %s with no content", target.Label, statusText(r.Status))), nil
	}
	mediaType := mediaTypeOf(r.Header.Get("Content-Type"))
	jsonType := isJSONType(mediaType)
	if op.jq != nil {
		return r.filtered(ctx, target, op, mediaType, jsonType)
	}

	if output && (jsonType || mediaType == "" || strings.HasPrefix(mediaType, "text/")) && json.Valid(r.Body) {
		return op.structured(validUTF8(r.Body), target.Label+": the upstream answer")
	}
	switch {
	case jsonType:
		if !json.Valid(r.Body) {
			return ErrorResult(fmt.Sprintf("%s: upstream answered %s with invalid JSON: %s",
				target.Label, mediaType, Preview(r.Body))), nil
		}
		if output {
			return op.structured(validUTF8(r.Body), target.Label+": the upstream answer")
		}
		return TextResult(string(validUTF8(r.Body))), nil
	case strings.HasPrefix(mediaType, "image/"):
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewImageContent(base64.StdEncoding.EncodeToString(r.Body), mediaType),
		}}, nil
	case strings.HasPrefix(mediaType, "audio/"):
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewAudioContent(base64.StdEncoding.EncodeToString(r.Body), mediaType),
		}}, nil
	case strings.HasPrefix(mediaType, "text/") || utf8.Valid(r.Body):
		if output {
			return ErrorResult(fmt.Sprintf("%s: the tool has an output_schema, but the upstream answered %s that is not JSON: %s",
				target.Label, orUnknown(mediaType), Preview(r.Body))), nil
		}
		return TextResult(string(validUTF8(r.Body))), nil
	default:
		if mediaType == "" {
			mediaType = "application/octet-stream"
		}
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewEmbeddedResource(mcp.BlobResourceContents{
				URI:      target.URI,
				MIMEType: mediaType,
				Blob:     base64.StdEncoding.EncodeToString(r.Body),
			}),
		}}, nil
	}
}

// filtered is the result of a 2xx answer through op's jq filter: the
// answer must be JSON (of a JSON type, or of no type or a text type that
// holds JSON, as with an output schema).
func (r *Response) filtered(ctx context.Context, target Target, op *Operation, mediaType string, jsonType bool) (*mcp.CallToolResult, []string) {
	if !(jsonType || mediaType == "" || strings.HasPrefix(mediaType, "text/")) || !json.Valid(r.Body) {
		return ErrorResult(fmt.Sprintf("tool %s: jq filter: %s answered %s that is not JSON: %s",
			op.name, target.Label, orUnknown(mediaType), Preview(r.Body))), nil
	}
	out, err := op.jq.run(ctx, r.Body)
	if err != nil {
		return ErrorResult(fmt.Sprintf("tool %s: jq filter: %v", op.name, err)), nil
	}
	if op.output != nil {
		return op.structured(out, fmt.Sprintf("tool %s: the jq filter's output", op.name))
	}
	return TextResult(string(out)), nil
}

// structured is the result of JSON body that must match op's output
// schema: its text and structuredContent. what names the body in errors.
// An answer that does not match is an error result listing the
// violations; with op.drift, one that says the API's answer does not
// match its document and holds the answer, and the violations are
// returned too.
func (op *Operation) structured(body []byte, what string) (*mcp.CallToolResult, []string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return ErrorResult(fmt.Sprintf("%s is invalid JSON: %s", what, Preview(body))), nil
	}
	output, err := op.output.compiled()
	if err != nil {
		return ErrorResult(fmt.Sprintf("tool %s: %v", op.name, err)), nil
	}
	if err := output.Validate(v); err != nil {
		violations := Violations(err)
		if op.drift {
			return ErrorResult(fmt.Sprintf("%s does not match the tool's output schema, which the API's answers may drift from (%s); the answer follows as the API sent it:\n\n%s",
				what, strings.Join(violations[:min(len(violations), maxDriftShown)], "; "), body)), violations
		}
		return ErrorResult(fmt.Sprintf("%s does not match the tool's output_schema:\n- %s",
			what, strings.Join(violations, "\n- "))), nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(body))},
		StructuredContent: json.RawMessage(body),
	}, nil
}

// maxDriftShown is how many violations a drifted answer's result names.
const maxDriftShown = 3

// validUTF8 is text with each byte that is not UTF-8 made U+FFFD, as
// encoding/json sends it: a result's sizes then count what is sent.
// (Valid JSON may hold such bytes in its strings.) text itself when it is
// valid.
func validUTF8(text []byte) []byte {
	if utf8.Valid(text) {
		return text
	}
	out := make([]byte, 0, len(text)+len(text)/4)
	for len(text) > 0 {
		r, size := utf8.DecodeRune(text)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, text[:size]...)
		}
		text = text[size:]
	}
	return out
}

// isJSONType reports whether a media type, or a Content-Type, is JSON.
func isJSONType(contentType string) bool {
	mediaType := mediaTypeOf(contentType)
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// mediaTypeOf is the media type of a Content-Type as mime.ParseMediaType
// gives it, or "" when that fails. The usual JSON answers are known
// without parsing, which allocates.
func mediaTypeOf(contentType string) string {
	switch contentType {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8":
		return "application/json"
	}
	mediaType, _, _ := mime.ParseMediaType(contentType)
	return mediaType
}

func (r *Response) statusError(target Target) string {
	msg := fmt.Sprintf("%s: upstream answered %s", target.Label, statusText(r.Status))
	if r.Status >= 300 && r.Status < 400 {
		if loc := r.Header.Get("Location"); loc != "" {
			msg += fmt.Sprintf(" (redirect to %s, not followed)", target.location(loc))
		}
		return msg
	}
	if len(r.Body) > 0 {
		msg += ": " + Preview(r.Body)
	}
	return msg
}

// TextResult is a successful result holding text.
func TextResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}}
}

// ErrorResult is a tool error: the model reads the message and may retry.
func ErrorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(msg)}, IsError: true}
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprintf("%d", code)
}

func orUnknown(mediaType string) string {
	if mediaType == "" {
		return "content of no type"
	}
	return mediaType
}

// Preview is the start of a body for error messages: text as text, cut
// past PreviewSize bytes, anything else by its size.
func Preview(body []byte) string {
	if !utf8.Valid(body) {
		return fmt.Sprintf("(%d bytes of binary data)", len(body))
	}
	s := string(body)
	if len(s) > PreviewSize {
		cut := PreviewSize
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("… (%d bytes in all)", len(body))
	}
	return strings.TrimSpace(s)
}

// location is how an error shows a redirect's target: without the query,
// and without the path the request was sent to or the base path.
func (c Target) location(raw string) string {
	shown := withoutQuery(raw)
	u, err := url.Parse(shown)
	if err != nil {
		return shown
	}
	p := u.EscapedPath()
	switch {
	case below(p, c.Sent):
		return c.Path + p[len(c.Sent):]
	case below(p, c.Base):
		if p = p[len(c.Base):]; p == "" {
			p = "/"
		}
		return p
	}
	return shown
}

// below reports whether path p is prefix or below it.
func below(p, prefix string) bool {
	return prefix != "" && prefix != "/" && strings.HasPrefix(p, prefix) && (len(p) == len(prefix) || p[len(prefix)] == '/')
}

// withoutQuery drops the query and fragment of a URL, which may hold keys.
func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			return raw[:i]
		}
		return raw
	}
	u.RawQuery, u.Fragment, u.RawFragment, u.User = "", "", "", nil
	return u.String()
}
