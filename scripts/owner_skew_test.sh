#!/usr/bin/env bash
# Version skew of the local memory owner, through real binaries of two
# versions: an owner of another version serves a client of this one, stops
# once its last client has left, and the next client starts an owner of this
# version that has every write (tests/local_owner.rs,
# an_owner_of_another_version_is_drained_and_replaced).
#
# The owner and its clients compare CARGO_PKG_VERSION in their hellos, so the
# other version is this crate built a second time with "-skew" appended to
# its version (a manifest copy in target/owner-skew/crate whose sources are
# links to this checkout's), as the binary alayasiki-mcp-skew, into the same
# target directory: the dependencies are reused and only the crate compiles
# again. That costs about 2.5 minutes in a debug build on 2 cores (seconds
# once built, with incremental builds), which is why scripts/test does not
# run it: run it by hand after changing src/transport/local/.
#
# Usage: scripts/owner_skew_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
other="$version-skew"
copy=target/owner-skew/crate
mkdir -p "$copy"
for part in src sql scripts tests; do
  ln -sfn "$root/$part" "$copy/$part"
done
# The package's version, and the stdio binary under a name of its own so
# that this build's target/debug/alayasiki-mcp is left alone.
sed -e "0,/^version = \"$version\"\$/s//version = \"$other\"/" \
    -e '/^\[\[bin\]\]$/{n;s/^name = "alayasiki-mcp"$/name = "alayasiki-mcp-skew"/}' \
    -e 's/^default-run = "alayasiki-mcp"$/default-run = "alayasiki-mcp-skew"/' \
    Cargo.toml > "$copy/Cargo.toml"
sed -e "/^name = \"alayasiki-mcp\"\$/{n;s/^version = \"$version\"\$/version = \"$other\"/}" \
    Cargo.lock > "$copy/Cargo.lock"

started=$SECONDS
cargo build --locked --manifest-path "$copy/Cargo.toml" --target-dir target \
  --bin alayasiki-mcp-skew
echo "owner_skew_test: alayasiki-mcp $other built in $((SECONDS - started)) s"
skew_bin="$root/target/debug/alayasiki-mcp-skew"
"$skew_bin" --version | grep -qx "alayasiki-mcp $other" || {
  echo "owner_skew_test: FAIL: $skew_bin is not version $other" >&2
  exit 1
}

ALAYASIKI_OTHER_VERSION_BIN="$skew_bin" cargo test --locked --test local_owner \
  an_owner_of_another_version_is_drained_and_replaced -- --ignored --exact
echo "owner_skew_test: passed"
