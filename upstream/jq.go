package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/itchyny/gojq"
)

// Bounds of one run of a jq filter. A filter is configuration, but its
// input is whatever the upstream answered, so a filter that loops or
// multiplies its input must end with an error, not take the process down.
const (
	// jqMaxOutputs bounds the values a filter emits (repeat(.) emits
	// forever).
	jqMaxOutputs = 10000
	// jqMaxOutput bounds the JSON of its outputs together.
	jqMaxOutput = 16 << 20
	// jqHeapGrowth bounds how far the heap may grow while a filter that has
	// run longer than jqWatchAfter goes on: [range(1e9)] builds one value
	// in memory before it emits anything, which no bound on outputs sees.
	// The heap is the process's, so this is a safety net, not a quota.
	jqHeapGrowth = 256 << 20
	jqWatchAfter = 5 * time.Millisecond
	jqWatchEvery = 2 * time.Millisecond
)

// jqFilter is a compiled jq filter, safe for concurrent use.
type jqFilter struct {
	code    *gojq.Code
	regexps *jqRegexps
}

// compileJq compiles a jq filter. A syntax error says where, by line and
// column, and shows the text up to that point. The filter sees no
// environment ($ENV and env are empty) and no other input.
func compileJq(src string) (*jqFilter, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("jq: the filter is empty")
	}
	q, err := gojq.Parse(src)
	if err != nil {
		var perr *gojq.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("jq: %v %s", err, parsePosition(src, perr))
		}
		return nil, fmt.Errorf("jq: %v", err)
	}
	regexps := &jqRegexps{}
	opts := append(regexps.options(), gojq.WithEnvironLoader(func() []string { return nil }))
	code, err := gojq.Compile(withPrelude(q), opts...)
	if err != nil {
		return nil, fmt.Errorf("jq: %v", err)
	}
	return &jqFilter{code: code, regexps: regexps}, nil
}

// CheckJq reports whether src is a jq filter that compiles, with the
// error NewOperation would give for it.
func CheckJq(src string) error {
	_, err := compileJq(src)
	return err
}

// parsePosition places a parse error: gojq's offset is the end of the
// token it stopped at.
func parsePosition(src string, perr *gojq.ParseError) string {
	end := min(max(perr.Offset, 0), len(src))
	start := max(end-len(perr.Token), 0)
	line := 1 + strings.Count(src[:start], "\n")
	col := 1 + utf8.RuneCountInString(src[strings.LastIndexByte(src[:start], '\n')+1:start])
	shown := src[:end]
	const context = 40
	if len(shown) > context {
		cut := len(shown) - context
		for cut < len(shown) && !utf8.RuneStart(shown[cut]) {
			cut++
		}
		shown = "…" + shown[cut:]
	}
	return fmt.Sprintf("at line %d, column %d (after %q)", line, col, shown)
}

// run applies the filter to a valid JSON document. One output is that
// value's JSON; none or several are a JSON array of them. Numbers pass
// through as the upstream wrote them unless the filter computes with
// them. ctx is the tool's deadline.
func (f *jqFilter) run(ctx context.Context, doc []byte) ([]byte, error) {
	in := newJSONTree(compactJSON(bytes.TrimSpace(doc))).decode(0)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	defer close(stop)
	watch := time.AfterFunc(jqWatchAfter, func() { watchJqHeap(stop, cancel) })
	defer watch.Stop()

	var outputs [][]byte
	size := 0
	iter := f.code.RunWithContext(ctx, in, &jqRun{ctx: ctx})
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break // halt: the outputs so far are the result
			}
			return nil, jqError(ctx, err)
		}
		if len(outputs) == jqMaxOutputs {
			return nil, fmt.Errorf("the filter emits more than %d values", jqMaxOutputs)
		}
		out, err := gojq.Marshal(v)
		if err != nil {
			return nil, err
		}
		if size += len(out); size > jqMaxOutput {
			return nil, fmt.Errorf("the filter's output passes %d MiB", jqMaxOutput>>20)
		}
		outputs = append(outputs, out)
	}
	if len(outputs) == 1 {
		return outputs[0], nil
	}
	joined := make([]byte, 0, size+len(outputs)+2)
	joined = append(joined, '[')
	for i, out := range outputs {
		if i > 0 {
			joined = append(joined, ',')
		}
		joined = append(joined, out...)
	}
	return append(joined, ']'), nil
}

// errHeapGrowth is the cause watchJqHeap cancels a run with.
var errHeapGrowth = fmt.Errorf("the filter was stopped: memory grew by more than %d MiB while it ran", jqHeapGrowth>>20)

// jqError says why a run ended: its context's cause, when that ended it.
func jqError(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		return errors.New("the tool's timeout ended before the filter did")
	}
	return cause
}

// watchJqHeap cancels a long run once the heap has grown by jqHeapGrowth
// since it started watching, until stop is closed.
func watchJqHeap(stop <-chan struct{}, cancel context.CancelCauseFunc) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	base := sample[0].Value.Uint64()
	tick := time.NewTicker(jqWatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			metrics.Read(sample)
			if now := sample[0].Value.Uint64(); now > base && now-base > jqHeapGrowth {
				cancel(errHeapGrowth)
				return
			}
		}
	}
}
