package gosdktest

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestMCPEndpoint: the Go SDK's client, in each era, lists the `mcp`
// endpoint's tools and calls them: a call that works, one whose arguments
// break the schema, one the upstream fails, and progress.
func TestMCPEndpoint(t *testing.T) {
	ends := startCaddy(t)
	for _, era := range eras {
		t.Run(era.want, func(t *testing.T) {
			c := connect(t, ends.base+"/bin", era.ask, era.want)

			if names := c.toolNames(t); !slices.Equal(names, []string{"anything", "status"}) {
				t.Errorf("tools %v, want anything and status", names)
			}

			res := c.call(t, "anything", map[string]any{"word": "tea", "n": 7}, "")
			var echoed struct {
				Args map[string][]string `json:"args"`
			}
			if err := json.Unmarshal([]byte(text(res)), &echoed); err != nil {
				t.Errorf("anything: %v: %s", err, text(res))
			}
			if res.IsError || !slices.Equal(echoed.Args["word"], []string{"tea"}) || !slices.Equal(echoed.Args["n"], []string{"7"}) {
				t.Errorf("anything: isError %v, args %v, text %s", res.IsError, echoed.Args, text(res))
			}

			res = c.call(t, "anything", map[string]any{"word": "tea", "n": "seven"}, "")
			// The endpoint checks the arguments against the tool's schema
			// and answers a tool error the model can act on.
			if want := "invalid arguments for tool anything:\n- /n: expected integer, but got string"; !res.IsError || text(res) != want {
				t.Errorf("n: \"seven\": isError %v, %s", res.IsError, text(res))
			}

			res = c.call(t, "status", map[string]any{"code": 500}, "")
			if want := "GET /status/500: upstream answered 500 Internal Server Error"; !res.IsError || text(res) != want {
				t.Errorf("status 500: isError %v, %s", res.IsError, text(res))
			}

			res = c.call(t, "anything", map[string]any{"word": "progress"}, "tok-"+era.want)
			// The endpoint reports that the call started (progress 0); the
			// answer follows on the same stream. The Go SDK hands
			// notifications to the handler apart from the answers, so the
			// notification may be handled after the call returned.
			notes := c.waitNotes(1)
			if res.IsError || len(notes) != 1 || notes[0].ProgressToken != "tok-"+era.want || notes[0].Message != "calling anything" {
				t.Errorf("progress: isError %v, %d notifications, want one for the token", res.IsError, len(notes))
			}
		})
	}
}
