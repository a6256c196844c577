#!/usr/bin/env python3
"""The official MCP conformance suite against the real alayasiki-api.

Runs `@modelcontextprotocol/conformance` (pinned below) over Streamable HTTP
against `alayasiki-api` on a fresh data directory, for both requirement
sets (2025-11-25, session-based; 2026-07-28, stateless), and fails unless
every scenario this server can be judged on passes whole:

- transport, lifecycle, discovery, errors, caching and security scenarios
  (SCENARIOS below) must pass every check;
- `server-stateless` must pass every check except the four that call the
  suite's diagnostic tools (`test_missing_capability`,
  `test_streaming_elicitation`, `test_logging_tool`): a memory server has
  no such tools, and those checks report "not testable" without them.

The scenarios that call the suite's fixture tools, resources and prompts
(`test_simple_text`, `test://static-text`, `test_simple_prompt`, sampling,
elicitation, input-required results, ...) are run too and their summary is
printed, but they judge a fixture server, not this one, and do not fail
the run.

The suite sends no Authorization header, so a loopback proxy
(scripts/conformance/bearer_proxy.mjs) adds a real HS256 token; Host and
Origin pass through unchanged, so the DNS-rebinding checks see what the
suite sent, and the server allows only the proxy's own host and origin.

Node 22 and the suite are installed into target/conformance from the npm
registry at pinned versions, once.

    python3 scripts/conformance.py [--binary target/debug/alayasiki-api]
"""

import argparse
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import api_process

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE_VERSION = "22.23.3"
SUITE_VERSION = "0.2.0-alpha.12"
PREFIX = os.path.join(ROOT, "target", "conformance", f"node-{NODE_VERSION}-suite-{SUITE_VERSION}")
NODE = os.path.join(PREFIX, "node_modules", "node", "bin", "node")
SUITE = os.path.join(PREFIX, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
PROXY = os.path.join(ROOT, "scripts", "conformance", "bearer_proxy.mjs")
SECRET = "conformance-secret-0123456789abcdef-0123"

# Scenarios that judge the server itself, by requirement set.
SCENARIOS = {
    "2025-11-25": [
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "logging-set-level",
        "tools-list",
        "resources-list",
        "prompts-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ],
    "2026-07-28": [
        "server-stateless",
        "tools-list",
        "resources-list",
        "prompts-list",
        "server-sse-multiple-streams",
        "sep-2164-resource-not-found",
        "caching",
        "dns-rebinding-protection",
        "input-required-result-unsupported-methods",
        "http-header-validation",
    ],
}

# Checks that need the suite's diagnostic tools (see the docstring).
NEEDS_DIAGNOSTIC_TOOLS = {
    "sep-2575-server-rejects-undeclared-capability",
    "sep-2575-missing-capability-http-400",
    "sep-2575-http-server-no-independent-requests-on-stream",
    "sep-2575-server-no-log-without-loglevel",
}


def install():
    if os.path.exists(NODE) and os.path.exists(SUITE):
        return
    shutil.rmtree(PREFIX, ignore_errors=True)
    os.makedirs(PREFIX)
    with open(os.path.join(PREFIX, "package.json"), "w") as f:
        f.write('{"name": "alayasiki-conformance", "private": true}\n')
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--save-exact", "--loglevel=error",
         f"node@{NODE_VERSION}", f"@modelcontextprotocol/conformance@{SUITE_VERSION}"],
        cwd=PREFIX, check=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def token():
    return api_process.token(SECRET, "conformance", "conformance", ["admin"], ttl_s=3600)


def wait_for_port(port, proc, what):
    deadline = time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"conformance: {what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"conformance: {what} did not listen on {port}")


def run_scenario(url, revision, scenario, out):
    cmd = [NODE, SUITE, "server", "--url", url, "--scenario", scenario,
           "--spec-version", revision, "-o", out]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    found = glob.glob(os.path.join(out, f"server-{scenario}-*", "checks.json"))
    if not found:
        print(run.stdout[-2000:], run.stderr[-2000:])
        return [{"id": "no-result", "status": "FAILURE", "errorMessage": "no checks.json"}]
    with open(sorted(found)[-1]) as f:
        return json.load(f)


def run_requirements(url, revision, out):
    cmd = [NODE, SUITE, "server", "--url", url, "--requirements", revision, "-o", out]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    summary = run.stdout.split("=== SUMMARY ===")[-1]
    total = [line for line in summary.splitlines() if line.startswith("Total:")]
    return run.returncode, total[0] if total else "no summary"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "debug", "alayasiki-api"))
    ap.add_argument("--skip-full", action="store_true",
                    help="skip the full requirement sets (fixture scenarios), printed only")
    args = ap.parse_args()
    if not os.path.exists(args.binary):
        subprocess.run(["cargo", "build", "--locked", "--bin", "alayasiki-api"], cwd=ROOT, check=True)
    install()

    server_port, proxy_port = free_port(), free_port()
    data = tempfile.mkdtemp(prefix="alayasiki-conformance-")
    out = tempfile.mkdtemp(prefix="alayasiki-conformance-results-")
    env = dict(os.environ,
               ALAYASIKI_JWT_SECRET=SECRET,
               ALAYASIKI_LOG="warn",
               # The suite sends a few hundred requests in bursts.
               ALAYASIKI_API_RATE="10000", ALAYASIKI_API_BURST="10000",
               ALAYASIKI_API_ALLOWED_HOSTS=f"127.0.0.1:{proxy_port},localhost:{proxy_port}",
               ALAYASIKI_MCP_ALLOWED_ORIGINS=f"http://127.0.0.1:{proxy_port},http://localhost:{proxy_port}")
    env.pop("ALAYASIKI_DATA_DIR", None)
    server = subprocess.Popen([args.binary, "--bind", f"127.0.0.1:{server_port}", "--data-dir", data],
                              env=env, stdout=subprocess.DEVNULL)
    proxy = subprocess.Popen([NODE, PROXY, str(proxy_port), str(server_port)],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    proxy.stdin.write(token())
    proxy.stdin.close()
    failures = []
    try:
        wait_for_port(server_port, server, "alayasiki-api")
        wait_for_port(proxy_port, proxy, "the bearer proxy")
        url = f"http://127.0.0.1:{proxy_port}/mcp"
        for revision, scenarios in SCENARIOS.items():
            for scenario in scenarios:
                checks = run_scenario(url, revision, scenario, os.path.join(out, revision))
                bad = [c for c in checks
                       if c["status"] not in ("SUCCESS", "INFO", "SKIPPED")
                       and c["id"] not in NEEDS_DIAGNOSTIC_TOOLS]
                waived = [c for c in checks if c["id"] in NEEDS_DIAGNOSTIC_TOOLS]
                passed = sum(c["status"] == "SUCCESS" for c in checks)
                mark = "ok  " if not bad else "FAIL"
                note = f", {len(waived)} need the suite's diagnostic tools" if waived else ""
                print(f"{mark} {revision} {scenario}: {passed}/{len(checks)} checks passed{note}")
                for c in bad:
                    print(f"       {c['id']} {c['status']}: {(c.get('errorMessage') or '')[:300]}")
                    failures.append((revision, scenario, c["id"]))
        if not args.skip_full:
            for revision in SCENARIOS:
                rc, total = run_requirements(url, revision, os.path.join(out, f"full-{revision}"))
                print(f"info {revision} full requirement set (fixture scenarios included): {total}")
    finally:
        for p in (proxy, server):
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    if failures:
        sys.exit(f"conformance: {len(failures)} check(s) failed")
    print("conformance: every scenario that judges this server passed")


if __name__ == "__main__":
    main()
