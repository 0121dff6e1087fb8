package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// workerdClient posts a script to the parent worker over a connection of
// its own, as the MCP sessions do.
type workerdClient struct {
	raw rawConn
	req []byte
}

func newWorkerdClient(base, code string) (*workerdClient, error) {
	u, err := url.Parse(base + "/execute")
	if err != nil {
		return nil, err
	}
	c := &workerdClient{}
	c.raw.addr = u.Host
	c.req = rawRequest(u, http.MethodPost, [][2]string{{"Content-Type", "text/javascript"}}, []byte(code))
	return c, nil
}

var errorMark = []byte(`"error"`)

func (c *workerdClient) call(ctx context.Context) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(60 * time.Second)
	}
	status, body, err := c.raw.do(c.req, deadline)
	if err != nil {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return context.DeadlineExceeded
		}
		return err
	}
	if status != http.StatusOK || !strings.Contains(string(body), `"result"`) || strings.Contains(string(body), string(errorMark)) {
		return fmt.Errorf("workerd answered %d: %.300s", status, body)
	}
	return nil
}

// installWorkerd runs npm ci in dir and returns workerd's binary and
// version, or why it cannot run here.
func installWorkerd(dir string) (bin, version, reason string) {
	bin = filepath.Join(dir, "node_modules", "workerd", "bin", "workerd")
	if !installed(dir) {
		log.Printf("  installing workerd and @cloudflare/codemode (npm ci in bench/workerd)")
		if out, err := exec.Command("npm", "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error").CombinedOutput(); err != nil {
			return "", "", fmt.Sprintf("npm ci in bench/workerd failed: %v: %.300s", err, out)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		return "", "", "workerd's npm package brought no binary for this platform: " + err.Error()
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return "", "", fmt.Sprintf("workerd --version failed: %v: %.300s", err, out)
	}
	return bin, strings.TrimSpace(string(out)), ""
}

// installed tells whether npm ci ran in dir since its lock file last
// changed (npm ci replaces node_modules whole: 160 MB for workerd).
func installed(dir string) bool {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	done, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	return err == nil && !done.ModTime().Before(lock.ModTime())
}

// startWorkerd runs workerd with the parent worker on a free port; the
// parent's hold tool reaches the holder at holdAddr.
func startWorkerd(s *settings, dir, bin, holdAddr string) (*server, string, error) {
	addr := freeAddr()
	srv, err := start("workerd", dir, s.work, addr, nil, bin, "serve", "config.capnp", "--experimental",
		"--socket-addr", "http="+addr, "--external-addr", "hold="+holdAddr)
	if err != nil {
		return nil, "", err
	}
	return srv, "http://" + addr, nil
}
