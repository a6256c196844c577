#!/usr/bin/env python3
"""Team sign-in end to end: alayasiki-api as the authorization server MCP
clients see, in front of a real OpenID provider, everything on loopback
and started here.

- The upstream provider is oidc-provider (a certified OpenID provider
  implementation, pinned below, installed with Node into target/) running
  scripts/oauth/upstream.mjs.
- The official MCP Python SDK's OAuth client (`OAuthClientProvider`) does
  discovery -> registration -> authorization -> token -> tools/call twice:
  once registering by RFC 7591 and once by a Client ID Metadata Document
  served over https on loopback (a throwaway CA the server is told to
  trust); the official TypeScript SDK v1's OAuth client (pinned, installed
  beside oidc-provider) does the same by RFC 7591
  (scripts/oauth/ts_client.mjs). The browser part (this server's consent page, the provider's
  sign-in and consent) is driven in Debian's chromium by Playwright.
- What a reviewer would try, by hand over HTTP: redirect URIs that are not
  the registered one (prefix and look-alike tricks), unknown clients,
  PKCE missing or `plain`, another resource, consent posted without the
  page's cookie, unknown or replayed `state`, a code used twice (its
  refresh token is revoked), a wrong verifier, refresh token reuse (the
  grant is revoked), a token for another resource, a registration flood,
  metadata documents that redirect, hang, are huge, name another
  client_id, or point inward.
- Restarts: grants survive a restart with the same state key; with
  another key refresh tokens and registrations are gone (the client must
  register again) and the server runs on.

Usage: oauth_test.py path/to/alayasiki-api [path/to/chromium]
"""
import asyncio
import base64
import hashlib
import hmac
import http.server
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

import httpx2 as httpx
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from playwright.async_api import async_playwright

NODE_VERSION = "22.23.3"
OIDC_PROVIDER_VERSION = "9.13.3"
TS_SDK_VERSION = "1.32.2"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
JWT_SECRET = "oauth-test-jwt-secret-0123456789abcdef"
STATE_KEY = "oauth-test-state-key-0123456789abcdef0123"
OTHER_STATE_KEY = "another-state-key-0123456789abcdef01234567"
UPSTREAM_CLIENT = ("alayasiki", "upstream-client-secret-for-tests")
CLAIMS_MAP = ("email_domain=example.com => tenant=acme roles=reader,ingestor; "
              "groups=memory-admins => roles=admin")


def fail(msg):
    print(f"oauth_test: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def pkce():
    verifier = secrets.token_urlsafe(48)
    return verifier, b64(hashlib.sha256(verifier.encode()).digest())


def hs256(claims):
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps(claims).encode())
    sig = hmac.new(JWT_SECRET.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(sig)}"


def install_provider():
    """Node and oidc-provider at pinned versions under target/, once."""
    prefix = os.path.join(ROOT, "target", "oidc-provider",
                          f"node-{NODE_VERSION}-oidc-provider-{OIDC_PROVIDER_VERSION}-sdk-{TS_SDK_VERSION}")
    node = os.path.join(prefix, "node_modules", "node", "bin", "node")
    manifests = {os.path.join(prefix, "node_modules", name, "package.json"): version
                 for name, version in [("oidc-provider", OIDC_PROVIDER_VERSION),
                                       ("@modelcontextprotocol/sdk", TS_SDK_VERSION)]}
    if os.path.exists(node) and all(os.path.exists(m) and json.load(open(m))["version"] == v
                                    for m, v in manifests.items()):
        return prefix, node
    if not shutil.which("npm"):
        fail("npm not found (needed once, to install Node and oidc-provider)")
    shutil.rmtree(prefix, ignore_errors=True)
    os.makedirs(prefix)
    with open(os.path.join(prefix, "package.json"), "w") as f:
        f.write('{"name": "alayasiki-oauth-upstream", "private": true, "type": "module"}\n')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--save-exact", "--loglevel=error",
                    f"node@{NODE_VERSION}", f"oidc-provider@{OIDC_PROVIDER_VERSION}",
                    f"@modelcontextprotocol/sdk@{TS_SDK_VERSION}"], cwd=prefix, check=True)
    return prefix, node


def start_provider(prefix, node, port, callback):
    script = os.path.join(prefix, "upstream.mjs")
    shutil.copy(os.path.join(HERE, "oauth", "upstream.mjs"), script)
    proc = subprocess.Popen([node, script, str(port), UPSTREAM_CLIENT[0], UPSTREAM_CLIENT[1], callback],
                            cwd=prefix, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    check("ready" in line, f"oidc-provider did not start: {line!r}")
    return proc


class Api:
    """alayasiki-api with the facade, on a fixed port (its resource URL
    names it)."""

    def __init__(self, binary, data, port, upstream, state_key, extra=None):
        self.binary, self.data, self.port = binary, data, port
        self.base = f"http://127.0.0.1:{port}"
        self.env = dict(os.environ, ALAYASIKI_LOG="warn", ALAYASIKI_JWT_SECRET=JWT_SECRET,
                        ALAYASIKI_RESOURCE=f"{self.base}/mcp", ALAYASIKI_OAUTH_UPSTREAM=upstream,
                        ALAYASIKI_OAUTH_CLIENT_ID=UPSTREAM_CLIENT[0],
                        ALAYASIKI_OAUTH_CLIENT_SECRET=UPSTREAM_CLIENT[1],
                        ALAYASIKI_OAUTH_STATE_KEY=state_key, ALAYASIKI_OAUTH_CLAIMS_MAP=CLAIMS_MAP,
                        **(extra or {}))
        self.proc = None
        self.start()

    def start(self, **env):
        self.env.update(env)
        self.proc = subprocess.Popen([self.binary, "--bind", f"127.0.0.1:{self.port}", "--data-dir", self.data],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=self.env, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                fail(f"alayasiki-api exited early with status {self.proc.wait()}")
            if line.startswith("alayasiki-api: listening on "):
                threading.Thread(target=self.proc.stderr.read, daemon=True).start()
                return
        fail("alayasiki-api did not report its address")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        check(self.proc.wait(timeout=30) == 0, "alayasiki-api did not exit 0 on SIGTERM")


class Callback:
    """The MCP client's redirect URI: a loopback server that keeps the
    query of each request it gets."""

    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/callback"
        self.received = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/callback"):  # not the browser's favicon
                    outer.received.append(dict(httpx.URL(self.path).params))
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"signed in; you may close this window")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class MetadataDocuments:
    """Client ID Metadata Documents over https on loopback, under a
    throwaway CA: /client.json (good), /redirect, /huge, /hang,
    /other-id."""

    def __init__(self, tmp, redirect_uri):
        self.port = free_port()
        self.base = f"https://127.0.0.1:{self.port}"
        self.ca = os.path.join(tmp, "ca.pem")
        ca_key, key = os.path.join(tmp, "ca.key"), os.path.join(tmp, "key.pem")
        csr, cert, ext = os.path.join(tmp, "leaf.csr"), os.path.join(tmp, "cert.pem"), os.path.join(tmp, "ext")
        with open(ext, "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
        for cmd in (["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                     "-subj", "/CN=oauth test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign", "-keyout", ca_key, "-out", self.ca],
                    ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                     "-keyout", key, "-out", csr],
                    ["openssl", "x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey", ca_key,
                     "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", cert]):
            subprocess.run(cmd, check=True, capture_output=True)
        base, uri = self.base, redirect_uri

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/hang":
                    time.sleep(12)
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", f"{base}/client.json")
                    self.end_headers()
                    return
                doc = {"client_id": f"{base}{self.path}", "client_name": "Metadata document client",
                       "redirect_uris": [uri]}
                if self.path == "/other-id":
                    doc["client_id"] = f"{base}/client.json"
                body = json.dumps(doc).encode()
                if self.path == "/huge":
                    doc["padding"] = "x" * 100_000
                    body = json.dumps(doc).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Storage:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


async def browser_sign_in(browser, url, login, shots, name):
    """Our consent page, then the provider's sign-in and consent."""
    context = await browser.new_context()  # a person who has not signed in yet
    page = await context.new_page()
    await page.goto(url)
    text = await page.inner_text("body")
    check("Allow" in text and "use your memory" in text, f"no consent page: {text[:200]}")
    await page.screenshot(path=os.path.join(shots, f"oauth-consent-{name}.png"))
    await page.click("button.allow")
    try:
        await page.wait_for_selector("input[name=login]", timeout=15000)
    except Exception:
        fail(f"no sign-in page after consent: at {page.url}: {(await page.content())[:600]}")
    await page.fill("input[name=login]", login)
    await page.fill("input[name=password]", "any password")
    await page.click("button[type=submit]")
    await page.wait_for_selector("button[type=submit]")
    await page.click("button[type=submit]")  # the provider's own consent
    await page.wait_for_url(re.compile(r"http://127\.0\.0\.1:\d+/callback\?"))
    await context.close()
    return text


async def sdk_flow(api, callback, browser, shots, name, metadata_url=None):
    """The SDK's whole OAuth flow, then tools/call; returns the storage."""
    storage = Storage()
    seen = {}

    async def redirect_handler(url):
        seen["consent"] = await browser_sign_in(browser, url, "dana", shots, name)

    async def callback_handler():
        for _ in range(100):
            if callback.received:
                q = callback.received.pop()
                check("code" in q, f"the client got no code: {q}")
                return AuthorizationCodeResult(code=q["code"], state=q.get("state"), iss=q.get("iss"))
            await asyncio.sleep(0.1)
        fail("no code reached the client's redirect URI")

    provider = OAuthClientProvider(
        server_url=f"{api.base}/mcp",
        client_metadata=OAuthClientMetadata(client_name=f"oauth_test {name}", redirect_uris=[callback.url],
                                            grant_types=["authorization_code", "refresh_token"],
                                            response_types=["code"]),
        storage=storage, redirect_handler=redirect_handler, callback_handler=callback_handler,
        client_metadata_url=metadata_url)
    async with create_mcp_http_client(auth=provider) as http_client:
        async with Client(streamable_http_client(f"{api.base}/mcp", http_client=http_client)) as client:
            tools = await client.list_tools()
            check(any(t.name == "alayasiki_query" for t in tools.tools), "tools/list lacks alayasiki_query")
            note = f"The {name} team keeps its release checklist in the runbook, page 7."
            r = await client.call_tool("alayasiki_ingest", {"content": note, "wait": True})
            check(not r.is_error, f"ingest failed: {r.content}")
            r = await client.call_tool("alayasiki_query", {"query": f"where is the {name} release checklist"})
            check(not r.is_error and "runbook" in r.content[0].text, f"query failed: {r.content}")
    if metadata_url:
        check("metadata document" in seen["consent"] and metadata_url in seen["consent"],
              "the consent page does not say the client is described by its metadata document")
        check(storage.client.client_id == metadata_url, "the SDK did not use its metadata document URL")
    else:
        check(storage.client.client_id.startswith("c_"), f"not registered: {storage.client}")
    return storage


async def ts_flow(api, callback, browser, shots, prefix, node):
    """The TypeScript SDK's OAuth client: it prints where to sign in, the
    browser signs in, the code goes back on its stdin."""
    proc = await asyncio.create_subprocess_exec(
        node, os.path.join(HERE, "oauth", "ts_client.mjs"), prefix, f"{api.base}/mcp", callback.url,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    check(line.startswith("AUTHORIZE "), f"the TypeScript client did not ask to authorize: {line!r}")
    await browser_sign_in(browser, line.split(" ", 1)[1].strip(), "dana", shots, "typescript")
    for _ in range(100):
        if callback.received:
            break
        await asyncio.sleep(0.1)
    q = callback.received.pop()
    check("code" in q, f"the TypeScript client got no code: {q}")
    proc.stdin.write((q["code"] + "\n").encode())
    await proc.stdin.drain()
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    check(line.startswith("OK ") and await proc.wait() == 0, f"the TypeScript client failed: {line!r}")
    done = json.loads(line[3:])
    check(done["client_id"].startswith("c_") and done["refresh"], f"TypeScript client: {done}")


def raw_authorize(c, api, client_id, redirect_uri, **extra):
    verifier, challenge = pkce()
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
              "code_challenge": challenge, "code_challenge_method": "S256", "state": "st-1",
              "resource": f"{api.base}/mcp"}
    params.update(extra)
    return c.get(f"{api.base}/authorize", params={k: v for k, v in params.items() if v is not None}), verifier


def raw_code(c, api, client_id, redirect_uri, login="dana"):
    """A code by the whole browser path, without a browser: consent with
    its cookie, then the provider's forms. Returns (code, verifier)."""
    r, verifier = raw_authorize(c, api, client_id, redirect_uri)
    check(r.status_code == 200, f"/authorize answered {r.status_code}: {r.text[:200]}")
    consent = re.search(r'name="consent" value="([0-9a-f]+)"', r.text).group(1)
    r = c.post(f"{api.base}/oauth/consent", data={"consent": consent, "decision": "allow"})
    check(r.status_code == 303, f"consent answered {r.status_code}")
    url = httpx.URL(r.headers["location"])
    for _ in range(20):
        r = c.get(url)
        if r.status_code in (302, 303):
            url = r.url.join(r.headers["location"])
            if str(url).startswith(redirect_uri):
                q = dict(url.params)
                check(q.get("state") == "st-1" and q.get("iss") == api.base, f"bad answer {q}")
                return q["code"], verifier
            continue
        action = re.search(r'<form[^>]*action="([^"]+)"', r.text).group(1)
        data = {n: v for n, v in re.findall(r'name="(\w+)"(?: value="([^"]*)")?', r.text)}
        if "login" in data:
            data.update(login=login, password="x")
        r = c.post(r.url.join(action), data=data)
        url = r.url.join(r.headers["location"])
    fail("the sign-in did not come back")


def token(c, api, **form):
    return c.post(f"{api.base}/token", data=form)


def attacks(api, inward_api, docs, callback):
    c = httpx.Client(follow_redirects=False, timeout=20)
    cb = callback.url
    r = c.post(f"{api.base}/register", json={"redirect_uris": [cb], "client_name": "attacked"})
    check(r.status_code == 201, f"register: {r.status_code} {r.text}")
    cid = r.json()["client_id"]

    # Redirect URIs other than the registered one: a page, never a redirect.
    for bad in [cb + "x", cb + "/../evil", cb.replace("/callback", "/callback?next=x"),
                cb.replace("127.0.0.1", "127.0.0.1.evil.example"), "https://evil.example/callback"]:
        r, _ = raw_authorize(c, api, cid, bad)
        check(r.status_code == 400 and "location" not in r.headers,
              f"redirect URI {bad!r} was not refused with a page: {r.status_code} {r.headers}")
    r, _ = raw_authorize(c, api, "c_unknown", cb)
    check(r.status_code == 400 and "location" not in r.headers, "an unknown client was not refused")

    def error_of(r):
        check(r.status_code == 303, f"expected a redirect with an error, got {r.status_code}")
        q = dict(httpx.URL(r.headers["location"]).params)
        check(r.headers["location"].startswith(cb) and q.get("state") == "st-1", f"bad error redirect {q}")
        return q.get("error")
    r, _ = raw_authorize(c, api, cid, cb, code_challenge=None)
    check(error_of(r) == "invalid_request", "PKCE was not required")
    r, _ = raw_authorize(c, api, cid, cb, code_challenge_method="plain")
    check(error_of(r) == "invalid_request", "PKCE plain was accepted")
    r, _ = raw_authorize(c, api, cid, cb, resource="http://127.0.0.1:1/other")
    check(error_of(r) == "invalid_target", "another resource was accepted")
    r, _ = raw_authorize(c, api, cid, cb, response_type="token")
    check(error_of(r) == "unsupported_response_type", "response_type=token was accepted")

    # Consent posted from elsewhere (no cookie of the page): refused.
    r, _ = raw_authorize(c, api, cid, cb)
    consent = re.search(r'name="consent" value="([0-9a-f]+)"', r.text).group(1)
    r = httpx.post(f"{api.base}/oauth/consent", data={"consent": consent, "decision": "allow"})
    check(r.status_code == 403, f"consent without the page's cookie: {r.status_code}")
    # Unknown state at the callback: a page.
    r = c.get(f"{api.base}/oauth/callback", params={"state": "f" * 64, "code": "x"})
    check(r.status_code == 400 and "location" not in r.headers, "an unknown state was accepted")

    # A wrong verifier spends the code.
    code, verifier = raw_code(c, api, cid, cb)
    r = token(c, api, grant_type="authorization_code", code=code, redirect_uri=cb, client_id=cid,
              code_verifier=pkce()[0])
    check(r.status_code == 400 and r.json()["error"] == "invalid_grant", f"wrong verifier: {r.text}")
    r = token(c, api, grant_type="authorization_code", code=code, redirect_uri=cb, client_id=cid,
              code_verifier=verifier)
    check(r.status_code == 400, "a code was usable after a failed exchange")
    # A code used twice: the second fails and revokes the first's grant.
    code, verifier = raw_code(c, api, cid, cb)
    r = token(c, api, grant_type="authorization_code", code=code, redirect_uri=cb, client_id=cid,
              code_verifier=verifier, resource=f"{api.base}/mcp")
    check(r.status_code == 200, f"exchange: {r.text}")
    first = r.json()
    check(first["expires_in"] <= 600 and first["token_type"] == "Bearer", f"token reply {first}")
    r = token(c, api, grant_type="authorization_code", code=code, redirect_uri=cb, client_id=cid,
              code_verifier=verifier)
    check(r.status_code == 400 and r.json()["error"] == "invalid_grant", "a code was used twice")
    r = token(c, api, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=cid)
    check(r.status_code == 400, "the grant of a replayed code was not revoked")
    # Refresh rotation and reuse detection.
    code, verifier = raw_code(c, api, cid, cb)
    r1 = token(c, api, grant_type="authorization_code", code=code, redirect_uri=cb, client_id=cid,
               code_verifier=verifier).json()
    r2 = token(c, api, grant_type="refresh_token", refresh_token=r1["refresh_token"], client_id=cid)
    check(r2.status_code == 200 and r2.json()["refresh_token"] != r1["refresh_token"], "no rotation")
    r2 = r2.json()
    r = token(c, api, grant_type="refresh_token", refresh_token=r2["refresh_token"], client_id="c_other")
    check(r.status_code == 400, "another client used a refresh token")
    code, verifier = raw_code(c, api, cid, cb)
    r3 = token(c, api, grant_type="authorization_code", code=code, redirect_uri=cb, client_id=cid,
               code_verifier=verifier).json()
    r4 = token(c, api, grant_type="refresh_token", refresh_token=r3["refresh_token"], client_id=cid).json()
    r = token(c, api, grant_type="refresh_token", refresh_token=r3["refresh_token"], client_id=cid)
    check(r.status_code == 400, "a rotated refresh token was accepted again")
    r = token(c, api, grant_type="refresh_token", refresh_token=r4["refresh_token"], client_id=cid)
    check(r.status_code == 400, "refresh token reuse did not revoke the grant")
    r = token(c, api, grant_type="refresh_token", refresh_token=r4["access_token"], client_id=cid,
              scope="admin:*")
    check(r.status_code == 400, "an access token was taken for a refresh token")

    # The access token works at /mcp; one for another resource does not.
    def mcp_status(tok):
        return c.post(f"{api.base}/mcp", headers={"Authorization": f"Bearer {tok}",
                                                   "Accept": "application/json, text/event-stream",
                                                   "Content-Type": "application/json"},
                      json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code
    check(mcp_status(r1["access_token"]) != 401, "the facade's access token was refused")
    now = int(time.time())
    other = hs256({"iss": api.base, "aud": "http://127.0.0.1:1/mcp", "sub": "dana", "tenant": "acme",
                   "scope": "query:execute", "exp": now + 300})
    check(mcp_status(other) == 401, "a token for another resource was accepted")

    # Metadata documents: bounded and never inward unless allowed.
    def cimd_refusal(target, path, phrase):
        started = time.monotonic()
        r, _ = raw_authorize(c, target, f"{docs.base}{path}", cb)
        took = time.monotonic() - started
        check(r.status_code == 400 and "location" not in r.headers and phrase in r.text,
              f"metadata document {path}: {r.status_code} {r.text[-300:]}")
        return took
    cimd_refusal(api, "/redirect", "redirect")
    cimd_refusal(api, "/huge", "too long")
    cimd_refusal(api, "/other-id", "does not name its own URL")
    took = cimd_refusal(api, "/hang", "in time")
    check(took < 9, f"a hanging metadata document held /authorize for {took:.1f} s")
    cimd_refusal(inward_api, "/client.json", "address this server does not fetch from")

    # A registration flood is cut.
    statuses = [c.post(f"{api.base}/register", json={"redirect_uris": [cb]}).status_code for _ in range(40)]
    check(429 in statuses, f"40 registrations in a row were all accepted: {statuses}")
    r = c.post(f"{api.base}/register", json={"redirect_uris": ["javascript:alert(1)"]})
    check(r.status_code in (400, 429), "a javascript: redirect URI was registered")
    return cid, r4


def main():
    if len(sys.argv) < 2:
        fail("usage: oauth_test.py path/to/alayasiki-api [path/to/chromium]")
    binary = os.path.abspath(sys.argv[1])
    chromium = (sys.argv[2] if len(sys.argv) > 2 else None) or os.environ.get("ALAYASIKI_CHROMIUM") \
        or shutil.which("chromium")
    if not chromium:
        fail("no chromium found (apt-get install chromium)")
    shots = os.path.join(ROOT, "target", "ui-screenshots")
    os.makedirs(shots, exist_ok=True)
    prefix, node = install_provider()
    tmp = tempfile.mkdtemp(prefix="oauth-test-")
    procs = []
    try:
        callback = Callback()
        docs = MetadataDocuments(tmp, callback.url)
        up_port, api_port, inward_port = free_port(), free_port(), free_port()
        upstream = f"http://127.0.0.1:{up_port}"
        provider = start_provider(prefix, node, up_port, f"http://127.0.0.1:{api_port}/oauth/callback")
        procs.append(provider)
        api = Api(binary, os.path.join(tmp, "data"), api_port, upstream, STATE_KEY,
                  {"ALAYASIKI_OAUTH_CA_FILE": docs.ca, "ALAYASIKI_OAUTH_ALLOW_PRIVATE_CLIENT_METADATA": "1"})
        procs.append(api.proc)
        inward = Api(binary, os.path.join(tmp, "inward"), inward_port, upstream, STATE_KEY,
                     {"ALAYASIKI_OAUTH_CA_FILE": docs.ca})
        procs.append(inward.proc)

        async def with_sdk():
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                registered = await sdk_flow(api, callback, browser, shots, "registered")
                await sdk_flow(api, callback, browser, shots, "metadata-document",
                               metadata_url=f"{docs.base}/client.json")
                await ts_flow(api, callback, browser, shots, prefix, node)
                await browser.close()
                return registered
        storage = asyncio.run(with_sdk())
        print("oauth_test: the Python SDK (RFC 7591 and a metadata document) and the TypeScript SDK"
              " (RFC 7591) signed in through chromium and called tools")

        # The memory written through the facade is tenant acme's, by dana.
        c = httpx.Client(timeout=20)
        admin = hs256({"sub": "ops", "tenant": "acme", "roles": ["admin"], "exp": int(time.time()) + 300,
                       "aud": f"{api.base}/mcp"})
        docs_list = c.get(f"{api.base}/v1/documents", headers={"Authorization": f"Bearer {admin}"}).json()
        check(len(docs_list["documents"]) == 3, f"tenant acme should hold 3 documents: {docs_list}")
        writers = {c.get(f"{api.base}/v1/documents/{d['document_id']}",
                         headers={"Authorization": f"Bearer {admin}"}).json()["created_by"]
                   for d in docs_list["documents"]}
        check(writers == {"dana"}, f"documents not written by the signed-in person: {writers}")

        cid, live = attacks(api, inward, docs, callback)
        print("oauth_test: redirect, PKCE, resource, consent, state, code, refresh and metadata attacks refused")

        # Grants survive a restart with the same key...
        api.stop()
        api.start()
        r = token(c, api, grant_type="refresh_token", refresh_token=storage.tokens.refresh_token,
                  client_id=storage.client.client_id)
        check(r.status_code == 200, f"a refresh token did not survive a restart: {r.text}")
        refreshed = r.json()
        # ...and not a restart with another key: refresh and registration are gone.
        api.stop()
        api.start(ALAYASIKI_OAUTH_STATE_KEY=OTHER_STATE_KEY)
        r = token(c, api, grant_type="refresh_token", refresh_token=refreshed["refresh_token"],
                  client_id=storage.client.client_id)
        check(r.status_code == 400 and r.json()["error"] == "invalid_grant",
              f"a refresh token outlived its state key: {r.status_code} {r.text}")
        r, _ = raw_authorize(c, api, cid, callback.url)
        check(r.status_code == 400 and "register again" in r.text, "a registration outlived its state key")
        check(c.get(f"{api.base}/health").status_code == 200, "the server is not healthy after a key change")
        r = c.post(f"{api.base}/register", json={"redirect_uris": [callback.url]})
        check(r.status_code == 201, f"registering again after a key change: {r.status_code}")
        print("oauth_test: grants survive a restart; another state key revokes them and the server runs on")
        api.stop()
        inward.stop()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print("oauth_test: all checks passed")


if __name__ == "__main__":
    main()
