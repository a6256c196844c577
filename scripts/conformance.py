#!/usr/bin/env python3
"""The official MCP conformance suite against alayasiki's Streamable HTTP.

Runs `@modelcontextprotocol/conformance` (pinned below) over Streamable
HTTP for both requirement sets (2025-11-25, session-based; 2026-07-28,
stateless) against two servers built from the same protocol and transport
code, and fails on any check of either that does not pass:

- the conformance fixture server (tests/conformance_fixtures, a test
  binary: `transport::http::serve_with` with the suite's fixture catalog)
  runs every server scenario of each requirement set (`--requirements`,
  the scored ones and those the set runs unscored as pending: SSE polling,
  JSON Schema 2020-12, the SEP-2243 header checks) and must pass every
  check of every one of them. Scenarios a set runs as `not_scored:
  extension` (the tasks extension, SEP-2663) are reported, not judged:
  optional by definition, and neither server offers tasks.
- the real alayasiki-api runs every scenario that judges the transport,
  lifecycle, discovery, errors, caching and security (SCENARIOS below)
  and must pass every check, with one exception that is not a waiver: the
  four checks of `server-stateless` that can only be exercised by calling
  the suite's diagnostic tools (DIAGNOSTIC_CHECKS) report "Not testable"
  against a memory server, which has no such tools; they must report
  exactly that there, and must pass against the fixture server, which has
  them and shares every line of the code they judge.

The suite sends no Authorization header, so a loopback proxy per server
(scripts/conformance/bearer_proxy.mjs) adds a real HS256 token; Host and
Origin pass through unchanged, so the DNS-rebinding checks see what the
suite sent, and each server allows only its proxy's host and origin.

Node 22 and the suite are installed into target/conformance from the npm
registry at pinned versions, once.

    python3 scripts/conformance.py [--binary target/debug/alayasiki-api]
                                   [--fixtures PATH] [--results DIR]
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
from concurrent.futures import ThreadPoolExecutor

import api_process

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE_VERSION = "22.23.3"
SUITE_VERSION = "0.2.0-alpha.12"
PREFIX = os.path.join(ROOT, "target", "conformance", f"node-{NODE_VERSION}-suite-{SUITE_VERSION}")
NODE = os.path.join(PREFIX, "node_modules", "node", "bin", "node")
PACKAGE = os.path.join(PREFIX, "node_modules", "@modelcontextprotocol", "conformance")
SUITE = os.path.join(PACKAGE, "dist", "index.js")
PROXY = os.path.join(ROOT, "scripts", "conformance", "bearer_proxy.mjs")
SECRET = "conformance-secret-0123456789abcdef-0123"
REVISIONS = ["2025-11-25", "2026-07-28"]

# Scenarios that judge the real server itself, by requirement set.
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

# The checks of server-stateless that call the suite's diagnostic tools
# (test_missing_capability, test_streaming_elicitation, test_logging_tool):
# judged on the fixture server; on the real one they must say why they
# could not run.
DIAGNOSTIC_CHECKS = {
    "sep-2575-server-rejects-undeclared-capability",
    "sep-2575-missing-capability-http-400",
    "sep-2575-http-server-no-independent-requests-on-stream",
    "sep-2575-server-no-log-without-loglevel",
}

PASSING = ("SUCCESS", "INFO", "SKIPPED")


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


def fixtures_binary():
    """Builds (if need be) the fixture server test binary; its path."""
    run = subprocess.run(
        ["cargo", "test", "--locked", "--no-run", "--test", "conformance_fixtures",
         "--message-format=json"],
        cwd=ROOT, check=True, capture_output=True, text=True)
    for line in run.stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("target", {}).get("name") == "conformance_fixtures" and message.get("executable"):
            return message["executable"]
    sys.exit("conformance: cargo did not name the conformance_fixtures executable")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, what):
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"conformance: {what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"conformance: {what} did not listen on {port}")


class Served:
    """One server and its bearer proxy; `url` is the proxy's /mcp."""

    def __init__(self, name, command, data):
        self.name = name
        server_port, proxy_port = free_port(), free_port()
        env = dict(os.environ,
                   ALAYASIKI_JWT_SECRET=SECRET,
                   ALAYASIKI_LOG="warn",
                   # The suite sends a few hundred requests in bursts.
                   ALAYASIKI_API_RATE="10000", ALAYASIKI_API_BURST="10000",
                   ALAYASIKI_API_ALLOWED_HOSTS=f"127.0.0.1:{proxy_port},localhost:{proxy_port}",
                   ALAYASIKI_MCP_ALLOWED_ORIGINS=f"http://127.0.0.1:{proxy_port},http://localhost:{proxy_port}")
        env.pop("ALAYASIKI_DATA_DIR", None)
        self.server = subprocess.Popen(
            command + ["--bind", f"127.0.0.1:{server_port}", "--data-dir", data],
            env=env, stdout=subprocess.DEVNULL)
        self.proxy = subprocess.Popen([NODE, PROXY, str(proxy_port), str(server_port)],
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.proxy.stdin.write(api_process.token(SECRET, "conformance", "conformance", ["admin"],
                                                 ttl_s=3600))
        self.proxy.stdin.close()
        wait_for_port(server_port, self.server, name)
        wait_for_port(proxy_port, self.proxy, f"the bearer proxy of {name}")
        self.url = f"http://127.0.0.1:{proxy_port}/mcp"

    def stop(self):
        for p in (self.proxy, self.server):
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def results(out):
    """{scenario: checks} of every scenario run into `out`."""
    found = {}
    for path in sorted(glob.glob(os.path.join(out, "server-*", "checks.json"))):
        folder = os.path.basename(os.path.dirname(path))
        # server-<scenario>-<ISO timestamp with dashes>
        scenario = folder[len("server-"):].rsplit("-", 6)[0]
        with open(path) as f:
            found[scenario] = json.load(f)
    return found


def run_scenario(url, revision, scenario, out):
    cmd = [NODE, SUITE, "server", "--url", url, "--scenario", scenario,
           "--spec-version", revision, "-o", out]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    found = results(out).get(scenario)
    if found is None:
        print(run.stdout[-2000:], run.stderr[-2000:])
        return [{"id": "no-result", "status": "FAILURE", "errorMessage": "no checks.json"}]
    return found


def requirement_set(revision):
    """The server scenarios `--requirements revision` runs: (judged,
    unscored extensions). Judged: the scored ones and those run unscored
    as pending or added after release."""
    path = os.path.join(PACKAGE, "requirements", f"{revision}.yaml")
    judged, extensions, section, entry = [], [], None, {}
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            if not line.startswith(" "):
                section = line.rstrip(":")
                continue
            item = line.strip()
            if section == "server" and item.startswith("- "):
                judged.append(item[2:].strip())
            elif section == "not_scored":
                if item.startswith("- "):
                    entry = {}
                    item = item[2:]
                key, _, value = item.partition(":")
                entry[key.strip()] = value.strip()
                if "leg" in entry and "reason" in entry and "scenario" in entry:
                    if entry["leg"] == "server":
                        (extensions if entry["reason"] == "extension" else judged).append(
                            entry["scenario"])
                    entry = {"done": "1"}
    return judged, extensions


def run_requirements(url, revision, out):
    cmd = [NODE, SUITE, "server", "--url", url, "--requirements", revision, "-o", out]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    summary = run.stdout.split("=== SUMMARY ===")[-1]
    total = [line for line in summary.splitlines() if line.strip().startswith("Total:")]
    return results(out), (total[0].strip() if total else "no summary")


def failing(checks, allowed=()):
    return [c for c in checks if c["status"] not in PASSING and c["id"] not in allowed]


def report(where, revision, scenario, checks, bad, note=""):
    passed = sum(c["status"] == "SUCCESS" for c in checks)
    mark = "ok  " if not bad else "FAIL"
    print(f"{mark} {where} {revision} {scenario}: {passed}/{len(checks)} checks passed{note}")
    for c in bad:
        print(f"       {c['id']} {c['status']}: {(c.get('errorMessage') or '')[:300]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "debug", "alayasiki-api"))
    ap.add_argument("--fixtures", help="the conformance_fixtures test binary (default: built by cargo)")
    ap.add_argument("--results", help="keep the suite's checks.json files under this directory")
    args = ap.parse_args()
    if not os.path.exists(args.binary):
        subprocess.run(["cargo", "build", "--locked", "--bin", "alayasiki-api"], cwd=ROOT, check=True)
    fixtures = args.fixtures or fixtures_binary()
    install()

    started = time.time()
    temp = tempfile.mkdtemp(prefix="alayasiki-conformance-")
    failures = []
    servers = []
    try:
        real = Served("alayasiki-api", [args.binary], os.path.join(temp, "api-data"))
        servers.append(real)
        fixture = Served("the fixture server", [fixtures, "--serve"], os.path.join(temp, "fixture-data"))
        servers.append(fixture)

        # The fixture server: every scenario of each requirement set. The
        # two sets run side by side (two cores; each runs its scenarios in
        # turn), as do the real server's scenarios below.
        with ThreadPoolExecutor(max_workers=2) as pool:
            full = {rev: pool.submit(run_requirements, fixture.url, rev,
                                     os.path.join(temp, f"fixture-{rev}"))
                    for rev in REVISIONS}
            full = {rev: f.result() for rev, f in full.items()}
        diagnostic_passed = set()
        for revision in REVISIONS:
            found, total = full[revision]
            judged, extensions = requirement_set(revision)
            for scenario in judged:
                checks = found.get(scenario)
                if checks is None:
                    checks = [{"id": "no-result", "status": "FAILURE",
                               "errorMessage": "the suite wrote no checks.json"}]
                bad = failing(checks)
                report("fixtures", revision, scenario, checks, bad)
                failures += [(revision, scenario, c["id"]) for c in bad]
                if scenario == "server-stateless":
                    diagnostic_passed |= {c["id"] for c in checks
                                          if c["id"] in DIAGNOSTIC_CHECKS and c["status"] == "SUCCESS"}
            for scenario in extensions:
                checks = found.get(scenario, [])
                passed = sum(c["status"] == "SUCCESS" for c in checks)
                print(f"info fixtures {revision} {scenario}: {passed}/{len(checks)} checks passed "
                      "(an extension this server does not offer; not scored)")
            print(f"info fixtures {revision} suite summary: {total}")

        # The real server: transport, lifecycle, discovery, errors,
        # caching and security.
        jobs = [(rev, s) for rev in REVISIONS for s in SCENARIOS[rev]]
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = pool.map(lambda job: run_scenario(real.url, job[0], job[1],
                                                     os.path.join(temp, f"api-{job[0]}-{job[1]}")),
                            jobs)
            for (revision, scenario), checks in zip(jobs, list(runs)):
                allowed = set()
                note = ""
                if scenario == "server-stateless":
                    untestable = {c["id"] for c in checks if c["id"] in DIAGNOSTIC_CHECKS
                                  and c["status"] == "FAILURE"
                                  and (c.get("errorMessage") or "").startswith("Not testable")}
                    allowed = untestable & diagnostic_passed
                    note = (f", {len(allowed)} judged on the fixture server (they call its "
                            "diagnostic tools)") if allowed else ""
                bad = failing(checks, allowed)
                report("api     ", revision, scenario, checks, bad, note)
                failures += [(revision, scenario, c["id"]) for c in bad]
    finally:
        for s in servers:
            s.stop()
        if args.results:
            shutil.rmtree(args.results, ignore_errors=True)
            shutil.copytree(temp, args.results, ignore=shutil.ignore_patterns("*-data"))
        shutil.rmtree(temp, ignore_errors=True)
    elapsed = time.time() - started
    if failures:
        sys.exit(f"conformance: {len(failures)} check(s) failed ({elapsed:.0f} s)")
    print(f"conformance: every judged scenario of both requirement sets passed ({elapsed:.0f} s)")


if __name__ == "__main__":
    main()
