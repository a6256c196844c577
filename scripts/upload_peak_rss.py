# Peak resident memory of alayasiki-api receiving and ingesting one upload:
# python3 scripts/upload_peak_rss.py target/release/alayasiki-api SIZE_BYTES [md|txt]
# (starts the server on a fresh directory under /tmp/upbench, declares a
# Markdown file of SIZE_BYTES in numbered lines, PUTs it, waits until every
# document is indexed, and prints the receipt's summary, the times and
# VmHWM, and the peak of RssAnon, the heap without mapped files; a file
# over MAX_CONTENT_BYTES is stored as a series of parts).
import base64, hashlib, hmac, json, os, re, subprocess, sys, time, http.client, shutil
BIN = sys.argv[1]
size = int(sys.argv[2])
kind = sys.argv[3] if len(sys.argv) > 3 else "md"
os.makedirs("/tmp/upbench", exist_ok=True); d = "/tmp/upbench/data"; shutil.rmtree(d, ignore_errors=True)
secret = "bench-secret-0123456789abcdef-0123456789"
env = dict(os.environ, ALAYASIKI_JWT_SECRET=secret, ALAYASIKI_LOG="warn", ALAYASIKI_API_RATE="1000", ALAYASIKI_API_BURST="1000")
p = subprocess.Popen([BIN, "--bind", "127.0.0.1:0", "--data-dir", d], env=env, stderr=subprocess.PIPE, text=True)
line = p.stderr.readline()
while "listening on" not in line:
    if not line: sys.exit("server exited")
    print(line, file=sys.stderr); line = p.stderr.readline()
port = int(re.search(r":(\d+)$", line.strip()).group(1))
def b64(x): return base64.urlsafe_b64encode(x).rstrip(b"=")
h = b64(json.dumps({"alg":"HS256","typ":"JWT"}).encode()); c = b64(json.dumps({"sub":"bench","tenant":"t","roles":["admin"],"exp":int(time.time())+3600}).encode())
tok = (h+b"."+c+b"."+b64(hmac.new(secret.encode(), h+b"."+c, hashlib.sha256).digest())).decode()
auth = {"Authorization": "Bearer " + tok}
def rss(k):
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith(k): return int(l.split()[1])
# VmHWM counts pages of the memory-mapped database and vector files too;
# the heap's share (RssAnon) is sampled apart.
import threading
peak_anon = [0]
def sample():
    while p.poll() is None:
        try: peak_anon[0] = max(peak_anon[0], rss("RssAnon"))
        except Exception: pass
        time.sleep(0.1)
threading.Thread(target=sample, daemon=True).start()
# Numbered lines: every chunk's text differs, as in a real log or book.
parts, n, total = [], 0, 0
while total < size:
    l = f"Entry {n}: routine maintenance notes keep the service healthy and observable, said Zanzibar.\n"
    parts.append(l); total += len(l); n += 1
body = "".join(parts).encode()[:size]; del parts
def req(m, path, b=None, hdr={}):
    cn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600); cn.request(m, path, body=b, headers=hdr); r = cn.getresponse(); return r.status, r.read()
time.sleep(0.5)
base = rss("VmRSS")
st, off = req("POST", "/v1/uploads", json.dumps({"upload":{"filename":"big." + kind,"size":size,"sha256":hashlib.sha256(body).hexdigest()}}), dict(auth, **{"Content-Type":"application/json"}))
off = json.loads(off); path = off["upload_url"].split(str(port),1)[1]
t = time.time()
st, rec = req("PUT", path, body, {"Content-Length": str(size)})
answered = time.time() - t
rec = json.loads(rec)
while True:
    status = json.loads(req("GET", "/v1/status", None, auth)[1])
    if status["jobs"]["pending"] == 0: break
    time.sleep(0.2)
ready = time.time() - t
print(json.dumps({"size": size, "status": st, "state": rec.get("state"), "parts": len(rec.get("parts", [])) or 1,
                  "documents": status["documents"], "chunks": status["chunks"], "failed": status["jobs"]["failed"],
                  "put_answered_s": round(answered, 2), "put_to_ready_s": round(ready, 2),
                  "rss_before_kib": base, "peak_rss_kib": rss("VmHWM"), "peak_anon_kib": peak_anon[0], "rss_after_kib": rss("VmRSS")}))
p.terminate(); p.wait()
