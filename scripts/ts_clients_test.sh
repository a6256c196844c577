#!/usr/bin/env bash
# Real TypeScript clients against the real alayasiki-api over Streamable HTTP
# (`/mcp`), each with an HS256 bearer token and its own server on a free port
# with a fresh data directory, each running tools/list, alayasiki_ingest,
# alayasiki_query (evidence must hold the text and the document id) and
# resources/read of alayasiki://documents/<id>, and checking on the wire
# which protocol revision it spoke:
#
# - scripts/ts_clients/sdk_v1.mjs: the official TypeScript SDK v1
#   (@modelcontextprotocol/sdk), Client + StreamableHTTPClientTransport:
#   2025-11-25 with a session;
# - scripts/ts_clients/client_v2.mjs: the v2 client package
#   (@modelcontextprotocol/client) in its default mode (2025-11-25), `auto`
#   and pinned to 2026-07-28 (both stateless 2026-07-28);
# - scripts/ts_clients/inspector_http.mjs: the MCP Inspector CLI with
#   `--transport http --header "Authorization: Bearer ..."`, default era
#   (2025-11-25) and `--protocol-era modern` (2026-07-28).
#
# Node (the npm package `node` carries the binary) and the SDKs are installed
# at pinned versions into target/ts-clients/, the Inspector into the prefix
# scripts/inspector_strict.sh uses; a second run installs nothing.
# API_BINARY tests another build; TS_CLIENTS_DEBUG=1 prints every exchange.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=22.23.3
SDK_V1_VERSION=1.32.2
CLIENT_V2_VERSION=2.4.0
INSPECTOR_VERSION=2.12.0

# install PREFIX PACKAGE@VERSION...: an exact, reproducible install, once.
install() {
  local prefix=$1
  shift
  local pkg ok=1
  for pkg in "$@"; do
    local name=${pkg%@*} version=${pkg##*@}
    local manifest="$prefix/node_modules/$name/package.json"
    [ -f "$manifest" ] && grep -q "\"version\": \"$version\"" "$manifest" || ok=0
  done
  [ -x "$prefix/node_modules/node/bin/node" ] &&
    [ "$("$prefix/node_modules/node/bin/node" --version)" = "v$NODE_VERSION" ] || ok=0
  [ "$ok" = 1 ] && return 0
  command -v npm >/dev/null || { echo "ts_clients_test: npm not found (needed once, to install Node $NODE_VERSION)"; exit 1; }
  rm -rf "$prefix"
  mkdir -p "$prefix"
  printf '{"name": "alayasiki-ts-clients", "private": true}\n' >"$prefix/package.json"
  (cd "$prefix" && npm install --no-audit --no-fund --save-exact --loglevel=error "node@$NODE_VERSION" "$@")
  for pkg in "$@"; do
    grep -q "\"version\": \"${pkg##*@}\"" "$prefix/node_modules/${pkg%@*}/package.json" ||
      { echo "ts_clients_test: install did not give $pkg"; exit 1; }
  done
}

clients="$PWD/target/ts-clients/node-$NODE_VERSION-sdk-$SDK_V1_VERSION-client-$CLIENT_V2_VERSION"
install "$clients" "@modelcontextprotocol/sdk@$SDK_V1_VERSION" "@modelcontextprotocol/client@$CLIENT_V2_VERSION"
# The same prefix and package.json name as scripts/inspector_strict.sh, so
# the two share one install.
inspector="$PWD/target/inspector/node-$NODE_VERSION-inspector-$INSPECTOR_VERSION"
if ! [ -f "$inspector/node_modules/@modelcontextprotocol/inspector/package.json" ] ||
  ! grep -q "\"version\": \"$INSPECTOR_VERSION\"" "$inspector/node_modules/@modelcontextprotocol/inspector/package.json" ||
  ! [ -x "$inspector/node_modules/node/bin/node" ]; then
  rm -rf "$inspector"
  mkdir -p "$inspector"
  printf '{"name": "alayasiki-inspector-strict", "private": true}\n' >"$inspector/package.json"
  (cd "$inspector" && npm install --no-audit --no-fund --save-exact --loglevel=error \
    "node@$NODE_VERSION" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION")
fi

binary="${API_BINARY:-$PWD/target/debug/alayasiki-api}"
[ -x "$binary" ] || cargo build --locked --bin alayasiki-api

node="$clients/node_modules/node/bin/node"
[ "$("$node" --version)" = "v$NODE_VERSION" ] || { echo "ts_clients_test: $node is not Node $NODE_VERSION"; exit 1; }
export TS_CLIENTS_PREFIX="$clients"
"$node" scripts/ts_clients/sdk_v1.mjs "$binary"
"$node" scripts/ts_clients/client_v2.mjs "$binary"
# Node 22 first on PATH: the Inspector's launcher and what it spawns use it.
PATH="$inspector/node_modules/.bin:$PATH" \
  "$node" scripts/ts_clients/inspector_http.mjs "$binary" "$inspector/node_modules/.bin/mcp-inspector"
echo "ts_clients_test: TypeScript SDK v1 $SDK_V1_VERSION, v2 client $CLIENT_V2_VERSION and Inspector $INSPECTOR_VERSION (Node $NODE_VERSION) passed over Streamable HTTP"
