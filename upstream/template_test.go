package upstream

import (
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	isArg := func(n string) bool { return n == "owner" || n == "repo" }
	tests := []struct {
		tmpl    string
		slots   []string
		wantErr string
	}{
		{tmpl: "/repos/{owner}/{repo}", slots: []string{"owner", "repo"}},
		{tmpl: "/static"},
		{tmpl: "/t/{env.TENANT}/{owner}", slots: []string{"owner"}},
		{tmpl: "/x/{missing}", wantErr: "{missing}"},
		{tmpl: "/x/{owner", wantErr: "unclosed"},
		{tmpl: "/x/{}", wantErr: "empty"},
		{tmpl: `/x/\{literal\}`},
	}
	for _, tt := range tests {
		tpl, err := ParseTemplate(tt.tmpl, isArg)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", tt.tmpl, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.tmpl, err)
			continue
		}
		if strings.Join(tpl.Slots(), ",") != strings.Join(tt.slots, ",") {
			t.Errorf("%s: slots %v, want %v", tt.tmpl, tpl.Slots(), tt.slots)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"Bearer {env.TOKEN}", []string{"env.TOKEN"}},
		{"{env.A}:{file./run/b}{http.request.header.X}", []string{"env.A", "file./run/b", "http.request.header.X"}},
		{`\{env.A\} {env.B}`, []string{"env.B"}},
		{"plain", nil},
		{"{} {unclosed", nil},
	} {
		if got := Placeholders(tt.text); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestExpandPath(t *testing.T) {
	t.Parallel()
	tpl, err := ParseTemplate("/t/{env.TENANT}/files/{path}", func(n string) bool { return n == "path" })
	if err != nil {
		t.Fatal(err)
	}
	repl := mapReplacer{"env.TENANT": "acme", "env.KEY": "s3cret"}
	tests := []struct {
		value   any
		want    string
		wantErr string
	}{
		{value: "readme.md", want: "/t/acme/files/readme.md"},
		{value: "docs/a b.md", want: "/t/acme/files/docs%2Fa%20b.md"},
		{value: "{env.KEY}", want: "/t/acme/files/%7Benv.KEY%7D"},
		{value: 42.0, want: "/t/acme/files/42"},
		{value: true, want: "/t/acme/files/true"},
		{value: "..", wantErr: "not allowed"},
		{value: ".", wantErr: "not allowed"},
		{value: "a/../../etc", wantErr: "not allowed"},
		{value: `a\..\b`, wantErr: "not allowed"},
		{value: "..\u0000", wantErr: "control character"},
		{value: "..\t", wantErr: "control character"},
		{value: "a\x7fb", wantErr: "control character"},
		{value: "a\u0085b", wantErr: "control character"},
		{value: "a\u009fb", wantErr: "control character"},
		{value: "a\xffb", wantErr: "not UTF-8"},
		{value: "\uff0e\uff0e", wantErr: "segment"},
		{value: "\uff0e", wantErr: "segment"},
		{value: ".\uff0e", wantErr: "segment"},
		{value: "\u2025", wantErr: "segment"},
		{value: "a\uff0f\uff0e\uff0e", wantErr: "segment"},
		{value: "a\uff3c\uff0e\uff0e\uff3cb", wantErr: "segment"},
		{value: "\uff0e\uff0e\uff0e", want: "/t/acme/files/%EF%BC%8E%EF%BC%8E%EF%BC%8E"},
		{value: "caf\u00e9 \ufffd", want: "/t/acme/files/caf%C3%A9%20%EF%BF%BD"},
		{value: "", wantErr: "empty"},
		{value: []any{"a"}, wantErr: "arrays and objects"},
		{value: nil, wantErr: "required"},
	}
	for _, tt := range tests {
		got, err := tpl.ExpandPath(map[string]any{"path": tt.value}, repl)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want one containing %q", tt.value, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: got %q, %v; want %q", tt.value, got, err, tt.want)
		}
	}
}

// TestExpandPathWithTheTextBeside: a value that is harmless alone can make
// a dot segment with the template's own text once a server decodes the
// path; the template's own dot segments are left alone.
func TestExpandPathWithTheTextBeside(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tmpl, value, want string
	}{
		{"/files/.{name}", "\uff0e", ""},
		{"/files/\uff0e{name}/x", "\uff0e", ""},
		{"/files/{name}./meta", "x/", ""},
		{"/x/..{name}", "/", ""},
		{"/raw/%{code}", "2e", ""},
		{"/raw/%{code}", "41", "/raw/%41"},
		{"/archive/{name}.tar", "x", "/archive/x.tar"},
		{"/v1/../v2/{name}", "x", "/v1/../v2/x"},
		{"/v1/../v2/{name}.", "x/", ""},
		{"/raw/%{code}", "00", "control"},
		{"/raw/%{code}", "7f", "control"},
		{"/raw/%{code}", "85", "control"},
		{"/raw/%00/{name}", "x", "/raw/%00/x"},
	} {
		tpl, err := ParseTemplate(tt.tmpl, func(string) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		got, err := tpl.ExpandPath(map[string]any{"name": tt.value, "code": tt.value}, nil)
		switch {
		case tt.want == "" && (err == nil || !strings.Contains(err.Error(), "segment")):
			t.Errorf("%s with %q: %q, %v; want a dot segment refused", tt.tmpl, tt.value, got, err)
		case tt.want == "control" && (err == nil || !strings.Contains(err.Error(), "control character")):
			t.Errorf("%s with %q: %q, %v; want a control character refused", tt.tmpl, tt.value, got, err)
		case tt.want != "" && tt.want != "control" && (err != nil || got != tt.want):
			t.Errorf("%s with %q: %q, %v; want %q", tt.tmpl, tt.value, got, err, tt.want)
		}
	}
}
