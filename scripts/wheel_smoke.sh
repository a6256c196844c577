#!/usr/bin/env bash
# Build the PyPI wheel of alayasiki-mcp and smoke-test it through uvx.
#
#   bash scripts/wheel_smoke.sh
#
# 1. Installs maturin and uv (pinned in scripts/requirements-wheel.txt) from
#    PyPI into target/wheel-venv.
# 2. Builds the platform wheel: maturin build --release --locked, run in mcp/
#    (maturin reads mcp/pyproject.toml there; its manifest-path points at the
#    root Cargo.toml) into dist/, after removing older alayasiki_mcp wheels.
# 3. Checks that the Cargo, Python package and wheel versions agree
#    (scripts/check_versions.py).
# 4. Runs scripts/smoke_mcp_wheel.py through `uvx --from <wheel> alayasiki-mcp`,
#    with uv's cache in target/uv-cache, offline (the wheel has no
#    dependencies, so uv resolves nothing but the wheel) and never downloading
#    a Python (it uses the python3 found here).
# Prints the time each phase took. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

command -v python3 >/dev/null || { echo "wheel_smoke: python3 not found" >&2; exit 1; }
command -v cargo >/dev/null || { echo "wheel_smoke: cargo not found: install a Rust toolchain" >&2; exit 1; }

now() { python3 -c 'import time; print(time.monotonic())'; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }

t0=$(now)
venv=target/wheel-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r scripts/requirements-wheel.txt
t1=$(now)

mkdir -p dist
rm -f dist/alayasiki_mcp-*.whl
(cd mcp && "$root/$venv/bin/maturin" build --release --locked --out "$root/dist")
shopt -s nullglob
wheels=(dist/alayasiki_mcp-*.whl)
shopt -u nullglob
if [ "${#wheels[@]}" -ne 1 ]; then
  echo "wheel_smoke: expected one dist/alayasiki_mcp-*.whl after the build, found ${#wheels[@]}" >&2
  exit 1
fi
wheel=${wheels[0]}
t2=$(now)

python3 scripts/check_versions.py --wheel "$wheel"

export UV_CACHE_DIR="$root/target/uv-cache"
export UV_OFFLINE=1
export UV_PYTHON_DOWNLOADS=never
export UV_NO_CONFIG=1
python3 scripts/smoke_mcp_wheel.py -- "$venv/bin/uvx" --from "$wheel" alayasiki-mcp
t3=$(now)

size=$(python3 -c "import os, sys; print(f'{os.path.getsize(sys.argv[1]) / 1048576:.1f} MiB')" "$wheel")
echo "wheel_smoke: OK: $wheel ($size); tools $(secs "$t0" "$t1")s, build $(secs "$t1" "$t2")s, checks and smoke $(secs "$t2" "$t3")s"
