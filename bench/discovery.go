package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DiscoveryBytes is what a model reads first of GitHub's whole API: the
// tools/list answer with discovery all and with discovery search, and the
// search_tools answer to one question.
type DiscoveryBytes struct {
	Tools                 int
	AllBytes, SearchBytes int // tools/list answers, 2025-11-25
	Query                 string
	AnswerBytes           int
	Found                 []string
}

// discoveryQuery is the question asked of search_tools.
const discoveryQuery = "list the open issues of a repository"

// githubDocument is GitHub's published OpenAPI document, as the tests
// install it (npm ci in openapi/testdata).
func githubDocument(root string) (string, error) {
	dir := filepath.Join(root, "openapi", "testdata")
	doc := filepath.Join(dir, "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")
	if _, err := os.Stat(doc); err == nil {
		return doc, nil
	}
	log.Printf("installing GitHub's OpenAPI document (npm ci in openapi/testdata)")
	if out, err := exec.Command("npm", "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error").CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	return doc, nil
}

// discoveryBytes starts a Caddy with GitHub's document imported into two
// mcp handlers, one with discovery all and one with discovery search, and
// counts the bytes of their answers over HTTP.
func discoveryBytes(s *settings) (*DiscoveryBytes, error) {
	log.Printf("discovery bytes: GitHub's document with discovery all and search")
	doc, err := githubDocument(s.repoRoot)
	if err != nil {
		return nil, err
	}
	addr := freeAddr()
	var site strings.Builder
	for _, mode := range []string{"all", "search"} {
		fmt.Fprintf(&site, "\tmcp /%s {\n\t\tupstream https://api.github.com\n\t\tdiscovery %s\n\t\topenapi %s\n\t}\n", mode, mode, doc)
	}
	file := filepath.Join(s.work, "discovery.Caddyfile")
	if err := os.WriteFile(file, []byte(caddyGlobal+fmt.Sprintf("http://%s {\n%s}\n", addr, site.String())), 0o644); err != nil {
		return nil, err
	}
	srv, err := start("caddy discovery", s.work, s.work, addr, nil, s.caddy, "run", "--config", file, "--adapter", "caddyfile")
	if err != nil {
		return nil, err
	}
	defer srv.stop()

	ctx := context.Background()
	d := &DiscoveryBytes{Query: discoveryQuery}
	for _, mode := range []string{"all", "search"} {
		sess, err := newSession(ctx, Target{URL: "http://" + addr + "/" + mode, Protocol: "2025-11-25"})
		if err != nil {
			return nil, err
		}
		list, err := answer(ctx, sess, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if err != nil {
			return nil, fmt.Errorf("discovery %s: %w", mode, err)
		}
		if mode == "all" {
			d.AllBytes = len(list)
			if d.Tools, err = countTools(list); err != nil {
				return nil, err
			}
			continue
		}
		d.SearchBytes = len(list)
		query, _ := json.Marshal(discoveryQuery)
		found, err := answer(ctx, sess, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":`+string(query)+`}}}`)
		if err != nil {
			return nil, fmt.Errorf("search_tools: %w", err)
		}
		d.AnswerBytes = len(found)
		if d.Found, err = foundNames(found); err != nil {
			return nil, err
		}
	}
	log.Printf("  tools/list of %d tools: %d bytes (all), %d bytes (search), %.2f%%; search_tools %q: %d bytes, %s",
		d.Tools, d.AllBytes, d.SearchBytes, 100*d.share(), d.Query, d.AnswerBytes, strings.Join(d.Found, ", "))
	return d, nil
}

func (d *DiscoveryBytes) share() float64 { return float64(d.SearchBytes) / float64(d.AllBytes) }

// discoveryTarget is the target for the bytes.
func discoveryTarget(d *DiscoveryBytes) target {
	return target{"tools/list of GitHub's whole API with discovery search is under 2% of the bytes of discovery all",
		fmt.Sprintf("%.2f%% (%d vs %d bytes, %d tools)", 100*d.share(), d.SearchBytes, d.AllBytes, d.Tools), d.share() < 0.02}
}

// answer is the endpoint's answer to one request, as the client reads it.
func answer(ctx context.Context, sess *session, body string) ([]byte, error) {
	resp, b, err := sess.post(ctx, body, nil)
	if err != nil {
		return nil, err
	}
	var rpc struct {
		Error json.RawMessage `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &rpc) != nil || rpc.Error != nil {
		return nil, fmt.Errorf("answer %d: %.300s", resp.StatusCode, b)
	}
	return b, nil
}

func countTools(list []byte) (int, error) {
	var a struct {
		Result struct{ Tools []json.RawMessage } `json:"result"`
	}
	if err := json.Unmarshal(list, &a); err != nil {
		return 0, fmt.Errorf("tools/list answer: %w", err)
	}
	return len(a.Result.Tools), nil
}

func foundNames(found []byte) ([]string, error) {
	var a struct {
		Result struct {
			StructuredContent struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(found, &a); err != nil {
		return nil, fmt.Errorf("search_tools answer: %w", err)
	}
	var names []string
	for _, t := range a.Result.StructuredContent.Tools {
		names = append(names, t.Name)
	}
	return names, nil
}
