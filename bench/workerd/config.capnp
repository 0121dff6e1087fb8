# workerd's configuration for the benchmark: one parent worker with a
# worker loader, served on the address given by --socket-addr http=...
# (workerd serve config.capnp --experimental --socket-addr http=127.0.0.1:PORT
# --external-addr hold=127.0.0.1:PORT).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "parent", worker = .parent),
    # the bench's holder, given by --external-addr hold=HOST:PORT
    (name = "hold", external = (address = "127.0.0.1:1", http = ())),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "parent")],
);

const parent :Workerd.Worker = (
  modules = [
    (name = "parent.js", esModule = embed "parent.js"),
    (name = "index.js", esModule = embed "node_modules/@cloudflare/codemode/dist/index.js"),
    (name = "run-code-Q3Jh6Dcu.js", esModule = embed "node_modules/@cloudflare/codemode/dist/run-code-Q3Jh6Dcu.js"),
    (name = "resolve-34dC47Il.js", esModule = embed "node_modules/@cloudflare/codemode/dist/resolve-34dC47Il.js"),
    (name = "truncate-Dd-VZZYQ.js", esModule = embed "node_modules/@cloudflare/codemode/dist/truncate-Dd-VZZYQ.js"),
    (name = "base-BqhlNCSH.js", esModule = embed "node_modules/@cloudflare/codemode/dist/base-BqhlNCSH.js"),
    (name = "json-schema-types-D_m9tVnI.js", esModule = embed "node_modules/@cloudflare/codemode/dist/json-schema-types-D_m9tVnI.js"),
    (name = "acorn", esModule = embed "node_modules/acorn/dist/acorn.mjs"),
  ],
  compatibilityDate = "2025-06-01",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [(name = "LOADER", workerLoader = ()), (name = "HOLD", service = "hold")],
);
