package caddymcp

import (
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestBadJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string // the JSON is the argument of the line "schema"
		want  string // "" for valid JSON
	}{
		{
			name:  "valid",
			input: "schema `{\"type\": \"object\"}`",
		},
		{
			name:  "one line",
			input: "\nschema `{\"type\": \"object\",}`",
			want:  "line 1, column 19: invalid character '}' looking for beginning of object key string, at Testfile:2",
		},
		{
			name:  "backquotes over lines",
			input: "schema `{\n  \"type\": \"object\"\n  \"properties\": {}\n}`",
			want:  "line 3, column 3: invalid character '\"' after object key:value pair, at Testfile:3",
		},
		{
			name:  "heredoc",
			input: "schema <<JSON\n\t{\n\t\t\"type\": object\n\t}\n\tJSON",
			want:  "line 2, column 10: invalid character 'o' looking for beginning of value, at Testfile:3",
		},
		{
			name:  "cut short",
			input: "schema `{\"type\": \"obj`",
			want:  "line 1, column 13: unexpected end of JSON input, at Testfile:1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := caddyfile.NewTestDispenser(tc.input)
			d.Next()
			if !d.NextArg() {
				t.Fatal("no argument")
			}
			err := badJSON(d, d.Val())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("no error, want %q", tc.want)
			case tc.want != "" && err.Error() != tc.want:
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}
