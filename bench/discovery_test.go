package main

import (
	"strings"
	"testing"
)

// TestDiscoveryTarget: the target is met only under 2%, and says the
// bytes of both modes.
func TestDiscoveryTarget(t *testing.T) {
	for _, c := range []struct {
		search   int
		met      bool
		measured string
	}{
		{1839, true, "0.03% (1839 vs 5497843 bytes, 1221 tools)"},
		{110000, false, "2.00% (110000 vs 5497843 bytes, 1221 tools)"},
	} {
		r := &report{ms: []Measurement{{Config: "reverse_proxy", Protocol: "REST", Concurrency: 16, Throughput: 8000}},
			discovery: &DiscoveryBytes{Tools: 1221, AllBytes: 5497843, SearchBytes: c.search}}
		var found []target
		for _, tg := range r.targets() {
			if strings.Contains(tg.name, "discovery search") {
				found = append(found, tg)
			}
		}
		if len(found) != 1 || found[0].met != c.met || found[0].measured != c.measured {
			t.Errorf("search %d bytes: %+v, want %q met=%v", c.search, found, c.measured, c.met)
		}
	}
}

func TestFoundNames(t *testing.T) {
	names, err := foundNames([]byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":{"tools":[{"name":"a"},{"name":"b"}]}}}`))
	if err != nil || strings.Join(names, ",") != "a,b" {
		t.Errorf("%v %v", names, err)
	}
	if _, err := foundNames([]byte(`not json`)); err == nil {
		t.Error("no error for an answer that is not JSON")
	}
	if n, err := countTools([]byte(`{"result":{"tools":[{},{},{}]}}`)); n != 3 || err != nil {
		t.Errorf("countTools: %d %v", n, err)
	}
}
