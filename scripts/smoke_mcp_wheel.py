#!/usr/bin/env python3
"""Smoke-test an installed alayasiki-mcp (a wheel run through uvx, or any binary).

Usage:
    python3 scripts/smoke_mcp_wheel.py [--expect-version V] [--data-dir DIR]
        -- uvx --from dist/alayasiki_mcp-V-py3-none-PLATFORM.whl alayasiki-mcp
    python3 scripts/smoke_mcp_wheel.py -- target/release/alayasiki-mcp

Everything after `--` is the command that starts the server. The test runs
`CMD --help` and `CMD --version` (the version must be V, by default the Cargo
package version in the repository's Cargo.toml), then `CMD --data-dir DIR` (a fresh
temporary directory unless --data-dir is given) for one MCP 2024-11-05 stdio
session: initialize, notifications/initialized, tools/list, an ingest, a
query whose evidence holds the ingested text, a working-memory write and read
when tools/list offers alayasiki_memory_write, then stdin is closed and the
server must exit 0 within --exit-timeout seconds. Every stdout line must be
a JSON-RPC 2.0 message.

Exits 0 and prints one OK line on success; on any failure prints one line
starting `smoke_mcp_wheel: FAIL:` (after the server's last stderr lines, if
any) and exits 1 (2 for a bad command line). Python 3.10+ standard library
only.
"""
import argparse
import json
import os
import pathlib
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

PROTOCOL = "2024-11-05"
REQUIRED_TOOLS = ("alayasiki_ingest", "alayasiki_query", "alayasiki_status")
ROOT = pathlib.Path(__file__).resolve().parent.parent


class SmokeFailure(Exception):
    pass


def cargo_version():
    """The [package] version of ../Cargo.toml (a regex: 3.10 has no tomllib)."""
    path = ROOT / "Cargo.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SmokeFailure(
            f"cannot read {path} for the expected version ({e.strerror}); pass --expect-version"
        ) from None
    in_package = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_package = stripped == "[package]"
        elif in_package:
            m = re.match(r'version\s*=\s*"([^"]+)"', stripped)
            if m:
                return m.group(1)
    raise SmokeFailure(f"no [package] version in {path}; pass --expect-version")


def run_flag(cmd, flag, timeout):
    """Runs `cmd flag` to completion; returns its stdout."""
    try:
        done = subprocess.run(cmd + [flag], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout)
    except FileNotFoundError:
        raise SmokeFailure(f"command not found: {cmd[0]!r}") from None
    except subprocess.TimeoutExpired:
        raise SmokeFailure(f"`{' '.join(cmd + [flag])}` did not finish within {timeout:.0f}s") from None
    out = done.stdout.decode("utf-8", "replace")
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SmokeFailure(f"`{flag}` exited {done.returncode}: {err[-1] if err else '(no stderr)'}")
    return out


class Session:
    """One server process spoken to over newline-delimited JSON-RPC."""

    def __init__(self, cmd, step_timeout):
        self.step_timeout = step_timeout
        self.next_id = 0
        self.lines = queue.Queue()
        self.stderr_tail = []
        self.bad_line = None
        popen_extra = {}
        if os.name == "posix":
            # Own process group, so a failure can stop uvx and its child together.
            popen_extra["start_new_session"] = True
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, **popen_extra)
        except FileNotFoundError:
            raise SmokeFailure(f"command not found: {cmd[0]!r}") from None
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self.stderr_thread = threading.Thread(target=self._read_stderr, daemon=True)
        self.stderr_thread.start()

    def _read_stdout(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            problem = jsonrpc_problem(line)
            if problem and self.bad_line is None:
                self.bad_line = f"stdout line is not JSON-RPC 2.0 ({problem}): {line[:200]!r}"
            self.lines.put(None if problem else json.loads(line))
        self.lines.put(EOFError)

    def _read_stderr(self):
        for raw in self.proc.stderr:
            self.stderr_tail.append(raw.decode("utf-8", "replace").rstrip())
            del self.stderr_tail[:-20]

    def send(self, message):
        data = (json.dumps(message) + "\n").encode("utf-8")
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise SmokeFailure(
                f"server closed stdin before {message.get('method')} (exit {self.proc.poll()})"
            ) from None

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + self.step_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SmokeFailure(f"no answer to {method} within {self.step_timeout:.0f}s")
            try:
                msg = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if msg is EOFError:
                raise SmokeFailure(f"server closed stdout before answering {method} (exit {self.proc.wait()})")
            if self.bad_line:
                raise SmokeFailure(self.bad_line)
            # Server-to-client notifications or requests may come in between.
            if isinstance(msg, dict) and msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise SmokeFailure(f"{method} failed: {json.dumps(msg['error'])[:300]}")
                if "result" not in msg:
                    raise SmokeFailure(f"{method} answer has neither result nor error")
                return msg["result"]

    def call_tool(self, name, arguments):
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        try:
            text = result["content"][0]["text"]
        except (KeyError, IndexError, TypeError):
            raise SmokeFailure(f"{name} result has no content[0].text: {json.dumps(result)[:300]}") from None
        if result.get("isError"):
            raise SmokeFailure(f"{name} returned isError: {text[:300]}")
        try:
            return text, json.loads(text)
        except ValueError:
            raise SmokeFailure(f"{name} result text is not JSON: {text[:200]!r}") from None

    def close_and_wait(self, exit_timeout):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(timeout=exit_timeout)
        except subprocess.TimeoutExpired:
            raise SmokeFailure(f"server did not exit within {exit_timeout:.0f}s of stdin EOF") from None
        # Drain what was written before exit, checking every line.
        while True:
            try:
                msg = self.lines.get(timeout=5)
            except queue.Empty:
                break
            if msg is EOFError:
                break
        if self.bad_line:
            raise SmokeFailure(self.bad_line)
        if code != 0:
            raise SmokeFailure(f"server exited {code} after stdin EOF, expected 0")

    def kill(self):
        if self.proc.poll() is not None:
            return
        try:
            if os.name == "posix":
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                self.proc.kill()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass


def jsonrpc_problem(line):
    """Why a stdout line is not a JSON-RPC 2.0 message, or None if it is."""
    try:
        msg = json.loads(line)
    except ValueError:
        return "not JSON"
    items = msg if isinstance(msg, list) else [msg]
    if not items:
        return "empty batch"
    for item in items:
        if not isinstance(item, dict):
            return "not an object"
        if item.get("jsonrpc") != "2.0":
            return "jsonrpc is not \"2.0\""
        if "method" not in item and "id" not in item:
            return "neither a request, a notification nor a response"
    return None


def lifecycle(session, nonce):
    init = session.request("initialize", {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "smoke_mcp_wheel", "version": "1"},
    })
    if init.get("protocolVersion") != PROTOCOL:
        raise SmokeFailure(f"initialize answered protocolVersion {init.get('protocolVersion')!r}, expected {PROTOCOL}")
    if "tools" not in init.get("capabilities", {}):
        raise SmokeFailure("initialize result does not declare the tools capability")
    session.notify("notifications/initialized")

    tools, cursor = [], None
    for _ in range(100):
        page = session.request("tools/list", {"cursor": cursor} if cursor else {})
        tools += [t.get("name") for t in page.get("tools", [])]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    missing = [t for t in REQUIRED_TOOLS if t not in tools]
    if missing:
        raise SmokeFailure(f"tools/list lacks {', '.join(missing)} (has {', '.join(map(str, tools))})")

    fact = f"The smoke lighthouse {nonce} keeps its lamp lit with amber glass every winter night."
    _, receipt = session.call_tool("alayasiki_ingest", {"content": fact, "source": "smoke_mcp_wheel"})
    if receipt.get("state") != "ready" or not receipt.get("document_id"):
        raise SmokeFailure(f"ingest did not return a ready document: {json.dumps(receipt)[:300]}")

    _, answer = session.call_tool("alayasiki_query", {"query": f"What keeps the smoke lighthouse {nonce} lit?"})
    evidence = answer.get("evidence") or []
    if not any(fact in str(item.get("text", "")) for item in evidence):
        raise SmokeFailure(f"query evidence ({len(evidence)} items) does not contain the ingested text")

    checked = ["initialize", "tools/list", "ingest", "query"]
    if "alayasiki_memory_write" in tools:
        session_id = f"smoke-{nonce}"
        note = f"Working note {nonce}: the amber glass was cleaned on Tuesday."
        session.call_tool("alayasiki_memory_write", {"session_id": session_id, "content": note})
        read_text, _ = session.call_tool("alayasiki_memory_read", {"session_id": session_id})
        if nonce not in read_text or "amber glass was cleaned" not in read_text:
            raise SmokeFailure("alayasiki_memory_read does not return what alayasiki_memory_write stored")
        checked.append("working memory")
    return checked


def main(argv):
    if "--" not in argv:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        print("smoke_mcp_wheel: FAIL: give the server command after `--`", file=sys.stderr)
        return 2
    split = argv.index("--")
    ap = argparse.ArgumentParser(description="Smoke-test alayasiki-mcp over stdio (command after --).")
    ap.add_argument("--expect-version", help="version `--version` must print (default: Cargo.toml's)")
    ap.add_argument("--data-dir", help="data directory for the session (default: a new temporary one)")
    ap.add_argument("--first-timeout", type=float, default=300,
                    help="seconds for the first command (uvx may install the wheel then); default 300")
    ap.add_argument("--step-timeout", type=float, default=60, help="seconds per command or request; default 60")
    ap.add_argument("--exit-timeout", type=float, default=10, help="seconds to exit after stdin EOF; default 10")
    args = ap.parse_args(argv[:split])
    cmd = argv[split + 1:]
    if not cmd:
        print("smoke_mcp_wheel: FAIL: empty command after `--`", file=sys.stderr)
        return 2

    session = None
    data_dir = args.data_dir
    made_dir = None
    try:
        expect = args.expect_version or cargo_version()
        help_text = run_flag(cmd, "--help", args.first_timeout)
        if "alayasiki-mcp" not in help_text or "--data-dir" not in help_text:
            raise SmokeFailure("--help output does not describe alayasiki-mcp and --data-dir")
        version_text = run_flag(cmd, "--version", args.step_timeout).strip()
        if version_text != f"alayasiki-mcp {expect}":
            raise SmokeFailure(f"--version printed {version_text!r}, expected 'alayasiki-mcp {expect}'")

        if data_dir is None:
            made_dir = tempfile.mkdtemp(prefix="alayasiki-smoke-")
            data_dir = os.path.join(made_dir, "memory")
        session = Session(cmd + ["--data-dir", data_dir], args.step_timeout)
        checked = lifecycle(session, uuid.uuid4().hex[:12])
        session.close_and_wait(args.exit_timeout)
    except SmokeFailure as e:
        if session is not None:
            session.kill()
            session.stderr_thread.join(timeout=2)
            for line in session.stderr_tail:
                print(f"  server stderr: {line}", file=sys.stderr)
        if made_dir:
            print(f"  data dir kept: {data_dir}", file=sys.stderr)
        print(f"smoke_mcp_wheel: FAIL: {e}", file=sys.stderr)
        return 1
    if made_dir:
        shutil.rmtree(made_dir, ignore_errors=True)
    print(f"smoke_mcp_wheel: OK: alayasiki-mcp {expect}: --help, --version, {', '.join(checked)}, clean exit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
