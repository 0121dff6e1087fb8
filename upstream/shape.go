package upstream

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// CutMetaKey is the key of the result's _meta that marks a cut result:
// its value is the Cut. structuredContent itself gets no key of ours (an
// output_schema may forbid any), so this is how a client tells a partial
// object from a whole one.
const CutMetaKey = "io.github.caddy-mcp/cut"

// MinResultSize is the least max_result_size: room for the note that
// says what was cut, and for some of the result.
const MinResultSize = 1024

// Shaping is how results are sized for a model.
type Shaping struct {
	// MaxSize bounds, in bytes, a result's text and, separately, its
	// structuredContent: a client hands a model one or the other. 0: no
	// bound. When set, at least MinResultSize.
	MaxSize int64
	// SummaryText makes the text of a result with structuredContent a
	// short summary (the status, the counts) instead of the same JSON.
	SummaryText bool
}

// ResultSizeHintKey is the _meta key in which a tool, and each large
// result of it, tell Claude Code how many characters a result may hold
// (anthropic/maxResultSizeChars, at most 500,000). Claude Code warns on a
// result past 10,000 tokens and, past its cap (25,000 tokens by default),
// writes the result to a file instead of showing it, unless the tool says
// that much is expected.
const ResultSizeHintKey = "anthropic/maxResultSizeChars"

const (
	// resultSizeHintFrom is the size, in characters, past which a tool's
	// results are announced: about Claude Code's 10,000-token warning.
	resultSizeHintFrom = 40_000
	// maxResultSizeHint is the most Claude Code takes.
	maxResultSizeHint = 500_000
)

// SizeHint is what a tool whose results s bounds announces in
// ResultSizeHintKey: its text and its structuredContent at the bound and
// a cut record, in characters at most, past resultSizeHintFrom; 0 when
// its results stay below that, or are not bounded (a client keeps its own
// cap for those).
func (s Shaping) SizeHint() int {
	if s.MaxSize <= 0 {
		return 0
	}
	n := 2*s.MaxSize + MaxCutMeta
	if n <= resultSizeHintFrom {
		return 0
	}
	return int(min(n, maxResultSizeHint))
}

// apply sizes res, the result of an answer of the given status to the
// request target names; jsonText says its text is valid JSON, to be cut
// as JSON (other text is cut at a character boundary). A result past
// resultSizeHintFrom carries the tool's SizeHint.
func (s Shaping) apply(target Target, status int, res *mcp.CallToolResult, jsonText bool) *mcp.CallToolResult {
	res = s.size(target, status, res, jsonText)
	if hint := s.SizeHint(); hint > 0 && resultSize(res) > resultSizeHintFrom {
		res.Meta = MetaWith(res.Meta, ResultSizeHintKey, hint)
	}
	return res
}

// resultSize is the bytes of a result's text and structuredContent.
func resultSize(res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			n += len(t.Text)
		}
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		n += len(raw)
	}
	return n
}

func (s Shaping) size(target Target, status int, res *mcp.CallToolResult, jsonText bool) *mcp.CallToolResult {
	if raw, ok := res.StructuredContent.(json.RawMessage); ok && !res.IsError {
		return s.structured(target, status, res, raw)
	}
	if s.MaxSize <= 0 {
		return res
	}
	limit := int(s.MaxSize)
	for i, c := range res.Content {
		t, ok := c.(mcp.TextContent)
		if !ok || len(t.Text) <= limit {
			continue
		}
		var cut *Cut
		t.Text, cut = cutText(t.Text, limit, jsonText)
		res.Content[i] = t
		if cut != nil {
			setCutMeta(res, cut)
		}
	}
	return res
}

// structured sizes a result whose text is its structuredContent raw.
func (s Shaping) structured(target Target, status int, res *mcp.CallToolResult, raw json.RawMessage) *mcp.CallToolResult {
	limit := int(s.MaxSize)
	compact := compactJSON(raw)
	summary := ""
	if s.SummaryText {
		summary = summaryText(target, status, compact)
	}
	text := summary
	if limit <= 0 || len(compact) <= limit {
		if !s.SummaryText {
			if limit <= 0 || len(onlyText(res)) <= limit {
				return res
			}
			text = string(compact)
		}
		res.Content = []mcp.Content{mcp.NewTextContent(text)}
		return res
	}
	out, note, cut := cutJSONToFit(compact, len(raw), limit, len(summary)+len(noteSep), !s.SummaryText)
	if !s.SummaryText {
		text = string(out)
	}
	res.Content = []mcp.Content{mcp.NewTextContent(text + noteSep + note)}
	res.StructuredContent = json.RawMessage(out)
	setCutMeta(res, cut)
	return res
}

func onlyText(res *mcp.CallToolResult) string {
	if len(res.Content) == 1 {
		if t, ok := res.Content[0].(mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

func setCutMeta(res *mcp.CallToolResult, cut *Cut) { res.Meta = MetaWith(res.Meta, CutMetaKey, cut) }

// MetaWith is m (a new one when nil) with key set to v, for the _meta of
// a result or a tool.
func MetaWith(m *mcp.Meta, key string, v any) *mcp.Meta {
	if m == nil {
		m = &mcp.Meta{}
	}
	if m.AdditionalFields == nil {
		m.AdditionalFields = map[string]any{}
	}
	m.AdditionalFields[key] = v
	return m
}

// noteSep is between a cut text and its note, which starts with
// notePrefix.
const (
	noteSep    = "\n\n"
	notePrefix = "[cut to max_result_size, "
)

// CutNoteStart is where the note that ends a text cut to max_result_size
// begins, the separator before it included; -1 when text has no note.
func CutNoteStart(text string) int { return strings.LastIndex(text, noteSep+notePrefix) }

// cutText cuts text to limit bytes with its note: structurally when it is
// valid JSON (isJSON), else at a character boundary.
func cutText(text string, limit int, isJSON bool) (string, *Cut) {
	if isJSON {
		compact := compactJSON([]byte(strings.TrimSpace(text)))
		if len(compact) <= limit {
			return string(compact), nil // only spaces were left out
		}
		out, note, cut := cutJSONToFit(compact, len(text), limit, len(noteSep), true)
		return string(out) + noteSep + note, cut
	}
	cut := &Cut{Limit: int64(limit), Size: len(text), Text: true}
	room := limit
	for {
		kept := text[:utf8Prefix(text, room-len(noteSep))]
		cut.Kept = len(kept)
		note := cut.note(0)
		if over := len(kept) + len(noteSep) + len(note) - limit; over > 0 {
			room -= over
			continue
		}
		return kept + noteSep + note, cut
	}
}

// utf8Prefix is the length of the longest prefix of s of at most n bytes
// that ends at a character boundary.
func utf8Prefix(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// cutJSONToFit cuts compact JSON so that the text it goes into fits in
// limit bytes with the note: fixed bytes, the JSON itself when inText,
// and the note. size is the answer's size as received. The note lists a
// few paths when they fit.
func cutJSONToFit(compact []byte, size, limit, fixed int, inText bool) ([]byte, string, *Cut) {
	reserve := 0
	if inText {
		reserve = 256
	}
	for {
		budget := max(limit-reserve, 32)
		cut := &Cut{Limit: int64(limit), Size: size}
		out := cutJSON(compact, budget, cut)
		cut.Kept = len(out)
		used := fixed
		if inText {
			used += len(out)
		}
		note := cut.note(3)
		if used+len(note) > limit {
			note = cut.note(0)
		}
		over := used + len(note) - limit
		if over <= 0 || budget == 32 || !inText {
			return out, note, cut
		}
		reserve += over
	}
}

// maxNotePath bounds a path as a note shows it.
const maxNotePath = 60

// note is the text that tells the model what was cut, with up to
// examples paths of each kind.
func (c *Cut) note(examples int) string {
	var b strings.Builder
	if c.Text {
		fmt.Fprintf(&b, notePrefix+"%d bytes: the text is %d bytes; the first %d are shown, %d left out]",
			c.Limit, c.Size, c.Kept, c.Size-c.Kept)
		return b.String()
	}
	fmt.Fprintf(&b, notePrefix+"%d bytes: the JSON is %d bytes, %d are shown", c.Limit, c.Size, c.Kept)
	if c.ArraysShortened > 0 {
		fmt.Fprintf(&b, "; %d array items left out, from the end of %d %s", c.ItemsDropped, c.ArraysShortened, plural(c.ArraysShortened, "array", "arrays"))
		list(&b, len(c.Arrays), c.ArraysShortened, examples, func(i int) string {
			a := c.Arrays[i]
			return fmt.Sprintf("%s keeps %d of %d", notePath(a.Path), a.Kept, a.Of)
		})
	}
	if len(c.Objects) > 0 {
		fmt.Fprintf(&b, "; %d %s left out, from the end of the object", c.KeysDropped, plural(c.KeysDropped, "member", "members"))
		list(&b, len(c.Objects), len(c.Objects), examples, func(i int) string {
			o := c.Objects[i]
			return fmt.Sprintf("%s keeps %d of %d", notePath(o.Path), o.Kept, o.Of)
		})
	}
	if c.StringsShortened > 0 {
		fmt.Fprintf(&b, "; %d %s shortened", c.StringsShortened, plural(c.StringsShortened, "string", "strings"))
		list(&b, len(c.Strings), c.StringsShortened, examples, func(i int) string {
			s := c.Strings[i]
			return fmt.Sprintf("%s to %d of %d bytes", notePath(s.Path), s.Kept, s.Of)
		})
	}
	if c.ValuesSummarized > 0 {
		fmt.Fprintf(&b, "; %d %s replaced by a summary", c.ValuesSummarized, plural(c.ValuesSummarized, "value", "values"))
		list(&b, len(c.Summarized), c.ValuesSummarized, examples, func(i int) string {
			v := c.Summarized[i]
			return fmt.Sprintf("%s (%d bytes) as %s", notePath(v.Path), v.Of, v.As)
		})
	}
	b.WriteString("; ask for less, e.g. fewer items per page, for the rest]")
	return b.String()
}

// list writes up to examples of the n items listed, of total: " (a, b,
// and 3 more)".
func list(b *strings.Builder, n, total, examples int, item func(int) string) {
	if examples <= 0 || n == 0 {
		return
	}
	b.WriteString(" (")
	shown := min(n, examples)
	for i := range shown {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(item(i))
	}
	if total > shown {
		fmt.Fprintf(b, ", and %d more", total-shown)
	}
	b.WriteString(")")
}

func notePath(p string) string {
	if len(p) <= maxNotePath {
		return p
	}
	return p[:utf8Prefix(p, maxNotePath)] + ellipsis
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// summaryText is the short text of a result whose JSON is in
// structuredContent: the status and what the JSON holds.
func summaryText(target Target, status int, compact []byte) string {
	t := newJSONTree(compact)
	root := &t.nodes[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered %s: ", target.Label, statusText(status))
	switch root.kind {
	case '{':
		fmt.Fprintf(&b, "an object of %d %s", root.count, plural(int(root.count), "key", "keys"))
		var arrays []string
		for i := t.firstChild(0); i >= 0; i = t.nodes[i].next {
			if m := &t.nodes[i]; m.kind == '[' && len(arrays) < 5 {
				arrays = append(arrays, notePath(strings.TrimPrefix(keyPath(t.key(m)), "."))+" has "+strconv.Itoa(int(m.count))+" "+plural(int(m.count), "item", "items"))
			}
		}
		if len(arrays) > 0 {
			b.WriteString(" (" + strings.Join(arrays, ", ") + ")")
		}
	case '[':
		fmt.Fprintf(&b, "an array of %d %s", root.count, plural(int(root.count), "item", "items"))
	default:
		b.WriteString("a single value")
	}
	fmt.Fprintf(&b, ", %d bytes of JSON; see structuredContent.", len(compact))
	return b.String()
}
