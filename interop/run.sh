#!/usr/bin/env bash
# Interop: the official MCP conformance suite and real MCP clients against a
# Caddy built from this checkout. `.ci/run` calls it after the Go tests.
#
# It installs interop/package.json from its lock file (Node 22, the suite,
# the TypeScript SDK, the Inspector CLI and server-everything), builds
# ./cmd/caddy, starts server-everything and Caddy with fixtures/Caddyfile on
# free ports of 127.0.0.1, runs the checks below, prints a report, stops
# everything it started, and exits non-zero on any unexpected failure:
#
#	conformance  the suite's server scenarios against the `mcp` and the
#	             `codemode` endpoint, each with its expected-failures file, in
#	             two eras: 0.1.16 with --suite all (2025-11-25), and the
#	             prerelease 0.2.0-alpha.12 (installed as conformance-next) with
#	             --requirements 2026-07-28, the scenarios that revision requires
#	sdk          clients/sdk-client.mjs: the TypeScript SDK 1.x client on both
#	             endpoints, and codemode over server-everything and the `mcp` endpoint
#	sdk2         clients/sdk2-client.mjs: the TypeScript SDK 2.x client
#	             (@modelcontextprotocol/client) on both endpoints, in
#	             versionNegotiation auto and pinned to 2026-07-28
#	inspector    clients/inspector-cli.mjs: the Inspector CLI, tools/list and
#	             tools/call on both endpoints
#	oauth        clients/oauth-client.mjs: the TypeScript SDK's own OAuth client
#	             against endpoints with an authorization block (a second Caddy,
#	             fixtures/oauth.Caddyfile), with oidc-provider (oauth/provider.mjs)
#	             as the authorization server: registration, authorization code
#	             with PKCE, step-up, client credentials, introspection, revocation
#
# Logs go to a temporary folder, shown on failure and removed at the end
# (INTEROP_KEEP=1 keeps it).
set -euo pipefail

cd "$(dirname "$0")"
interop=$(pwd)
root=$(cd .. && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/caddy-mcp-interop.XXXXXX")
started=() # pids of the servers started here, each the leader of its own process group
run_start=$SECONDS

stop_started() {
	local pid i
	for pid in "${started[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${started[@]}"; do
		for i in $(seq 50); do # 5 s, then SIGKILL
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	started=()
}

on_exit() {
	local status=$?
	trap - EXIT INT TERM
	stop_started
	if [ "$status" -ne 0 ]; then
		for log in "$work"/*.log; do
			[ -f "$log" ] || continue
			printf '\n-- last lines of %s\n' "$(basename "$log")"
			tail -n 40 "$log"
		done
	fi
	if [ "${INTEROP_KEEP:-}" = 1 ]; then
		echo "logs kept in $work"
	else
		rm -rf "$work"
	fi
	exit "$status"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step() { printf '\n== %s\n' "$*"; }
fail() { echo "interop: $*" >&2; exit 1; }

# start <name> <command...>: starts a server in a process group of its own,
# with output to $work/<name>.log, and sets $pid.
start() {
	local name=$1
	shift
	setsid "$@" >"$work/$name.log" 2>&1 </dev/null &
	pid=$!
	started+=("$pid")
}

# free_port prints a port of 127.0.0.1 that is free right now.
free_port() {
	node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# wait_listening <name> <pid> <port>: waits up to 30 s for a listener on
# 127.0.0.1:<port>, failing early if the process exits.
wait_listening() {
	local name=$1 pid=$2 port=$3 i
	for i in $(seq 300); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || fail "$name exited before it listened on 127.0.0.1:$port"
		sleep 0.1
	done
	fail "$name did not listen on 127.0.0.1:$port within 30 s"
}

# loopback_only <name> <port>: every listening socket on <port> is bound to
# 127.0.0.1 (/proc/net/tcp holds it as 0100007F; tcp6 must have none).
loopback_only() {
	local name=$1 port=$2 hex tables=() t
	hex=$(printf '%04X' "$port")
	for t in /proc/net/tcp /proc/net/tcp6; do
		if [ -r "$t" ]; then tables+=("$t"); fi
	done
	[ "${#tables[@]}" -gt 0 ] || return 0
	if awk -v p="$hex" '$4 == "0A" { split($2, a, ":"); if (a[2] == p && a[1] != "0100007F") found = 1 } END { exit !found }' \
		"${tables[@]}"; then
		fail "$name listens on port $port on an address other than 127.0.0.1"
	fi
}

version_of() { node -p "require('./node_modules/$1/package.json').version"; }

for tool in go npm flock setsid timeout sha256sum awk; do
	command -v "$tool" >/dev/null || fail "$tool is not on PATH"
done

step "npm ci in interop/ (from package-lock.json)"
t0=$SECONDS
# The same lock as internal/everythingtest, which also installs here.
lock="${TMPDIR:-/tmp}/caddy-mcp-npm-$(printf '%s' "$interop" | sha256sum | cut -c1-16).lock"
(
	flock -w 600 9 || fail "could not lock $lock within 10 minutes"
	npm ci --no-audit --no-fund --loglevel=error
) 9>"$lock"
export PATH="$interop/node_modules/node/bin:$interop/node_modules/.bin:$PATH"
node_version=$(node --version)
case $node_version in
v22.*) ;;
*) fail "node from interop/node_modules is $node_version, want v22" ;;
esac
echo "node $node_version, $((SECONDS - t0)) s"

step "go build ./cmd/caddy"
t0=$SECONDS
(cd "$root" && go build -o "$work/caddy" ./cmd/caddy)
echo "$((SECONDS - t0)) s"

step "start server-everything and Caddy on 127.0.0.1"
everything_port=$(free_port)
caddy_port=$(free_port)
while [ "$caddy_port" = "$everything_port" ]; do caddy_port=$(free_port); done
# A small environment: server-everything has a tool (get-env) that returns
# its environment. loopback.cjs pins its listener to 127.0.0.1.
start everything env -i PATH="$PATH" HOME="$work" NODE_ENV=production PORT="$everything_port" \
	node --require "$interop/loopback.cjs" \
	"$interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp
wait_listening server-everything "$pid" "$everything_port"
loopback_only server-everything "$everything_port"
everything_url="http://127.0.0.1:$everything_port/mcp"

(cd fixtures && CADDY_PORT=$caddy_port EVERYTHING_URL=$everything_url \
	XDG_CONFIG_HOME="$work/xdg" XDG_DATA_HOME="$work/xdg" \
	"$work/caddy" validate --config Caddyfile >"$work/caddy-validate.log" 2>&1) ||
	fail "caddy validate --config fixtures/Caddyfile failed"
cd fixtures
start caddy env CADDY_PORT="$caddy_port" EVERYTHING_URL="$everything_url" \
	XDG_CONFIG_HOME="$work/xdg" XDG_DATA_HOME="$work/xdg" \
	"$work/caddy" run --config Caddyfile
cd "$interop"
wait_listening caddy "$pid" "$caddy_port"
loopback_only caddy "$caddy_port"
mcp_url="http://127.0.0.1:$caddy_port/mcp"
code_url="http://127.0.0.1:$caddy_port/code"
echo "server-everything $everything_url"
echo "mcp               $mcp_url"
echo "codemode          $code_url (backends: everything, shop = the mcp endpoint)"

results=() # "<name>|<ok or FAILED>|<detail>"
failures=0
record() {
	results+=("$1|$2|$3")
	if [ "$2" != ok ]; then failures=$((failures + 1)); fi
}

# Both suites install a `conformance` bin; each is run by its own path.
conformance_legacy=(node "$interop/node_modules/@modelcontextprotocol/conformance/dist/index.js")
conformance_next=(node "$interop/node_modules/conformance-next/dist/index.js")
next_requirements=2026-07-28
# The server scenarios the requirement set scores, one a line, for the report.
"${conformance_next[@]}" list --requirements "$next_requirements" |
	awk '/^Server scenarios/ { on = 1; next } /^$/ { on = 0 } on && /^  - / { print $2 }' >"$work/required-$next_requirements.txt"
[ -s "$work/required-$next_requirements.txt" ] || fail "conformance-next list --requirements $next_requirements named no server scenario"

# run_conformance <label> <url> <expected-failures file> [<requirement set>]:
# without a requirement set, 0.1.16 with --suite all; with one, the
# prerelease with --requirements.
run_conformance() {
	local label=$1 url=$2 expected=$3 era=${4:-} name out rc=0 summary counts
	local suite=("${conformance_legacy[@]}" server --suite all) scored=() shown="$1 endpoint"
	name="conformance, $label endpoint"
	if [ -n "$era" ]; then
		suite=("${conformance_next[@]}" server --requirements "$era")
		scored=("$work/required-$era.txt")
		name="conformance $era, $label endpoint"
		shown="$label endpoint, $era"
		label="$label-$era"
	fi
	out="$work/conformance-$label"
	step "$name ($url)"
	# The suite's exit code covers its own baseline check; the report also
	# requires a reason for every expected failure, and with a requirement
	# set holds the scenarios it does not score to the file as well.
	timeout 300 "${suite[@]}" --url "$url" --expected-failures "$expected" -o "$out" \
		>"$work/conformance-$label.log" 2>&1 || rc=$?
	if ! summary=$(node conformance-report.mjs "$shown" "$out" "$expected" "${scored[@]}") && [ "$rc" -eq 0 ]; then
		rc=1
	fi
	echo "$summary"
	counts=$(tail -n 1 <<<"$summary" | sed 's/^conformance, [^:]*: //')
	if [ "$rc" -ne 0 ]; then
		sed -n '/=== SUMMARY ===/,$p' "$work/conformance-$label.log"
		record "$name" FAILED "$counts (suite exit $rc)"
	else
		record "$name" ok "$counts"
	fi
}

# run_client <label> <command...>: runs a client check script from clients/.
run_client() {
	local label=$1 rc=0 last
	shift
	step "$label"
	(cd clients && timeout 180 "$@") >"$work/client.out" 2>&1 || rc=$?
	cat "$work/client.out"
	last=$(tail -n 1 "$work/client.out" | sed 's/^[^:]*: //')
	if [ "$rc" -eq 0 ]; then
		record "$label" ok "$last"
	else
		record "$label" FAILED "exit $rc; $last"
	fi
}

run_conformance mcp "$mcp_url" expected-failures/mcp.yml
run_conformance codemode "$code_url" expected-failures/codemode.yml
run_conformance mcp "$mcp_url" "expected-failures/mcp-$next_requirements.yml" "$next_requirements"
run_conformance codemode "$code_url" "expected-failures/codemode-$next_requirements.yml" "$next_requirements"
run_client "TypeScript SDK client, mcp endpoint" node sdk-client.mjs mcp "$mcp_url"
run_client "TypeScript SDK client, codemode endpoint" node sdk-client.mjs codemode "$code_url"
run_client "TypeScript SDK client, codemode over server-everything and the mcp endpoint" \
	node sdk-client.mjs everything "$code_url"
run_client "TypeScript SDK 2.x client, mcp endpoint" node sdk2-client.mjs mcp "$mcp_url"
run_client "TypeScript SDK 2.x client, codemode endpoint" node sdk2-client.mjs codemode "$code_url"
run_client "MCP Inspector CLI, both endpoints" node inspector-cli.mjs "$mcp_url" "$code_url"

step "start oidc-provider and Caddy with fixtures/oauth.Caddyfile on 127.0.0.1"
oauth_t0=$SECONDS
oauth_port=$(free_port)
oauth_caddy_port=$(free_port)
while [ "$oauth_caddy_port" = "$oauth_port" ]; do oauth_caddy_port=$(free_port); done
issuer="http://127.0.0.1:$oauth_port"
oauth_base="http://127.0.0.1:$oauth_caddy_port"
secret() { node -p 'require("crypto").randomBytes(24).toString("base64url")'; }
introspect_secret=$(secret)
service_secret=$(secret)
start oidc-provider env -i PATH="$PATH" HOME="$work" OAUTH_PORT="$oauth_port" \
	MCP_RESOURCE="$oauth_base/mcp" CODE_RESOURCE="$oauth_base/code" OPAQUE_RESOURCE="$oauth_base/opaque" \
	INTROSPECT_SECRET="$introspect_secret" SERVICE_SECRET="$service_secret" \
	node "$interop/oauth/provider.mjs"
wait_listening oidc-provider "$pid" "$oauth_port"
loopback_only oidc-provider "$oauth_port"
cd fixtures
oauth_env=(CADDY_PORT="$oauth_caddy_port" OAUTH_PORT="$oauth_port" INTROSPECT_SECRET="$introspect_secret"
	XDG_CONFIG_HOME="$work/xdg-oauth" XDG_DATA_HOME="$work/xdg-oauth")
env "${oauth_env[@]}" "$work/caddy" validate --config oauth.Caddyfile >"$work/caddy-oauth-validate.log" 2>&1 ||
	fail "caddy validate --config fixtures/oauth.Caddyfile failed"
start caddy-oauth env "${oauth_env[@]}" "$work/caddy" run --config oauth.Caddyfile
cd "$interop"
wait_listening caddy-oauth "$pid" "$oauth_caddy_port"
loopback_only caddy-oauth "$oauth_caddy_port"
echo "oidc-provider     $issuer"
echo "oauth endpoints   $oauth_base/mcp, $oauth_base/code, $oauth_base/opaque (introspection)"

run_client "oauth, TypeScript SDK client with oidc-provider" \
	env SERVICE_SECRET="$service_secret" node oauth-client.mjs "$oauth_base" "$issuer"
echo "oauth: servers started and checked in $((SECONDS - oauth_t0)) s"

stop_started

step "interop report"
echo "conformance suite $(version_of @modelcontextprotocol/conformance), server scenarios (--suite all), and $(version_of conformance-next), --requirements $next_requirements;"
echo "TypeScript SDK $(version_of @modelcontextprotocol/sdk), Streamable HTTP: protocol 2025-11-25, and 2025-06-18, 2025-03-26, 2024-11-05;"
echo "TypeScript SDK 2.x client $(version_of @modelcontextprotocol/client): versionNegotiation auto and pinned to $next_requirements;"
echo "Inspector CLI $(version_of @modelcontextprotocol/inspector-cli); server-everything $(version_of @modelcontextprotocol/server-everything); oidc-provider $(version_of oidc-provider); node $node_version"
for r in "${results[@]}"; do
	IFS='|' read -r label status detail <<<"$r"
	printf '  %-6s  %s: %s\n' "$status" "$label" "$detail"
done
echo "  (go)    mcp-go's client, protocols 2025-11-25 and 2026-07-28: covered by the Go tests (go test ./...)"
echo "took $((SECONDS - run_start)) s"
echo "interop: $((${#results[@]} - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
