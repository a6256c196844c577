"""The memory browser (/ui) in a real browser: Debian's chromium driven by
Playwright, against a real `alayasiki-api` on a fresh data directory.

Signs in with a pasted token, ingests a note and uploads a file through
the page, searches and checks the evidence shown, opens a document, its
chunks and entities, and downloads its original (bytes compared), opens
an entity in the graph (relations with confidence and evidence), expands
the neighbourhood and zooms, sees the communities and the caller's
working-memory sessions, filters documents, follows a document's versions
(the current one listed, the history on request, the superseded version
marked and naming its successor), forgets one document and then
a whole source through confirmations that name what goes, checks that
stored `<script>` and `<img onerror>` payloads render as text and run
nothing, that a token of tenant A sees nothing of tenant B, that a reader
cannot forget, and that the page asks for nothing outside the server. Then
the same server and browser run again inside a network namespace with no
route out (`unshare --net`): the page loads, signs in and searches there.
Last, the stdio server's own page (`alayasiki-mcp --ui`, the alayasiki-mcp
beside the given alayasiki-api): the link from `ui.url` signs in by itself,
leaves no secret in the address bar, and adds and forgets.
Screenshots of the main views go to target/ui-screenshots/.

Usage: ui_browser_test.py path/to/alayasiki-api [path/to/chromium]
(the browser: the argument, else $ALAYASIKI_CHROMIUM, else chromium from PATH;
playwright is pinned in requirements-test.txt)
"""
import base64
import errno
import fcntl
import json
import os
import socket
import struct
import subprocess
import shutil
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_process  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

SECRET = "ui-browser-test-secret-0123456789abcdef"
SHOTS = os.path.join("target", "ui-screenshots")
NOTE = ("Invoices are archived monthly. "
        "The backup of the billing database runs at 02:00 from the standby replica.")
XSS = ('<script>window.__pwned = "script"</script>'
       '<img src=x onerror="window.__pwned = \'img\'"> payload note about zanzibar')
# Two topics that share no entities (as tests/graph.rs): relations and
# communities for the graph view.
GRAPH = [
    "Acme Corp. acquired Widgets Inc. in 2023.",
    "Dana Scully works at Acme Corp. as chief engineer.",
    "Widgets Inc. makes gears for bicycles.",
    "Acme Corp. acquired Widgets Inc. after a long negotiation.",
    "Lisbon is the capital of Portugal.",
    "Porto is a city in Portugal famous for wine.",
]
# A file uploaded through the page: not valid UTF-8 as a whole would be
# refused as text, so it is a small PNG with its description.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def call(base, token, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, method=method, data=data, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def main():
    binary = sys.argv[1]
    chromium = (sys.argv[2] if len(sys.argv) > 2 else None) or os.environ.get("ALAYASIKI_CHROMIUM") \
        or shutil.which("chromium")
    if not chromium:
        fail("no chromium found (apt-get install chromium)")
    started = time.monotonic()
    os.makedirs(SHOTS, exist_ok=True)
    data = tempfile.mkdtemp(prefix="alayasiki-ui-")
    proc, base = api_process.start(binary, data, SECRET, fail)
    admin = api_process.token(SECRET, "alice", "acme", ["admin"])
    reader = api_process.token(SECRET, "rita", "acme", ["reader"])
    other = api_process.token(SECRET, "bob", "globex", ["admin"])
    secret_doc = call(base, other, "POST", "/v1/ingest", {
        "content": "Globex keeps its launch codes in the blue folder.",
        "source": "globex-secrets.txt", "wait": True})["document_id"]
    for i, text in enumerate(GRAPH):
        call(base, admin, "POST", "/v1/ingest", {"content": text, "source": "graph.txt",
                                                   "idempotency_key": f"graph-{i}", "wait": True})
    call(base, admin, "POST", "/v1/memory/write", {
        "session_id": "triage-42", "content": "Check the standby replica lag before 02:00."})
    passed = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            for width, height, tag in [(1280, 900, "1280"), (390, 844, "390")]:
                context = browser.new_context(viewport={"width": width, "height": height},
                                              accept_downloads=True)
                page = context.new_page()
                external, errors, dialogs = [], [], []
                page.on("request", lambda r: None if r.url.startswith(base) else external.append(r.url))
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                full = tag == "1280"
                passed += run_views(page, base, admin, reader, other, secret_doc, full, tag)
                passed += dark_mode(browser, base, admin, tag, width, height)
                if external:
                    fail(f"the page requested outside the server: {external}")
                if errors:
                    fail(f"script errors on the page: {errors}")
                if dialogs:
                    fail(f"a stored payload opened a dialog: {dialogs}")
                context.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)
    passed += offline(binary, chromium)
    passed += local_page(os.path.join(os.path.dirname(os.path.abspath(binary)), "alayasiki-mcp"), chromium)
    print(f"ui browser test took {time.monotonic() - started:.1f} s")
    print(f"ui-browser: {passed} passed, 0 failed")


def offline(binary, chromium):
    """Runs `offline_child` in new user and network namespaces: only a
    loopback interface, no route anywhere else."""
    # As root a network namespace alone will do; otherwise a user
    # namespace too, where this user is root.
    unshare = ["unshare", "--net"] if os.geteuid() == 0 else \
        ["unshare", "--user", "--map-root-user", "--net"]
    r = subprocess.run(unshare + [sys.executable, os.path.abspath(__file__), "--offline-child",
                                  os.path.abspath(binary), chromium], timeout=300)
    if r.returncode != 0:
        fail(f"the offline run failed (exit {r.returncode})")
    return 1


def local_page(mcp, chromium):
    """The stdio server's page, opened from the link it writes."""
    data = tempfile.mkdtemp(prefix="alayasiki-ui-local-")
    url_file = os.path.join(data, "ui.url")
    proc = subprocess.Popen([mcp, "--ui", "--data-dir", data], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(url_file):
            if time.monotonic() > deadline or proc.poll() is not None:
                fail(f"alayasiki-mcp --ui wrote no ui.url: {proc.stderr.read1(4096)!r}")
            time.sleep(0.05)
        url = open(url_file).read().strip()
        if "#secret=" not in url or not url.startswith("http://127.0.0.1:"):
            fail(f"unexpected ui.url {url!r}")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url)
            expect(page.locator("#who")).to_contain_text("Signed in as")
            if "secret" in page.url or page.evaluate("() => history.length") > 1 and "secret" in page.evaluate("() => location.href"):
                fail(f"the secret stayed in the address bar: {page.url}")
            page.locator("nav").get_by_role("button", name="Add", exact=True).click()
            page.get_by_label("Note", exact=True).fill("The local page stores notes too: kiwi harvest in May.")
            page.get_by_role("button", name="Add to memory", exact=True).click()
            expect(page.locator("#add-result")).to_contain_text("Stored as doc_")
            page.get_by_role("button", name="Open the new document", exact=True).click()
            expect(page.get_by_role("button", name="Forget…", exact=True)).to_be_enabled()
            page.get_by_role("button", name="Forget…", exact=True).click()
            page.locator("#forget-dialog").get_by_role("button", name="Forget it", exact=True).click()
            expect(page.locator("#message")).to_contain_text("Forgot 1 document")
            if errors:
                fail(f"script errors on the local page: {errors}")
            browser.close()
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            fail("alayasiki-mcp --ui did not exit when stdin closed")
        shutil.rmtree(data, ignore_errors=True)
    print("ui-browser local: alayasiki-mcp --ui's link signed in, stored and forgot")
    return 1


def loopback_up():
    """Brings `lo` up in this network namespace (SIOCGIFFLAGS/SIOCSIFFLAGS),
    without needing iproute2."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    flags = struct.unpack("16sh", fcntl.ioctl(s, 0x8913, struct.pack("16sh", b"lo", 0)))[1]
    fcntl.ioctl(s, 0x8914, struct.pack("16sh", b"lo", flags | 0x1))
    s.close()


def offline_child(binary, chromium):
    loopback_up()
    # The cut is real: nothing beyond loopback can be reached from here.
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.settimeout(5)
    code = probe.connect_ex(("1.1.1.1", 443))
    probe.close()
    if code not in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        fail(f"the network namespace is not cut off (connect gave {code})")
    data = tempfile.mkdtemp(prefix="alayasiki-ui-offline-")
    proc, base = api_process.start(binary, data, SECRET, fail)
    admin = api_process.token(SECRET, "olga", "offline", ["admin"])
    call(base, admin, "POST", "/v1/ingest", {"content": NOTE, "source": "offline.txt", "wait": True})
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page()
            failed_requests, errors = [], []
            page.on("requestfailed", lambda r: failed_requests.append(r.url))
            page.on("request", lambda r: None if r.url.startswith(base) else failed_requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            sign_in(page, base, admin)
            page.locator("nav").get_by_role("button", name="Search", exact=True).click()
            page.get_by_label("Question", exact=True).fill("When does the billing database backup run?")
            page.locator("#search-form").get_by_role("button", name="Search", exact=True).click()
            expect(page.locator("#evidence > li").first).to_contain_text("02:00")
            page.locator("nav").get_by_role("button", name="Graph", exact=True).click()
            expect(page.locator("#graph-summary")).to_contain_text("entit")
            if failed_requests or errors:
                fail(f"offline: requests {failed_requests}, script errors {errors}")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)
    print("ui-browser offline: the page loaded, signed in and searched with no network")


def foreign_link(page, base, token):
    """A link carrying a JWT in the fragment (a foreign page's login CSRF)
    signs nobody in; the fragment is cleared all the same."""
    page.goto(base + "/ui#secret=" + token)
    expect(page.get_by_label("API token", exact=True)).to_be_visible()
    if page.evaluate("() => sessionStorage.length") != 0 or "secret" in page.url:
        fail("a link with a JWT in its fragment signed in or stayed in the address bar")
    expect(page.locator("#app")).to_be_hidden()


def sign_in(page, base, token):
    page.goto(base + "/ui")
    page.get_by_label("API token", exact=True).fill(token)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.locator("#who")).to_contain_text("Signed in as")


def sign_out(page):
    page.get_by_role("button", name="Sign out", exact=True).click()
    expect(page.get_by_label("API token", exact=True)).to_be_visible()
    stored = page.evaluate("() => sessionStorage.length + document.cookie.length")
    if stored != 0:
        fail("sign-out left the token behind")


def graph_views(page, shot):
    """A document's chunks and entities; an entity's relations with their
    evidence; the neighbourhood expanded and zoomed; the communities."""
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill("graph.txt")
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("6 document(s) match")
    page.locator("#documents > li", has_text="Dana Scully").get_by_role("button", name="Open", exact=True).click()
    expect(page.locator("#document-chunks")).to_contain_text("Dana Scully works at Acme Corp.")
    chip = page.locator("#document-entities button", has_text="Acme Corp.")
    expect(chip).to_have_count(1)
    expect(page.locator("#document-chunks mark.entity").first).to_be_visible()
    chip.click()
    expect(page.locator("#view-graph")).to_be_visible()
    expect(page.locator("#entity-title")).to_have_text("Acme Corp.")
    relations = page.locator("#entity-relations")
    expect(relations).to_contain_text("Widgets Inc.")
    expect(relations).to_contain_text("confidence")
    expect(relations.locator("blockquote", has_text="acquired Widgets Inc.").first).to_be_visible()
    nodes = page.locator("#graph g.node")
    expect(nodes.first).to_be_visible()
    before = nodes.count()
    if before < 2:
        fail(f"the neighbourhood of Acme Corp. shows {before} entities")
    # Expand a neighbour by clicking it: it becomes the entity shown.
    page.locator('#graph g.node[aria-label^="Widgets Inc."]').click()
    expect(page.locator("#entity-title")).to_have_text("Widgets Inc.")
    if nodes.count() < before:
        fail("expanding an entity lost nodes")
    # Zoom with the buttons, and by keyboard on the graph.
    scale = lambda: page.locator("#graph > g").get_attribute("transform")
    at = scale()
    page.get_by_role("button", name="Zoom in", exact=True).click()
    if scale() == at:
        fail("zoom in did not change the view")
    page.locator("#graph").focus()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#communities > li").first).to_be_visible()
    if page.locator("#communities .swatch").count() == 0:
        fail("communities have no colours")
    shot("graph")
    return 1


HUB = [f"{head}{tail} Inc." for head in ["Bar", "Cor", "Dal", "Fen", "Gor", "Hal", "Jor"]
       for tail in ["ton", "vik", "mar", "dor", "lin", "ris", "bek", "sen", "wald", "ford"]][:64]


def graph_paging(page, base, admin, shot):
    """A graph larger than one picture: no warning on the first visit but
    "Show 50 more", which adds entities; labels readable when the picture
    is fitted; Find centres and highlights; an entity's many relations
    come a page at a time."""
    call(base, admin, "POST", "/v1/ingest", {
        "content": "\n\n".join(f"Globex Corp. acquired {n}" for n in HUB), "source": "hub.txt", "wait": True})
    page.reload()  # a first visit of the graph view, as a new reader's
    expect(page.locator("#who")).to_contain_text("Signed in as")
    page.locator("nav").get_by_role("button", name="Graph", exact=True).click()
    nodes = page.locator("#graph g.node")
    expect(page.locator("#graph-summary")).to_contain_text("50 entities")
    expect(page.locator("#message")).to_be_hidden()
    more = page.get_by_role("button", name="Show 50 more", exact=True)
    expect(more).to_be_visible()
    more.click()
    expect(page.locator("#graph-summary")).not_to_contain_text("50 entities")
    if nodes.count() <= 50:
        fail(f"Show 50 more did not add entities ({nodes.count()})")
    page.get_by_role("button", name="Fit to view", exact=True).click()
    box = page.locator("#graph").bounding_box()
    # Every entity inside the view; the labels shown are 10 px or more and
    # overlap none other (crowded ones wait for a zoom, named in tooltips).
    for b in page.evaluate("() => [...document.querySelectorAll('#graph .node circle')].map(c => { const r = c.getBoundingClientRect(); return [r.x, r.y, r.right, r.bottom]; })"):
        if b[0] < box["x"] or b[1] < box["y"] or b[2] > box["x"] + box["width"] or b[3] > box["y"] + box["height"]:
            fail(f"Fit to view left an entity outside the view: {b}")
    labels = page.evaluate("() => [...document.querySelectorAll('#graph .node text')].filter(t => getComputedStyle(t).display !== 'none').map(t => { const r = t.getBoundingClientRect(); return [r.x, r.y, r.right, r.bottom]; })")
    if len(labels) < 10 or min(b[3] - b[1] for b in labels) < 10:
        fail(f"too few or too small labels when fitted: {len(labels)}")
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1:
                fail(f"two labels overlap: {a} {b}")
    shot("graph-fitted")
    page.get_by_label("Find an entity", exact=True).fill("Globex")
    page.locator("#entity-form").get_by_role("button", name="Find", exact=True).click()
    expect(page.locator("#entity-title")).to_have_text("Globex Corp.")
    hub = page.locator('#graph g.node.selected[aria-label^="Globex Corp."]')
    expect(hub).to_have_count(1)
    box = page.locator("#graph").bounding_box()  # the found names above it moved it
    at = hub.locator("circle").bounding_box()
    dx = at["x"] + at["width"] / 2 - (box["x"] + box["width"] / 2)
    dy = at["y"] + at["height"] / 2 - (box["y"] + box["height"] / 2)
    if abs(dx) > 20 or abs(dy) > 20:
        fail(f"Find did not centre the entity (off by {dx:.0f}, {dy:.0f} px)")
    relations = page.locator("#entity-relations > li")
    expect(relations).to_have_count(10)
    expect(page.locator("#relations-count")).to_have_text(f"10 of {len(HUB)} relation(s)")
    page.get_by_role("button", name=f"Show 10 more relations ({len(HUB) - 10} left)", exact=True).click()
    expect(relations).to_have_count(20)
    shot("graph-find")
    return 1


def sessions_view(page, shot, tag):
    page.locator("nav").get_by_role("button", name="Working memory", exact=True).click()
    row = page.locator("#sessions > li", has_text="triage-42")
    expect(row).to_contain_text("time left:")
    row.get_by_role("button", name="Open", exact=True).click()
    expect(page.locator("#session-notes")).to_contain_text("standby replica lag")
    shot("sessions")
    return 1


def upload_file(page, base, admin, tag):
    """A file through the page's upload form, then its original back."""
    page.locator("nav").get_by_role("button", name="Add", exact=True).click()
    name = f"pixel-{tag}.png"
    page.get_by_label("File (", exact=False).set_input_files(
        files=[{"name": name, "mimeType": "image/png", "buffer": PNG}])
    page.get_by_label("Description", exact=False).fill("a single grey pixel")
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.locator("#add-result")).to_contain_text("Stored as doc_")
    doc = page.locator("#add-result").inner_text().split("Stored as ", 1)[1].split(" ", 1)[0]
    page.get_by_role("button", name="Open the new document", exact=True).click()
    expect(page.locator("#document-facts")).to_contain_text("image/png")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download original", exact=True).click()
    if open(info.value.path(), "rb").read() != PNG:
        fail("the uploaded file came back different")
    # Filters: by source and type, and a period with nothing in it.
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill(name)
    page.get_by_label("Media type", exact=True).select_option("image/png")
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("1 document(s) match")
    expect(page.locator(f'#documents > li[data-document-id="{doc}"]')).to_have_count(1)
    page.get_by_label("Stored until", exact=True).fill("2000-01-01")
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("0 document(s) match")
    page.get_by_label("Stored until", exact=True).fill("")
    page.get_by_label("Media type", exact=True).select_option("")
    return 1


def forget_source(page, base, admin, shot, tag):
    """Forgetting a whole source: the dialog counts and names what goes."""
    source = f"bulk-{tag}.txt"
    for i in range(3):
        # One title holds a right-to-left override: set between isolates,
        # it cannot reorder the id and size the confirmation names after it.
        text = "Old draft \u202etesting" if i == 0 else f"Bulk note {i} about rotation schedules."
        call(base, admin, "POST", "/v1/ingest", {"content": text, "source": source, "wait": True})
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill(source)
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("3 document(s) match")
    page.get_by_role("button", name="Forget every document of this source…", exact=True).click()
    dialog = page.locator("#source-dialog")
    expect(dialog).to_contain_text(f"all 3 document(s) whose source is exactly \u201c\u2068{source}\u2069\u201d")
    expect(dialog.locator("li")).to_have_count(3)
    expect(dialog.locator("li").filter(has_text="Old draft")).to_contain_text("\u2068Old draft \u202etesting\u2069 · doc_")
    shot("forget-source")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    if call(base, admin, "GET", "/v1/documents?source=" + source)["total"] != 3:
        fail("cancelling forgot something")
    page.get_by_role("button", name="Forget every document of this source…", exact=True).click()
    dialog.get_by_role("button", name="Forget them", exact=True).click()
    expect(page.locator("#message")).to_contain_text(f"Forgot 3 document(s) of source \u201c\u2068{source}\u2069\u201d")
    if call(base, admin, "GET", "/v1/documents?source=" + source)["total"] != 0:
        fail("the source's documents are still there")
    return 1


def version_history(page, base, admin, shot, tag):
    """A document updated (PATCH): the list shows its current version, the
    history filter both; either version opens with the chain, the old one
    marked superseded and naming its successor."""
    source = f"roster-{tag}.txt"
    old = call(base, admin, "POST", "/v1/ingest",
               {"content": "Dana leads the platform team.", "source": source, "wait": True})["document_id"]
    new = call(base, admin, "PATCH", f"/v1/documents/{old}",
               {"content": "Lee leads the platform team."})["document_id"]
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill(source)
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("1 document(s) match")
    expect(page.locator(f'#documents > li[data-document-id="{new}"]')).to_have_count(1)
    page.get_by_label("Superseded versions too", exact=True).check()
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("2 document(s) match")
    old_row = page.locator(f'#documents > li[data-document-id="{old}"]')
    expect(old_row).to_contain_text("Superseded")
    old_row.get_by_role("button", name="Open", exact=True).click()
    expect(page.locator("#document-superseded")).to_contain_text(f"by {new}")
    versions = page.locator("#document-versions > li")
    expect(versions).to_have_count(2)
    expect(versions.first).to_contain_text("superseded")
    expect(versions.first).to_contain_text("(this version)")
    expect(versions.last).to_contain_text("current")
    shot("versions")
    versions.last.get_by_role("button", name="Open", exact=True).click()
    expect(page.locator("#document-facts")).to_contain_text(new)
    expect(page.locator("#document-superseded")).to_be_hidden()
    expect(page.locator("#document-text")).to_contain_text("Lee leads")
    expect(page.locator("#document-versions > li").last).to_contain_text("(this version)")
    page.get_by_role("button", name="Forget…", exact=True).click()
    expect(page.locator("#forget-facts")).to_contain_text("2, all forgotten with it")
    page.keyboard.press("Escape")
    expect(page.locator("#forget-dialog")).to_be_hidden()
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Superseded versions too", exact=True).uncheck()
    page.get_by_label("Source", exact=True).fill("")
    return 1


MARKDOWN = """---
title: Release checklist {tag}
layout: page
---
# Steps

Run **make check** and read [the guide](https://example.org/guide).

- first step
- second step

```
cargo test
```

[x](javascript:alert(1)) <img src=x onerror="window.__pwned = 'md-img'"> <script>window.__pwned = 'md'</script>
"""


def documents_browsing(page, base, admin, shot, tag):
    """The list's rows: front-matter title, snippet, human time, no empty
    provenance; sorting; a Markdown document rendered (and its hostile
    parts inert), its metadata as a table; an edit that stores a new
    version."""
    source = f"guide-{tag}.md"
    doc = call(base, admin, "POST", "/v1/ingest", {
        "content": MARKDOWN.format(tag=tag), "media_type": "text/markdown", "source": source,
        "metadata": {"team": "release"}, "wait": True})["document_id"]
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill(source)
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    row = page.locator(f'#documents > li[data-document-id="{doc}"]')
    expect(row.locator(".item-title")).to_have_text(f"Release checklist {tag}")
    expect(row.locator(".snippet")).to_contain_text("# Steps Run **make check**")
    expect(row.locator("time")).to_have_text("stored just now")
    if not row.locator("time").get_attribute("title"):
        fail("a stored time has no full time in its tooltip")
    if "·  ·" in row.inner_text() or "· ·" in row.inner_text():
        fail(f"an empty fact shows in a row: {row.inner_text()!r}")
    row.get_by_role("button", name="Open", exact=True).click()
    rendered = page.locator("#document-rendered")
    expect(rendered.locator("h3")).to_have_text("Steps")
    expect(rendered.locator("strong")).to_have_text("make check")
    expect(rendered.locator("li")).to_have_count(2)
    expect(rendered.locator("pre code")).to_have_text("cargo test")
    link = rendered.locator("a")
    expect(link).to_have_count(1)
    expect(link).to_have_attribute("href", "https://example.org/guide")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(rendered).to_contain_text("[x](javascript:alert(1))")
    expect(rendered).to_contain_text("<img src=x onerror=")
    if page.locator("main img, main script").count() != 0 or page.evaluate("() => window.__pwned") is not None:
        fail("Markdown made stored markup live")
    meta = page.locator("#document-metadata")
    expect(meta.locator("tr", has_text="team")).to_contain_text("release")
    shot("markdown")
    # Edit: a new title and text make a new version; the old one is history.
    page.get_by_role("button", name="Edit…", exact=True).click()
    page.get_by_label("Title", exact=True).fill(f"Release checklist {tag} v2")
    page.get_by_label("Text", exact=True).fill("# Steps\n\nRun make check twice.")
    shot("edit")
    page.get_by_role("button", name="Save a new version", exact=True).click()
    expect(page.locator("#message")).to_contain_text("Saved a new version")
    expect(page.locator("#document-title")).to_have_text(f"Release checklist {tag} v2")
    expect(page.locator("#document-rendered")).to_contain_text("Run make check twice.")
    listed = call(base, admin, "GET", f"/v1/documents?source={source}&include_history=true")
    if listed["total"] != 2 or listed["documents"][0]["title"] != f"Release checklist {tag} v2":
        fail(f"the edit did not store a new version: {listed}")
    # Sorting by title reorders the rows shown.
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill("graph.txt")
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("6 document(s) match")
    page.get_by_label("Sort", exact=True).select_option("title")
    # The rows are fetched again in the new order: wait for them, then read.
    expect(page.locator("#documents .item-title").first).to_have_text(
        "Acme Corp. acquired Widgets Inc. after a long negotiation.")
    titles = page.locator("#documents .item-title").all_inner_texts()
    if titles != sorted(titles, key=str.lower) or titles[0] != "Acme Corp. acquired Widgets Inc. after a long negotiation.":
        fail(f"sorting by title gave {titles}")
    page.get_by_label("Sort", exact=True).select_option("oldest")
    expect(page.locator("#documents .item-title").first).to_have_text(GRAPH[0])
    page.get_by_label("Sort", exact=True).select_option("newest")
    expect(page.locator("#documents .item-title").first).to_have_text(GRAPH[-1])
    shot("documents-list")
    page.get_by_label("Source", exact=True).fill("")
    return 1


def bulk_forget(page, base, admin, shot, tag):
    """Two of three documents selected and forgotten: exactly those go."""
    source = f"pick-{tag}.txt"
    notes = ["Tide tables are printed each spring.", "The harbour crane was serviced in March.",
             "Ferry tickets cost more on weekends."]
    ids = [call(base, admin, "POST", "/v1/ingest", {"content": f"{text} ({tag})", "source": source,
                                                    "wait": True})["document_id"] for text in notes]
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill(source)
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("3 document(s) match")
    for d in ids[:2]:
        page.locator(f'#documents > li[data-document-id="{d}"] input.select').check()
    expect(page.locator("#bulk-count")).to_have_text("2 selected")
    page.get_by_role("button", name="Forget selected…", exact=True).click()
    dialog = page.locator("#bulk-dialog")
    expect(dialog.locator("h2")).to_have_text("Forget 2 document(s)?")
    expect(dialog.locator("li")).to_have_count(2)
    shot("bulk-forget")
    page.keyboard.press("Escape")
    if call(base, admin, "GET", f"/v1/documents?source={source}")["total"] != 3:
        fail("cancelling a bulk forget forgot something")
    page.get_by_role("button", name="Forget selected…", exact=True).click()
    dialog.get_by_role("button", name="Forget 2 document(s)", exact=True).click()
    expect(page.locator("#message")).to_contain_text("Forgot 2 document(s).")
    left = call(base, admin, "GET", f"/v1/documents?source={source}")
    if [d["document_id"] for d in left["documents"]] != [ids[2]]:
        fail(f"bulk forget did not remove exactly the selected: {left}")
    expect(page.locator("#bulk-bar")).to_be_hidden()
    page.get_by_label("Source", exact=True).fill("")
    return 1


def bulk_share(page, base, admin, shot, tag):
    """Two documents selected and shared into a memory scope: both carry it."""
    source = f"share-{tag}.txt"
    ids = [call(base, admin, "POST", "/v1/ingest", {"content": f"{text} ({tag})", "source": source,
                                                    "wait": True})["document_id"]
           for text in ["The lighthouse lamp is cleaned on Fridays.",
                        "Buoy 7 was repainted green."]]
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill(source)
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("2 document(s) match")
    for d in ids:
        page.locator(f'#documents > li[data-document-id="{d}"] input.select').check()
    page.get_by_role("button", name="Share selected…", exact=True).click()
    dialog = page.locator("#share-dialog")
    expect(dialog.locator("h2")).to_have_text("Share 2 document(s)?")
    dialog.get_by_label("Into the memory scope").fill(f"harbour-{tag}")
    shot("bulk-share")
    dialog.get_by_role("button", name="Share 2 document(s)", exact=True).click()
    expect(page.locator("#message")).to_contain_text(f"Shared 2 document(s) into harbour-{tag}.")
    for d in ids:
        scopes = [s["scope"] for s in call(base, admin, "GET", f"/v1/documents/{d}")["scopes"]]
        if f"harbour-{tag}" not in scopes:
            fail(f"the page's share did not grant {d} into the scope: {scopes}")
    page.get_by_role("button", name="Clear selection", exact=True).click()
    page.get_by_label("Source", exact=True).fill("")
    return 1


def dark_mode(browser, base, admin, tag, width, height):
    """Under a dark system colour scheme the page is dark, text light."""
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme="dark")
    page = context.new_page()
    sign_in(page, base, admin)
    expect(page.locator("#overview-counts > li").first).to_be_visible()
    rgb = lambda css: [int(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
    bg = rgb(page.evaluate("() => getComputedStyle(document.body).backgroundColor"))
    fg = rgb(page.evaluate("() => getComputedStyle(document.body).color"))
    if sum(bg) > 150 or sum(fg) < 500:
        fail(f"dark mode did not apply: background {bg}, text {fg}")
    page.screenshot(path=os.path.join(SHOTS, f"overview-dark-{tag}.png"), full_page=True)
    page.get_by_role("button", name="Documents", exact=True).click()
    expect(page.locator("#documents > li").first).to_be_visible()
    page.screenshot(path=os.path.join(SHOTS, f"documents-dark-{tag}.png"), full_page=True)
    context.close()
    return 1


def run_views(page, base, admin, reader, other, secret_doc, full, tag):
    checks = 0
    shot = lambda name: page.screenshot(path=os.path.join(SHOTS, f"{name}-{tag}.png"), full_page=True)
    foreign_link(page, base, admin)
    checks += 1
    sign_in(page, base, admin)
    if "alayasiki" in page.url.split("/ui", 1)[1] or "eyJ" in page.url:
        fail("the token reached the URL")
    if page.evaluate("() => document.cookie") != "":
        fail("a cookie was set")
    expect(page.locator("#status-list")).to_contain_text("Documents")
    expect(page.locator("#status-list")).to_contain_text("Store size")
    expect(page.locator("#overview-counts")).to_contain_text("documents")
    expect(page.locator("#overview-counts")).to_contain_text("failed jobs")
    expect(page.locator("#overview-counts")).to_contain_text("entities")
    expect(page.locator("#overview-counts")).to_contain_text("relations")
    if page.locator("#overview-counts > li", has_text="entities").locator("strong").inner_text() in ("", "\u2014"):
        fail("the overview shows no entity count")
    expect(page.locator("#overview-recent > li").first).to_contain_text("stored")
    shot("status")
    checks += 1

    # Add a note (ingest through the page); keyboard only.
    page.locator("nav").get_by_role("button", name="Add", exact=True).click()
    page.get_by_label("Note", exact=True).fill(NOTE + f" ({tag})")
    page.get_by_label("Note source", exact=True).fill(f"ops-{tag}.txt")
    page.get_by_label("Note", exact=True).focus()
    page.keyboard.press("Tab")  # source
    page.keyboard.press("Tab")  # format
    page.keyboard.press("Tab")  # submit
    page.keyboard.press("Enter")
    expect(page.locator("#add-result")).to_contain_text("Stored as doc_")
    note_id = page.locator("#add-result").inner_text().split("Stored as ", 1)[1].split(" ", 1)[0]
    shot("add")
    checks += 1

    if full:
        page.get_by_label("Note", exact=True).fill(XSS)
        page.get_by_label("Note source", exact=True).fill("<img src=x onerror=alert(1)>.html")
        page.get_by_role("button", name="Add to memory", exact=True).click()
        expect(page.locator("#add-result")).to_contain_text("Stored as doc_")

    # Search: the note's chunk is the first evidence, with lanes and score.
    page.locator("nav").get_by_role("button", name="Search", exact=True).click()
    page.get_by_label("Question", exact=True).fill("When does the billing database backup run?")
    page.locator("#search-form").get_by_role("button", name="Search", exact=True).click()
    first = page.locator("#evidence > li").first
    expect(first).to_contain_text("02:00")
    expect(first).to_contain_text(f"ops-{tag}.txt")
    expect(first).to_contain_text("lanes:")
    expect(first.locator("mark")).to_contain_text("runs at 02:00")
    expect(page.locator("#answer-text")).to_contain_text("[1]")
    # Citations by title, the ids in the tooltip.
    cite = page.locator("#citations > li").first
    expect(cite).to_contain_text("Invoices are archived monthly")
    if note_id not in (cite.locator(".cite").get_attribute("title") or "") or "doc_" in cite.inner_text():
        fail(f"a citation shows a raw id or hides it: {cite.inner_text()!r}")
    shot("search")
    page.get_by_label("Evidence only", exact=True).check()
    page.locator("#search-form").get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#answer")).to_be_hidden()
    expect(page.locator("#evidence > li").first).to_contain_text("02:00")
    expect(page.locator("#evidence mark")).to_have_count(0)
    checks += 1

    if full:
        # Stored markup is shown as text and runs nothing.
        page.get_by_label("Question", exact=True).fill("zanzibar payload")
        page.locator("#search-form").get_by_role("button", name="Search", exact=True).click()
        expect(page.locator("#evidence")).to_contain_text("<script>window.__pwned")
        expect(page.locator("#evidence")).to_contain_text("<img src=x onerror=")
        if page.locator("#evidence img, #evidence script").count() != 0:
            fail("a stored payload became markup")
        page.get_by_role("button", name="Documents", exact=True).click()
        expect(page.locator("#documents")).to_contain_text("<img src=x onerror=alert(1)>.html")
        page.locator("#documents > li").first.get_by_role("button", name="Open", exact=True).click()
        expect(page.locator("#document-text")).to_contain_text("<script>window.__pwned")
        if page.evaluate("() => window.__pwned") is not None:
            fail("a stored payload ran")
        if page.locator("main img, main script").count() != 0:
            fail("a stored payload became markup")
        checks += 1

    # Documents: newest first, open, download the original.
    page.get_by_role("button", name="Documents", exact=True).click()
    row = page.locator(f'#documents > li[data-document-id="{note_id}"]')
    expect(row).to_contain_text(f"ops-{tag}.txt")
    shot("documents")
    row.get_by_role("button", name="Open", exact=True).click()
    expect(page.locator("#document-facts")).to_contain_text(note_id)
    expect(page.locator("#document-text")).to_contain_text(NOTE)
    shot("document")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download original", exact=True).click()
    got = open(info.value.path(), "rb").read()
    want = urllib.request.urlopen(urllib.request.Request(
        f"{base}/v1/documents/{note_id}/original",
        headers={"Authorization": f"Bearer {admin}"})).read()
    if got != want or got != (NOTE + f" ({tag})").encode():
        fail(f"downloaded original differs: {got!r}")
    checks += 1

    checks += documents_browsing(page, base, admin, shot, tag)
    checks += bulk_forget(page, base, admin, shot, tag)
    checks += bulk_share(page, base, admin, shot, tag)
    checks += graph_views(page, shot)
    if full:
        checks += graph_paging(page, base, admin, shot)
    checks += sessions_view(page, shot, tag)
    checks += upload_file(page, base, admin, tag)
    checks += forget_source(page, base, admin, shot, tag)
    checks += version_history(page, base, admin, shot, tag)
    # Back to the note for the single-document forget below.
    page.get_by_role("button", name="Documents", exact=True).click()
    page.locator(f'#documents > li[data-document-id="{note_id}"]').get_by_role("button", name="Open", exact=True).click()
    expect(page.locator("#document-facts")).to_contain_text(note_id)

    # Forget: the dialog names the document; cancel keeps it, confirm removes it.
    page.get_by_role("button", name="Forget…", exact=True).click()
    dialog = page.locator("#forget-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(note_id)
    expect(dialog).to_contain_text(f"ops-{tag}.txt")
    shot("forget-dialog")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator("#document-facts")).to_contain_text(note_id)
    page.get_by_role("button", name="Forget…", exact=True).click()
    dialog.get_by_role("button", name="Forget it", exact=True).click()
    expect(page.locator("#message")).to_contain_text("Forgot 1 document")
    expect(page.locator(f'#documents > li[data-document-id="{note_id}"]')).to_have_count(0)
    try:
        call(base, admin, "GET", f"/v1/documents/{note_id}")
        fail("the forgotten document is still there")
    except urllib.error.HTTPError as e:
        if e.code != 404:
            fail(f"forgotten document: {e.code}")
    checks += 1

    # Tenant isolation: acme's token sees nothing of globex.
    page.get_by_label("Source", exact=True).fill("globex-secrets.txt")
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents")).to_contain_text("No documents match.")
    expect(page.locator("#documents-total")).to_contain_text("0 document(s) match")
    page.locator("nav").get_by_role("button", name="Search", exact=True).click()
    page.get_by_label("Question", exact=True).fill("launch codes blue folder")
    page.locator("#search-form").get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#search-summary")).to_contain_text("evidence item(s)")
    if "launch codes" in page.locator("#evidence").inner_text() or secret_doc in page.content():
        fail("tenant A saw tenant B's document")
    sign_out(page)
    sign_in(page, base, other)
    page.get_by_role("button", name="Documents", exact=True).click()
    expect(page.locator(f'#documents > li[data-document-id="{secret_doc}"]')).to_have_count(1)
    if "ops-" in page.locator("#documents").inner_text():
        fail("tenant B saw tenant A's documents")
    page.locator("nav").get_by_role("button", name="Graph", exact=True).click()
    expect(page.locator("#graph-summary")).to_contain_text("entit")
    for name in ["Acme", "Widgets", "Lisbon"]:
        if name in page.locator("#view-graph").inner_text():
            fail("tenant B saw tenant A's entities")
    page.locator("nav").get_by_role("button", name="Working memory", exact=True).click()
    expect(page.locator("#sessions")).to_contain_text("No working-memory sessions")
    sign_out(page)
    checks += 1

    # A reader can look but not forget.
    sign_in(page, base, reader)
    page.get_by_role("button", name="Documents", exact=True).click()
    page.locator("#documents > li").first.get_by_role("button", name="Open", exact=True).click()
    expect(page.get_by_role("button", name="Forget…", exact=True)).to_be_disabled()
    expect(page.locator("#forget-note")).to_contain_text("cannot forget")
    page.get_by_role("button", name="Documents", exact=True).click()
    page.get_by_label("Source", exact=True).fill("graph.txt")
    page.locator("#documents-form").get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#documents-total")).to_contain_text("6 document(s) match")
    expect(page.locator("#source-forget")).to_be_hidden()
    page.locator("nav").get_by_role("button", name="Add", exact=True).click()
    page.get_by_label("Note", exact=True).fill("a reader's note")
    page.get_by_role("button", name="Add to memory", exact=True).click()
    expect(page.locator("#message")).to_contain_text("Not allowed")
    sign_out(page)
    checks += 1

    # A refused token is told and kept nowhere.
    page.get_by_label("API token", exact=True).fill("not-a-token")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.locator("#message")).to_contain_text("refused")
    if page.evaluate("() => sessionStorage.length") != 0:
        fail("a refused token was kept")
    checks += 1
    return checks


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--offline-child":
        offline_child(sys.argv[2], sys.argv[3])
    else:
        main()
