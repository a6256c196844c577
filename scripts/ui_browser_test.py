"""The memory browser (/ui) in a real browser: Debian's chromium driven by
Playwright, against a real `alayasiki-api` on a fresh data directory.

Signs in with a pasted token, ingests a note through the page, searches
and checks the evidence shown, opens a document and downloads its original
(bytes compared), forgets it through the confirmation dialog and sees it
gone, checks that stored `<script>` and `<img onerror>` payloads render as
text and run nothing, that a token of tenant A sees nothing of tenant B,
that a reader cannot forget, and that the page asks for nothing outside
the server. Screenshots of the main views go to target/ui-screenshots/.

Usage: ui_browser_test.py path/to/alayasiki-api [path/to/chromium]
(chromium from PATH by default; playwright is pinned in requirements-test.txt)
"""
import json
import os
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
    chromium = sys.argv[2] if len(sys.argv) > 2 else shutil.which("chromium")
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
    print(f"ui browser test took {time.monotonic() - started:.1f} s")
    print(f"ui-browser: {passed} passed, 0 failed")


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


def run_views(page, base, admin, reader, other, secret_doc, full, tag):
    checks = 0
    shot = lambda name: page.screenshot(path=os.path.join(SHOTS, f"{name}-{tag}.png"), full_page=True)
    sign_in(page, base, admin)
    if "alayasiki" in page.url.split("/ui", 1)[1] or "eyJ" in page.url:
        fail("the token reached the URL")
    if page.evaluate("() => document.cookie") != "":
        fail("a cookie was set")
    expect(page.locator("#status-list")).to_contain_text("Documents")
    expect(page.locator("#status-list")).to_contain_text("Store size")
    shot("status")
    checks += 1

    # Add a note (ingest through the page); keyboard only.
    page.get_by_role("button", name="Add a note", exact=True).click()
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
    expect(page.locator("#citations > li").first).to_contain_text(note_id)
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
    expect(page.locator("#documents")).to_contain_text("No documents from this source.")
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
    sign_out(page)
    checks += 1

    # A reader can look but not forget.
    sign_in(page, base, reader)
    page.get_by_role("button", name="Documents", exact=True).click()
    page.locator("#documents > li").first.get_by_role("button", name="Open", exact=True).click()
    expect(page.get_by_role("button", name="Forget…", exact=True)).to_be_disabled()
    expect(page.locator("#forget-note")).to_contain_text("cannot forget")
    page.get_by_role("button", name="Add a note", exact=True).click()
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
    main()
