package caddymcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-mcp/caddy-mcp/openapi"
)

// imports keeps what documents gave, by their bytes and what the config
// makes of them, for as long as a loaded config uses it: a reload whose
// document and options did not change takes the tools already built
// instead of parsing the document again (GitHub's took 3-5 s of CPU and
// grew the process by half on each reload).
var imports = caddy.NewUsagePool()

// documentImport is one document's import: its tools built and compiled,
// safe to share between configs (each provisions its own tool list from
// them), and what logs and the upstream need of the document. The parsed
// document is not kept.
type documentImport struct {
	version   string
	serverURL string
	res       *openapi.Result
	size      int // bytes of the document
}

// Destruct lets the usage pool drop an import.
func (*documentImport) Destruct() error { return nil }

// importKey names an import: the document's bytes, the curation (its
// tuning included) and the handler's headers, which the tools' requests
// carry.
func importKey(data []byte, c *openapi.Curation, header http.Header) string {
	h := sha256.New()
	h.Write(data)
	opts, _ := json.Marshal(struct {
		C *openapi.Curation
		H http.Header
	}{c, header})
	h.Write([]byte{0})
	h.Write(opts)
	return hex.EncodeToString(h.Sum(nil))
}

// importDocument returns the import of data under c, from the pool when
// a config holds it (reused), else parsed and mapped now and put there.
// The caller releases the key with imports.Delete when its config is
// done.
func importDocument(data []byte, c *openapi.Curation, header http.Header) (imp *documentImport, key string, reused bool, err error) {
	key = importKey(data, c, header)
	v, reused, err := imports.LoadOrNew(key, func() (caddy.Destructor, error) {
		doc, err := openapi.Load(data)
		if err != nil {
			return nil, err
		}
		res, err := doc.Tools(*c, header)
		if err != nil {
			return nil, err
		}
		return &documentImport{version: doc.Version, serverURL: doc.ServerURL, res: res, size: len(data)}, nil
	})
	if err != nil {
		return nil, "", false, err
	}
	return v.(*documentImport), key, reused, nil
}
