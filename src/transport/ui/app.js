// The memory browser. Everything stored is untrusted: it is only ever put
// into the page with textContent, never parsed as HTML, and every API call
// sends the token from sessionStorage as a bearer header.
"use strict";

const TOKEN_KEY = "alayasiki.token";
const $ = (id) => document.getElementById(id);

let current = null; // the document open in the document view
let nextBefore = null; // the documents list's next page
let mayForget = false;

function token() { return sessionStorage.getItem(TOKEN_KEY); }

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function show(message, ok) {
  const m = $("message");
  m.textContent = message;
  m.classList.toggle("ok", !!ok);
  m.hidden = !message;
}

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

async function api(method, path, body, raw) {
  const headers = { Authorization: "Bearer " + token() };
  const init = { method, headers, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" };
  if (body !== undefined) { headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const r = await fetch(path, init);
  if (!r.ok) {
    let code = "http_" + r.status, message = r.statusText || "request failed";
    try { const e = (await r.json()).error; code = e.code; message = e.message; } catch (_) { /* not JSON */ }
    if (r.status === 401) { signOut(); message = "the token was refused (" + message + "); sign in again"; }
    throw new ApiError(r.status, code, message);
  }
  return raw ? r : r.json();
}

function failed(e) {
  if (e instanceof ApiError && e.status === 403) show("Not allowed: " + e.message + " (" + e.code + ")");
  else show(e instanceof ApiError ? e.message + " (" + e.code + ")" : "Error: " + e.message);
}

// What the token says it grants (decoded, not verified: the server decides;
// this only greys out what would be refused).
function claims() {
  try {
    const part = token().split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part + "=".repeat((4 - part.length % 4) % 4)));
  } catch (_) { return {}; }
}
function grantsIngest() {
  const c = claims();
  const roles = Array.isArray(c.roles) ? c.roles : String(c.roles || "").split(/\s+/);
  const scopes = String(c.scope || c.scp || "").split(/\s+/);
  return roles.includes("admin") || roles.includes("ingestor") ||
    scopes.includes("admin:*") || scopes.includes("ingest:write");
}

function fact(dl, name, value) {
  dl.append(el("dt", name), el("dd", value === null || value === undefined || value === "" ? "—" : value));
}

function bytes(n) {
  if (typeof n !== "number") return "—";
  if (n < 1024) return n + " B";
  if (n < 1048576) return (n / 1024).toFixed(1) + " KiB";
  return (n / 1048576).toFixed(1) + " MiB";
}

// --- views -----------------------------------------------------------------

function view(name) {
  for (const s of document.querySelectorAll(".view")) s.hidden = s.id !== "view-" + name;
  for (const t of document.querySelectorAll(".tab")) {
    if (t.dataset.view === name) t.setAttribute("aria-current", "page"); else t.removeAttribute("aria-current");
  }
  show("");
  if (name === "status") loadStatus();
  if (name === "documents") loadDocuments(false);
  const h = document.querySelector("#view-" + name + " h2");
  if (h) { h.tabIndex = -1; h.focus(); }
}

async function signIn(t) {
  sessionStorage.setItem(TOKEN_KEY, t);
  try {
    const s = await api("GET", "/v1/status");
    $("who").textContent = "Signed in as " + s.subject + " · tenant " + s.tenant;
    $("sign-in").hidden = true; $("app").hidden = false; $("sign-out").hidden = false;
    mayForget = grantsIngest();
    view("status");
  } catch (e) {
    sessionStorage.removeItem(TOKEN_KEY);
    failed(e);
  }
}

function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  current = null;
  $("who").textContent = "";
  $("app").hidden = true; $("sign-out").hidden = true; $("sign-in").hidden = false;
  for (const id of ["status-list", "evidence", "citations", "documents", "document-facts"]) $(id).replaceChildren();
  $("usage-table").tBodies[0].replaceChildren();
  $("answer").hidden = true;
  $("token").value = "";
}

async function loadStatus() {
  try {
    const s = await api("GET", "/v1/status");
    const dl = $("status-list");
    dl.replaceChildren();
    fact(dl, "Tenant", s.tenant);
    fact(dl, "Subject", s.subject);
    fact(dl, "Documents", s.documents);
    fact(dl, "Chunks", s.chunks);
    fact(dl, "Pending jobs", s.jobs ? s.jobs.pending : null);
    fact(dl, "Failed jobs", s.jobs ? s.jobs.failed : null);
    fact(dl, "Store size", bytes(s.store_bytes));
    fact(dl, "Durability", s.durability);
    fact(dl, "Server version", s.version);
    const u = s.usage || {};
    fact(dl, "Your calls", u.calls);
    const body = $("usage-table").tBodies[0];
    body.replaceChildren();
    for (const op of u.by_operation || []) {
      const tr = el("tr");
      for (const v of [op.operation, op.calls, op.request_bytes, op.reply_bytes, op.duration_ms]) tr.append(el("td", v));
      body.append(tr);
    }
  } catch (e) { failed(e); }
}

// An evidence item's text with the sentences the answer quotes from it
// marked. Spans are UTF-8 byte offsets into the document's text; the
// item's own span says where its text starts.
function chunkText(text, itemSpan, quoted) {
  const p = el("p", null, "chunk");
  const enc = new TextEncoder().encode(text || "");
  const dec = new TextDecoder("utf-8", { fatal: true });
  const base = itemSpan ? itemSpan.start : 0;
  const ranges = quoted.map((s) => [s.start - base, s.end - base])
    .filter(([a, b]) => a >= 0 && b <= enc.length && a < b).sort((x, y) => x[0] - y[0]);
  try {
    let at = 0;
    for (const [a, b] of ranges) {
      if (a < at) continue;
      p.append(document.createTextNode(dec.decode(enc.slice(at, a))), el("mark", dec.decode(enc.slice(a, b))));
      at = b;
    }
    p.append(document.createTextNode(dec.decode(enc.slice(at))));
  } catch (_) { p.textContent = text || ""; }
  return p;
}

function openButton(docId, label) {
  const b = el("button", label || "Open document");
  b.type = "button";
  b.addEventListener("click", () => openDocument(docId));
  return b;
}

async function search(ev) {
  ev.preventDefault();
  const f = ev.target;
  const args = {
    query: f.question.value,
    mode: f.mode.value,
    search_mode: f.search_mode.value,
    top_k: Number(f.top_k.value) || 8,
  };
  show("");
  try {
    const r = await api("POST", "/v1/query", args);
    const list = $("evidence"), cites = $("citations");
    list.replaceChildren(); cites.replaceChildren();
    const answer = r.answer;
    $("answer").hidden = !answer;
    if (answer) {
      $("answer-text").textContent = answer.text || "(no answer)";
      for (const c of answer.citations || []) {
        const li = el("li", "[" + c.marker + "] " + c.document_id + " · chunk " + c.chunk_id);
        li.append(document.createTextNode(" "), openButton(c.document_id, "Open"));
        cites.append(li);
      }
    }
    const sm = r.search_mode || {};
    $("search-summary").textContent = (r.evidence || []).length + " evidence item(s) · search mode " +
      (sm.ran || "?") + (sm.reason ? " (" + sm.reason + ")" : "");
    for (const e of r.evidence || []) {
      const li = el("li");
      li.append(el("p", "#" + e.rank + " " + (e.title || e.document_id), "item-title"));
      li.append(el("p", "source: " + (e.source || "—") + " · score " + Number(e.score).toFixed(3) +
        " · " + e.document_id + " · " + (e.created_at || ""), "meta"));
      const lanes = Object.entries(e.lanes || {}).map(([name, l]) =>
        name + " #" + l.rank + " (" + Number(l.score).toPrecision(3) + ")").join(" · ");
      li.append(el("p", "lanes: " + (lanes || "—"), "meta lanes"));
      const quoted = ((answer && answer.citations) || []).filter((c) => c.chunk_id === e.chunk_id && c.span).map((c) => c.span);
      li.append(chunkText(e.text, e.span, quoted));
      li.append(openButton(e.document_id));
      list.append(li);
    }
  } catch (e) { failed(e); }
}

async function loadDocuments(more) {
  const source = $("source-filter").value.trim();
  const q = new URLSearchParams({ limit: "20" });
  if (source) q.set("source", source);
  if (more && nextBefore !== null) q.set("before", String(nextBefore));
  try {
    const r = await api("GET", "/v1/documents?" + q.toString());
    const list = $("documents");
    if (!more) list.replaceChildren();
    for (const d of r.documents) {
      const li = el("li");
      li.dataset.documentId = d.document_id;
      li.append(el("p", d.title || d.document_id, "item-title"));
      li.append(el("p", (d.source || "no source") + " · " + d.media_type + " · " + bytes(d.bytes) + " · " + d.created_at, "meta"));
      li.append(openButton(d.document_id, "Open"));
      list.append(li);
    }
    if (!more && r.documents.length === 0) list.append(el("li", source ? "No documents from this source." : "No documents yet.", "muted"));
    nextBefore = r.next_before;
    $("documents-more").hidden = nextBefore === null;
  } catch (e) { failed(e); }
}

async function openDocument(id) {
  try {
    const d = await api("GET", "/v1/documents/" + encodeURIComponent(id));
    current = d;
    view("document");
    $("document-title").textContent = d.title || d.document_id;
    const dl = $("document-facts");
    dl.replaceChildren();
    fact(dl, "Id", d.document_id);
    fact(dl, "Source", d.source);
    fact(dl, "Media type", d.media_type);
    fact(dl, "Size", bytes(d.bytes));
    fact(dl, "SHA-256", d.sha256);
    fact(dl, "Stored", d.created_at);
    fact(dl, "Stored by", d.created_by);
    fact(dl, "State", d.state);
    if (d.error) fact(dl, "Error", d.error);
    $("document-metadata").textContent = JSON.stringify({ metadata: d.metadata, provenance: d.provenance }, null, 2);
    $("document-text").textContent = d.text || "";
    $("document-forget").disabled = !mayForget;
    $("forget-note").hidden = mayForget;
    $("forget-note").textContent = mayForget ? "" : "This token cannot forget documents (it needs the ingest:write scope or the ingestor or admin role).";
  } catch (e) { failed(e); }
}

function filename(d) {
  const ext = { "text/plain": ".txt", "text/markdown": ".md", "application/pdf": ".pdf", "text/html": ".html", "application/json": ".json" };
  const base = (d.source || d.title || d.document_id).split(/[\\/]/).pop().replace(/[^\w.\- ]+/g, "_").slice(0, 100);
  return /\.\w{1,8}$/.test(base) ? base : base + (ext[d.media_type.split(";")[0]] || "");
}

async function download() {
  if (!current) return;
  try {
    const r = await api("GET", "/v1/documents/" + encodeURIComponent(current.document_id) + "/original", undefined, true);
    const blob = new Blob([await r.arrayBuffer()], { type: "application/octet-stream" });
    const url = URL.createObjectURL(blob);
    const a = el("a");
    a.href = url; a.download = filename(current);
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  } catch (e) { failed(e); }
}

function askForget() {
  if (!current) return;
  const dl = $("forget-facts");
  dl.replaceChildren();
  fact(dl, "Document", current.title || "(untitled)");
  fact(dl, "Id", current.document_id);
  fact(dl, "Source", current.source);
  fact(dl, "Size", bytes(current.bytes));
  $("forget-dialog").returnValue = "";
  $("forget-dialog").showModal();
}

async function forget() {
  const d = current;
  try {
    const r = await api("DELETE", "/v1/documents/" + encodeURIComponent(d.document_id));
    const n = typeof r.documents === "number" ? r.documents : 1;
    current = null;
    view("documents");
    show("Forgot " + n + " document(s): " + (d.title || d.document_id) + " (" + d.document_id + "), " +
      (r.chunks || 0) + " chunk(s), " + (r.vectors || 0) + " vector(s)", true);
  } catch (e) { failed(e); }
}

async function addNote(ev) {
  ev.preventDefault();
  const f = ev.target;
  const args = { content: f.content.value, media_type: f.media_type.value, wait: true };
  if (f.source.value.trim()) args.source = f.source.value.trim();
  $("add-open").hidden = true;
  try {
    const r = await api("POST", "/v1/ingest", args);
    $("add-result").textContent = "Stored as " + r.document_id + " (" + r.state + ", " + r.chunks + " chunk(s))" +
      (r.idempotent_replay ? ", already stored before" : "");
    $("add-open").hidden = false;
    $("add-open").dataset.documentId = r.document_id;
    f.content.value = "";
  } catch (e) { failed(e); }
}

document.addEventListener("DOMContentLoaded", () => {
  $("sign-in-form").addEventListener("submit", (ev) => { ev.preventDefault(); signIn($("token").value.trim()); });
  $("sign-out").addEventListener("click", () => { signOut(); show("Signed out.", true); $("token").focus(); });
  for (const t of document.querySelectorAll(".tab")) t.addEventListener("click", () => view(t.dataset.view));
  $("status-refresh").addEventListener("click", loadStatus);
  $("search-form").addEventListener("submit", search);
  $("documents-form").addEventListener("submit", (ev) => { ev.preventDefault(); loadDocuments(false); });
  $("documents-more").addEventListener("click", () => loadDocuments(true));
  $("document-back").addEventListener("click", () => view("documents"));
  $("document-download").addEventListener("click", download);
  $("document-forget").addEventListener("click", askForget);
  $("forget-dialog").addEventListener("close", () => { if ($("forget-dialog").returnValue === "forget") forget(); });
  $("add-form").addEventListener("submit", addNote);
  $("add-open").addEventListener("click", () => openDocument($("add-open").dataset.documentId));
  if (token()) signIn(token()); else $("token").focus();
});
