#!/usr/bin/env python3
"""Time how fast the wheel starts through uvx: `--version` and the first initialize.

Usage (after scripts/wheel_smoke.sh has built the wheel and installed uv):
    python3 scripts/bench_wheel_start.py [--runs N] [--uvx PATH] [WHEEL]

WHEEL defaults to the one dist/alayasiki_mcp-*.whl. uvx defaults to
target/wheel-venv/bin/uvx (Scripts\\uvx.exe on Windows), else uvx on PATH.

For each of N runs (default 5) it makes an empty uv cache, then times:
  cold  `uvx --from WHEEL alayasiki-mcp --version` in the empty cache (uv
        unpacks the wheel and creates the tool environment), then
  warm  the same command again (the environment is cached: what an MCP client
        pays at every start after the first);
and, in another empty cache, the time from spawning `uvx ... --data-dir DIR`
to the server's answer to initialize, cold and then warm. The bare binary
from the wheel, started directly, is timed as the baseline. Prints the wheel
size and the median and range of each figure. uv runs offline and never
downloads a Python. Python 3.10+ standard library only.
"""
import argparse
import glob
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2024-11-05", "capabilities": {},
               "clientInfo": {"name": "bench_wheel_start", "version": "1"}},
}


def die(msg):
    print(f"bench_wheel_start: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def uv_env(cache):
    env = dict(os.environ)
    env.update(UV_CACHE_DIR=str(cache), UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never", UV_NO_CONFIG="1")
    return env


def time_version(cmd, env):
    start = time.perf_counter()
    done = subprocess.run(cmd + ["--version"], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=300)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or not done.stdout.startswith(b"alayasiki-mcp "):
        die(f"{' '.join(cmd)} --version failed ({done.returncode}): {done.stderr.decode(errors='replace')[-300:]}")
    return elapsed


def time_initialize(cmd, env, data_dir):
    """Seconds from spawn to the initialize answer; then a clean shutdown."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd + ["--data-dir", str(data_dir)], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    code = proc.wait(timeout=60)
    try:
        answer = json.loads(line)
    except ValueError:
        die(f"initialize answer is not JSON: {line[:200]!r}")
    if answer.get("id") != 1 or "result" not in answer or code != 0:
        die(f"initialize failed (exit {code}): {line[:200]!r}")
    return elapsed


def fmt(samples):
    ms = [s * 1000 for s in samples]
    return f"median {statistics.median(ms):7.1f} ms  (min {min(ms):.1f}, max {max(ms):.1f}, n={len(ms)})"


def default_uvx():
    venv = ROOT / "target" / "wheel-venv"
    for candidate in (venv / "bin" / "uvx", venv / "Scripts" / "uvx.exe"):
        if candidate.exists():
            return str(candidate)
    found = shutil.which("uvx")
    if not found:
        die("uvx not found: run scripts/wheel_smoke.sh first or pass --uvx")
    return found


def main():
    ap = argparse.ArgumentParser(description="Time uvx cold and warm starts of the alayasiki-mcp wheel.")
    ap.add_argument("wheel", nargs="?", help="the wheel (default: the one dist/alayasiki_mcp-*.whl)")
    ap.add_argument("--runs", type=int, default=5, help="samples per figure (default 5)")
    ap.add_argument("--uvx", help="uvx executable")
    args = ap.parse_args()
    if args.wheel is None:
        found = sorted(glob.glob(str(ROOT / "dist" / "alayasiki_mcp-*.whl")))
        if len(found) != 1:
            die(f"expected one dist/alayasiki_mcp-*.whl, found {len(found)}: pass the wheel")
        args.wheel = found[0]
    wheel = pathlib.Path(args.wheel).resolve()
    uvx = args.uvx or default_uvx()
    cmd = [uvx, "--from", str(wheel), "alayasiki-mcp"]

    work = pathlib.Path(tempfile.mkdtemp(prefix="alayasiki-bench-"))
    try:
        # The bare executable from the wheel: the baseline uvx adds to.
        with zipfile.ZipFile(wheel) as zf:
            exe = [n for n in zf.namelist() if ".data/scripts/alayasiki-mcp" in n]
            if len(exe) != 1:
                die(f"wheel has {len(exe)} alayasiki-mcp executables in .data/scripts")
            bare = work / pathlib.PurePosixPath(exe[0]).name
            bare.write_bytes(zf.read(exe[0]))
            bare.chmod(0o755)
            binary_size = zf.getinfo(exe[0]).file_size

        figures = {k: [] for k in ("bare --version", "uvx --version, cold cache", "uvx --version, warm",
                                   "bare initialize", "uvx initialize, cold cache", "uvx initialize, warm")}
        env = dict(os.environ)
        for i in range(args.runs):
            figures["bare --version"].append(time_version([str(bare)], env))
            figures["bare initialize"].append(time_initialize([str(bare)], env, work / f"bare-{i}"))

            cache = work / f"cache-v{i}"
            figures["uvx --version, cold cache"].append(time_version(cmd, uv_env(cache)))
            figures["uvx --version, warm"].append(time_version(cmd, uv_env(cache)))

            cache = work / f"cache-i{i}"
            figures["uvx initialize, cold cache"].append(time_initialize(cmd, uv_env(cache), work / f"ic-{i}"))
            figures["uvx initialize, warm"].append(time_initialize(cmd, uv_env(cache), work / f"iw-{i}"))

        uv_version = subprocess.run([uvx, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"wheel: {wheel.name}: {wheel.stat().st_size / 1048576:.2f} MiB "
              f"(executable {binary_size / 1048576:.2f} MiB unpacked); {uv_version}")
        for name, samples in figures.items():
            print(f"{name:28s} {fmt(samples)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
