"""What the scripts that drive a real `alayasiki-api` share: a test HS256
token minted with the standard library, and the server started on a free
loopback port (its address read from the line it prints once listening)."""
import base64
import hashlib
import hmac
import json
import os
import subprocess
import time


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(secret, sub, tenant, roles, ttl_s=600):
    """An HS256 JWT for `sub` in `tenant` with `roles`, valid `ttl_s`."""
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": sub, "tenant": tenant, "roles": roles, "exp": int(time.time()) + ttl_s}
    payload = b64(json.dumps(claims).encode())
    sig = hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(sig)}"


def start(binary, data, secret, fail, extra_env=None):
    """Starts `binary` on `data`; returns (process, base URL). Calls
    `fail(message)` if it exits or stays silent for 30 s."""
    env = dict(os.environ, ALAYASIKI_JWT_SECRET=secret, ALAYASIKI_LOG="warn", **(extra_env or {}))
    proc = subprocess.Popen([binary, "--bind", "127.0.0.1:0", "--data-dir", data],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            fail(f"server exited early with status {proc.wait()}")
        if line.startswith("alayasiki-api: listening on "):
            return proc, line.split("listening on ", 1)[1].strip()
    fail("server did not report its address")
