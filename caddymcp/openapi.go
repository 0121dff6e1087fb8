package caddymcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/openapi"
)

// OpenAPISource is an OpenAPI document (3.0, 3.1 or Swagger 2.0, JSON or
// YAML) whose operations become tools: one tool per operation the curation
// selects, an ordinary tool afterwards (validated arguments, the same
// request building, results and limits). Operations that cannot be mapped
// are skipped, and logged with the reason.
type OpenAPISource struct {
	// Source is a file path, read at load (a relative path is relative to
	// the current directory), or an https URL (http only to a loopback
	// host), fetched once at load within 10s and 16MiB. Required.
	Source string `json:"source"`

	// Include selects operations: operationId globs (repos/*), or
	// "METHOD /path" globs ("GET /repos/*"), '*' matching any run of
	// characters. Default: every operation.
	Include []string `json:"include,omitempty"`

	// Exclude drops operations Include selected, with the same patterns.
	// Default: none.
	Exclude []string `json:"exclude,omitempty"`

	// Tags keeps only the operations carrying one of these tags.
	// Default: any tags.
	Tags []string `json:"tags,omitempty"`

	// Rename gives the tool of an operation (by operationId) another name.
	// Default: the operationId made a valid tool name.
	Rename map[string]string `json:"rename,omitempty"`

	// Describe gives the tool of an operation (by operationId) another
	// description. Default: the operation's summary and description.
	Describe map[string]string `json:"describe,omitempty"`

	// OutputSchema is how the operations' response schemas become output
	// schemas: lenient (properties, types, enums and descriptions, nothing
	// required, null accepted, deep levels compacted), strict (as the
	// document writes them) or off (none). An answer that breaks one is an
	// error result that holds the answer. Default: lenient.
	OutputSchema string `json:"output_schema,omitempty"`

	// Operations tune the tools of single operations, by operationId.
	// Default: none.
	Operations map[string]*ImportedOperation `json:"operations,omitempty"`

	// Origin is where the source was written: "<file>:<line>" of its
	// openapi line, which the Caddyfile adapter fills in. An error about
	// the document at load ends with it, as the adapter's own errors end
	// with their line. Default: none.
	Origin string `json:"origin,omitempty"`

	// at is the openapi line in a Caddyfile, for errors.
	at caddyfile.Token
}

// origin is a Caddyfile token's file and line, as errors name them.
func origin(tok caddyfile.Token) string {
	if tok.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", tok.File, tok.Line)
}

// located ends err with the place where the document, or the operation
// err is about, was written, when the config says it.
func (s *OpenAPISource) located(err error) error {
	at := s.Origin
	var opErr *openapi.OperationError
	if errors.As(err, &opErr) {
		if o := s.Operations[opErr.ID]; o != nil && o.Origin != "" {
			at = o.Origin
		}
	}
	if at == "" {
		return err
	}
	return fmt.Errorf("%w, at %s", err, at)
}

// maxSkippedLogged bounds the lines of skipped operations and left-out
// parameters one document logs; a count says how many more there were.
const maxSkippedLogged = 100

// importedDocument is one source read and mapped: the source and its
// import, held in the imports pool under key.
type importedDocument struct {
	src *OpenAPISource
	*documentImport
	key    string
	reused bool // the import of an earlier config, not parsed again
}

// shown is the source as logs and errors name it: a URL without its
// credentials, query or fragment, which may carry a token.
func (s *OpenAPISource) shown() string {
	u, err := url.Parse(s.Source)
	if err != nil || !s.isURL() {
		return s.Source
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

func (s *OpenAPISource) isURL() bool {
	lower := strings.ToLower(s.Source)
	return strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://")
}

// read returns the document's bytes: a URL fetched (within openapi's
// bounds), a file read up to openapi.MaxDocumentSize.
func (s *OpenAPISource) read(ctx context.Context) ([]byte, error) {
	if s.isURL() {
		return openapi.Fetch(ctx, s.Source)
	}
	f, err := os.Open(s.Source)
	if err != nil {
		return nil, readError(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, openapi.MaxDocumentSize+1))
	if err != nil {
		return nil, readError(err)
	}
	if len(data) > openapi.MaxDocumentSize {
		return nil, fmt.Errorf("the document is more than the %d bytes allowed", openapi.MaxDocumentSize)
	}
	return data, nil
}

// readError is a file's error without the path, which the caller's names.
func readError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("reading the file: %w", pe.Err)
	}
	return err
}

// load reads, parses and maps the document. header is the handler's
// upstream headers, which the tools' requests carry.
func (s *OpenAPISource) load(ctx context.Context, h *Handler) (*importedDocument, error) {
	if strings.TrimSpace(s.Source) == "" {
		return nil, errors.New("a source (file or URL) is required")
	}
	data, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	curation := openapi.Curation{
		Include: s.Include, Exclude: s.Exclude, Tags: s.Tags,
		Rename: s.Rename, Describe: s.Describe,
		Output: openapi.OutputMode(s.OutputSchema),
	}
	for _, id := range slices.Sorted(maps.Keys(s.Operations)) {
		o := s.Operations[id]
		if o == nil {
			continue
		}
		if err := o.check(); err != nil {
			return nil, &openapi.OperationError{ID: id, Err: err}
		}
		t, _ := o.tuning() // checked
		if curation.Tune == nil {
			curation.Tune = make(map[string]*openapi.Tuning)
		}
		curation.Tune[id] = t
	}
	imp, key, reused, err := importDocument(data, &curation, h.Headers)
	if err != nil {
		return nil, err
	}
	h.importKeys = append(h.importKeys, key)
	return &importedDocument{src: s, documentImport: imp, key: key, reused: reused}, nil
}

// loadOpenAPI reads every document, and without an upstream of the
// handler's own takes the documents' server URL as it.
func (h *Handler) loadOpenAPI(ctx context.Context) ([]*importedDocument, error) {
	var docs []*importedDocument
	for _, s := range h.OpenAPI {
		if s == nil {
			continue
		}
		d, err := s.load(ctx, h)
		if err != nil {
			return nil, s.located(fmt.Errorf("openapi %s: %w", s.shown(), err))
		}
		docs = append(docs, d)
	}
	if h.Upstream != "" || len(docs) == 0 {
		return docs, nil
	}
	server := docs[0].serverURL
	for _, d := range docs[1:] {
		if d.serverURL != server {
			return nil, d.src.located(fmt.Errorf("openapi %s names the server %q, openapi %s the server %q; set upstream",
				docs[0].src.shown(), server, d.src.shown(), d.serverURL))
		}
	}
	first := docs[0].src
	if server == "" {
		return nil, first.located(fmt.Errorf("openapi %s names no server; set upstream", first.shown()))
	}
	if strings.ContainsAny(server, "{}") {
		// The upstream is run through the replacer per call; no text of a
		// document may be, or {env.*} in it would be sent to its server.
		return nil, first.located(fmt.Errorf("openapi %s: the document's server %q holds a brace, which would be read as a placeholder; set upstream", first.shown(), server))
	}
	if u, err := url.Parse(server); err != nil || !u.IsAbs() || u.Host == "" {
		return nil, first.located(fmt.Errorf("openapi %s: the document's server %q is not an absolute http(s) URL; set upstream", first.shown(), server))
	}
	h.Upstream = server
	return docs, nil
}

// importTools makes each tool of docs a provisioned tool of h beside the
// inline ones, and logs what each document gave. A name given twice is an
// error naming both places.
func (h *Handler) importTools(docs []*importedDocument, add func(*provisioned)) error {
	from := make(map[string]string) // tool name -> where it was defined
	for name := range h.tools {
		from[name] = "defined inline"
	}
	for _, d := range docs {
		for i := range d.res.Tools {
			t := &d.res.Tools[i]
			where := fmt.Sprintf("imported from %s (operation %s)", d.src.shown(), operationName(t))
			if other, taken := from[t.Name]; taken {
				return d.src.located(fmt.Errorf("tool %q is defined twice: %s, and %s", t.Name, other, where))
			}
			from[t.Name] = where
			p, err := importedTool(t, h)
			if err != nil {
				return d.src.located(fmt.Errorf("openapi %s: tool %q (operation %s): %w", d.src.shown(), t.Name, operationName(t), err))
			}
			if o := d.src.Operations[t.OperationID]; o != nil && t.OperationID != "" {
				o.apply(p)
			}
			add(p)
		}
		h.logImport(d)
	}
	if len(h.Tools) == 0 && len(docs) > 0 && len(from) == 0 {
		return docs[0].src.located(noTool(docs[0]))
	}
	return nil
}

// noTool is the error of a handler whose only tools were to come from
// documents that gave none, about the first of them.
func noTool(d *importedDocument) error {
	return fmt.Errorf("mcp needs at least one tool: openapi %s gives none, as each operation it selects (%d) is skipped, with the reason logged",
		d.src.shown(), d.res.Selected)
}

func operationName(t *openapi.Tool) string {
	if t.OperationID != "" {
		return t.OperationID
	}
	return t.Method + " " + t.Path
}

// importedTool is t as a provisioned tool: its operation as openapi built
// it, its definition's text for the per-call placeholder checks.
func importedTool(t *openapi.Tool, h *Handler) (*provisioned, error) {
	if err := checkToolName(t.Name); err != nil {
		return nil, err
	}
	if err := t.Operation.CheckBase(h.base); err != nil {
		return nil, err
	}
	ann := &Annotations{ReadOnly: t.Annotations.ReadOnly, Destructive: t.Annotations.Destructive, Idempotent: t.Annotations.Idempotent}
	p := newProvisioned(t.Operation, &t.Definition, t.Description, t.Title, ann)
	p.timeout = h.Timeout
	p.refs = addRefs(p.refs, h.Upstream)
	return p, nil
}

// logImport says what a document gave: one line with the counts, the
// reasons counted by kind, then a line for each skipped operation and
// each parameter left out, with its reason, up to maxSkippedLogged.
func (h *Handler) logImport(d *importedDocument) {
	kinds := make(map[string]int)
	dropped := 0
	for _, s := range d.res.Skipped {
		kinds[reasonKind(s.Reason)]++
	}
	for _, t := range d.res.Tools {
		for _, r := range t.Dropped {
			kinds[reasonKind(r)]++
			dropped++
		}
	}
	h.logger.Info("openapi document imported",
		zap.String("source", d.src.shown()),
		zap.String("version", d.version),
		zap.Bool("reused", d.reused),
		zap.Int("tools", len(d.res.Tools)),
		zap.Int("skipped", len(d.res.Skipped)),
		zap.Int("parameters_left_out", dropped),
		zap.Any("reasons", kinds),
		zap.Int("selected", d.res.Selected),
		zap.Int("operations", d.res.Operations))
	logged := 0
	more := func() bool {
		if logged++; logged <= maxSkippedLogged {
			return true
		}
		if logged == maxSkippedLogged+1 {
			h.logger.Info("more openapi operations skipped or parameters left out",
				zap.String("source", d.src.shown()), zap.Int("count", len(d.res.Skipped)+dropped-maxSkippedLogged))
		}
		return false
	}
	for _, s := range d.res.Skipped {
		if !more() {
			return
		}
		h.logger.Info("openapi operation skipped",
			zap.String("source", d.src.shown()),
			zap.String("operation", s.OperationID),
			zap.String("method", s.Method),
			zap.String("path", s.Path),
			zap.String("reason", s.Reason))
	}
	for _, t := range d.res.Tools {
		for _, r := range t.Dropped {
			if !more() {
				return
			}
			h.logger.Info("openapi parameter left out",
				zap.String("source", d.src.shown()),
				zap.String("tool", t.Name),
				zap.String("operation", t.OperationID),
				zap.String("reason", r))
		}
	}
}

// reasonKind is a reason without the names in it ("cookie parameter
// \"session\": ..." is cookie parameter "…": ...), so that reasons count
// by kind.
func reasonKind(reason string) string {
	return quotedName.ReplaceAllString(reason, `"…"`)
}

var quotedName = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|\([^)]*\)`)

// releaseAfter is the size of documents past which their import gives
// memory back at once: parsing GitHub's 13 MB document needs about
// 300 MiB more than its tools keep, which the runtime would otherwise
// hold for minutes.
const releaseAfter = 4 << 20

// releaseImport returns to the operating system the memory the parse of
// docs needed, once nothing refers to them, when they were large. It
// costs one garbage collection, once per load.
func releaseImport(docs []*importedDocument) {
	size := 0
	for _, d := range docs {
		if !d.reused {
			size += d.size
		}
	}
	clear(docs)
	if size >= releaseAfter {
		debug.FreeOSMemory()
	}
}
