#!/usr/bin/env bash
# The MCP Inspector's portability check of our tool schemas.
#
# Runs `npx @modelcontextprotocol/inspector --cli --strict` with
# `--method tools/list` against target/debug/alayasiki-mcp (on a fresh data
# directory) and fails if the Inspector reports any finding (its --strict
# report prints "Warning:" or "Error:" lines on stderr, and exits 6 on an
# error) or exits non-zero, or if the listing does not hold the tools.
#
# The Inspector needs Node >= 22.19, so both are installed into target/ from
# the npm registry at pinned versions (the npm package `node` carries the
# Node binary); a second run finds them there and installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=22.23.3
INSPECTOR_VERSION=2.12.0

prefix="target/inspector/node-$NODE_VERSION-inspector-$INSPECTOR_VERSION"
node_bin="$prefix/node_modules/node/bin/node"
inspector_pkg="$prefix/node_modules/@modelcontextprotocol/inspector/package.json"
installed() {
  [ -x "$node_bin" ] && [ -f "$inspector_pkg" ] &&
    [ "$("$node_bin" --version)" = "v$NODE_VERSION" ] &&
    grep -q "\"version\": \"$INSPECTOR_VERSION\"" "$inspector_pkg"
}
if ! installed; then
  command -v npm >/dev/null || { echo "inspector_strict: npm not found (needed once, to install Node $NODE_VERSION)"; exit 1; }
  rm -rf "$prefix"
  mkdir -p "$prefix"
  printf '{"name": "alayasiki-inspector-strict", "private": true}\n' >"$prefix/package.json"
  (cd "$prefix" && npm install --no-audit --no-fund --save-exact --loglevel=error \
    "node@$NODE_VERSION" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION")
  installed || { echo "inspector_strict: install did not give Node $NODE_VERSION and Inspector $INSPECTOR_VERSION"; exit 1; }
fi

# INSPECT_BINARY checks another build (e.g. an older one, to see a finding).
binary="${INSPECT_BINARY:-$PWD/target/debug/alayasiki-mcp}"
[ -x "$binary" ] || cargo build --locked --bin alayasiki-mcp

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Node 22 first on PATH: npx, the Inspector and anything it spawns use it.
export PATH="$PWD/$prefix/node_modules/.bin:$PATH"
status=0
(cd "$prefix" && npx --no-install @modelcontextprotocol/inspector --cli --strict \
  --method tools/list --format json -e ALAYASIKI_LOG=error \
  -- "$binary" --data-dir "$work/data") >"$work/stdout" 2>"$work/stderr" || status=$?

fail() {
  echo "inspector_strict: $1"
  echo "--- stderr"; cat "$work/stderr"
  echo "--- stdout"; head -c 4000 "$work/stdout"; echo
  exit 1
}
[ "$status" -eq 0 ] || fail "the Inspector exited with status $status"
if grep -Eiq 'warning|error|portability' "$work/stderr"; then
  fail "the Inspector reported findings"
fi
# The listing must be there and hold every tool, or the check saw nothing.
tools=$(node -e '
  const out = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (out.schemaFindings) { console.error(JSON.stringify(out.schemaFindings)); process.exit(1); }
  console.log(out.result.tools.map((t) => t.name).join(" "));
' "$work/stdout") || fail "no tools/list result, or schema findings in it"
for expected in alayasiki_ingest alayasiki_query alayasiki_status alayasiki_forget \
  alayasiki_memory_write alayasiki_memory_read alayasiki_memory_promote \
  alayasiki_memory_delete alayasiki_update; do
  case " $tools " in
    *" $expected "*) ;;
    *) fail "tools/list lacks $expected (got: $tools)" ;;
  esac
done
echo "inspector_strict: Inspector $INSPECTOR_VERSION --strict (Node $NODE_VERSION): no findings for $(wc -w <<<"$tools") tools"
