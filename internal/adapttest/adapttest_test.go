package adapttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	_ "github.com/caddyserver/caddy/v2/modules/standard" // the directives adapted here
)

func TestGoldens(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"a.caddyfiletest": ":80 {\r\n\trespond hi\r\n}\r\n\r\n----------\r\n{\"apps\":{}}\r\n",
		"b.caddyfiletest": "\n:80 {\n\tnope\n}\n----------\nunrecognized directive\n\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := Goldens(t, filepath.Join(dir, "*.caddyfiletest"))
	want := []Golden{
		{File: filepath.Join(dir, "a.caddyfiletest"), Input: ":80 {\n\trespond hi\n}\n", Expected: `{"apps":{}}`},
		{File: filepath.Join(dir, "b.caddyfiletest"), Input: ":80 {\n\tnope\n}\n", Expected: "unrecognized directive"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("goldens %q, want %q", got, want)
	}
	if !got[0].WantsJSON() || got[1].WantsJSON() {
		t.Error("WantsJSON tells a config from an error wrongly")
	}
}

func TestHandlersAndNames(t *testing.T) {
	doc := Adapt(t, ":8080 {\n\trespond /x 200\n\treverse_proxy 127.0.0.1:9\n\troute /r {\n\t\theader X-A b\n\t}\n}\n")
	names := HandlerNames(doc)
	if want := []string{"subroute", "headers", "static_response", "reverse_proxy"}; !slices.Equal(names, want) {
		t.Errorf("handler names %q, want %q", names, want)
	}
	found := Handlers(doc, "static_response")
	if len(found) != 1 {
		t.Fatalf("static_response handlers %s", found)
	}
	var h map[string]any
	if err := json.Unmarshal(found[0], &h); err != nil {
		t.Fatal(err)
	}
	if _, ok := h["handler"]; ok || h["status_code"] != float64(200) {
		t.Errorf("handler JSON %s, want status_code 200 and no handler key", found[0])
	}
}
