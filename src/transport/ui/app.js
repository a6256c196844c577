// The memory browser. Everything stored is untrusted: it is only ever put
// into the page with textContent, never parsed as HTML, and every API call
// sends the token from sessionStorage as a bearer header.
"use strict";

const TOKEN_KEY = "alayasiki.token";
const $ = (id) => document.getElementById(id);

let current = null; // the document open in the document view
let nextBefore = null; // the documents list's next page (its cursor, either order)
let listed = null; // the filters and total of the documents list shown
let chunksAfter = null; // the open document's next page of chunks
let mayForget = false;
let sessionTimer = null; // ticks the working-memory countdowns

function token() { return sessionStorage.getItem(TOKEN_KEY); }

// A stored string set between Unicode isolates (FSI ... PDI), so that a
// right-to-left override in a title or source cannot reorder the rest of
// the line it is joined into (the ids and sizes a confirmation names).
function iso(text) {
  return "\u2068" + String(text) + "\u2069";
}

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
  if (value instanceof Node) { const dd = el("dd"); dd.append(value); dl.append(el("dt", name), dd); return; }
  dl.append(el("dt", name), el("dd", value === null || value === undefined || value === "" ? "—" : value));
}

// An RFC 3339 time as a <time> saying how long ago ("3 min ago"), with the
// full local time as its tooltip.
function when(iso, prefix) {
  const t = el("time", null);
  const at = Date.parse(iso);
  if (!iso || Number.isNaN(at)) { t.textContent = (prefix || "") + "—"; return t; }
  const s = Math.round((Date.now() - at) / 1000);
  const ago = s < 45 ? "just now" : s < 3600 ? Math.max(1, Math.round(s / 60)) + " min ago"
    : s < 86400 ? Math.round(s / 3600) + " h ago" : s < 30 * 86400 ? Math.round(s / 86400) + " days ago"
    : new Date(at).toLocaleDateString();
  t.dateTime = iso;
  t.title = new Date(at).toLocaleString();
  t.textContent = (prefix || "") + ago;
  return t;
}

// Parts of a line of facts joined with " · ", empty ones left out.
function meta(parts, cls) {
  const p = el("p", null, cls || "meta");
  for (const part of parts.filter((x) => x !== null && x !== undefined && x !== "")) {
    if (p.childNodes.length) p.append(document.createTextNode(" · "));
    p.append(typeof part === "string" ? document.createTextNode(part) : part);
  }
  return p;
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
  if (sessionTimer && name !== "sessions") { clearInterval(sessionTimer); sessionTimer = null; }
  if (name === "status") loadStatus();
  if (name === "documents") loadDocuments(false);
  if (name === "graph") Graph.start();
  if (name === "sessions") loadSessions();
  const h = document.querySelector("#view-" + name + " h2");
  if (h) { h.tabIndex = -1; h.focus(); }
}

async function signIn(t) {
  sessionStorage.setItem(TOKEN_KEY, t);
  try {
    const s = await api("GET", "/v1/status");
    $("who").textContent = "Signed in as " + iso(s.subject) + " · tenant " + iso(s.tenant);
    $("sign-in").hidden = true; $("app").hidden = false; $("sign-out").hidden = false;
    // data_dir is reported only to admins, who may forget too.
    mayForget = grantsIngest() || s.data_dir !== undefined;
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
  for (const id of ["status-list", "overview-counts", "overview-recent", "evidence", "citations", "documents", "document-facts", "document-chunks",
    "document-entities", "sessions", "session-notes", "session-facts"]) $(id).replaceChildren();
  $("documents-total").textContent = "";
  $("source-forget").hidden = true;
  rows = []; selected.clear(); showSelection();
  $("session-detail").hidden = true;
  Graph.reset();
  $("usage-table").tBodies[0].replaceChildren();
  $("answer").hidden = true;
  $("token").value = "";
}

async function loadStatus() {
  try {
    const [s, recent, comms] = await Promise.all([
      api("GET", "/v1/status"),
      api("GET", "/v1/documents?limit=5"),
      api("GET", "/v1/communities").catch(() => null),
    ]);
    const counts = $("overview-counts");
    counts.replaceChildren();
    const jobs = s.jobs || {};
    for (const [name, value] of [["documents", s.documents], ["chunks", s.chunks],
      ["entities", s.entities], ["relations", s.relations],
      ["communities", comms ? (comms.communities || []).length : null],
      ["pending jobs", jobs.pending], ["failed jobs", jobs.failed], ["on disk", bytes(s.store_bytes)]]) {
      const li = el("li", null, name === "failed jobs" && jobs.failed > 0 ? "count bad" : "count");
      li.append(el("strong", value === null || value === undefined ? "—" : value), el("span", name));
      counts.append(li);
    }
    const list = $("overview-recent");
    list.replaceChildren();
    for (const d of recent.documents || []) list.append(documentRow(d, false));
    if (!(recent.documents || []).length) list.append(el("li", "No documents yet.", "muted"));
    const dl = $("status-list");
    dl.replaceChildren();
    fact(dl, "Tenant", s.tenant);
    fact(dl, "Subject", s.subject);
    fact(dl, "Documents", s.documents);
    fact(dl, "Chunks", s.chunks);
    fact(dl, "Entities", s.entities);
    fact(dl, "Relations", s.relations);
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

// A chunk's text with some spans marked: the sentences an answer quotes,
// or the entities a chunk mentions. Spans are UTF-8 byte offsets into the
// document's text; `base` is where the chunk's text starts. `mark(span,
// text)` makes the element of one marked span (a <mark> by default).
function chunkText(text, base, spans, mark) {
  const p = el("p", null, "chunk");
  const enc = new TextEncoder().encode(text || "");
  const dec = new TextDecoder("utf-8", { fatal: true });
  const ranges = spans.map((s) => [s.start - base, s.end - base, s])
    .filter(([a, b]) => a >= 0 && b <= enc.length && a < b).sort((x, y) => x[0] - y[0]);
  try {
    let at = 0;
    for (const [a, b, span] of ranges) {
      if (a < at) continue;
      const t = dec.decode(enc.slice(a, b));
      p.append(document.createTextNode(dec.decode(enc.slice(at, a))), mark ? mark(span, t) : el("mark", t));
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
      // Cited documents by title (the evidence carries them); the ids in
      // a tooltip.
      const titles = new Map((r.evidence || []).map((e) => [e.document_id, e.title]));
      for (const c of answer.citations || []) {
        const li = el("li");
        const name = el("span", "[" + c.marker + "] " + (titles.get(c.document_id) || "(untitled document)"), "cite");
        name.title = c.document_id + " · chunk " + c.chunk_id;
        li.append(name, document.createTextNode(" "), openButton(c.document_id, "Open"));
        cites.append(li);
      }
    }
    const sm = r.search_mode || {};
    $("search-summary").textContent = (r.evidence || []).length + " evidence item(s) · search mode " +
      (sm.ran || "?") + (sm.reason ? " (" + sm.reason + ")" : "");
    for (const e of r.evidence || []) {
      const li = el("li");
      li.append(el("p", "#" + e.rank + " " + (e.title || e.document_id), "item-title"));
      li.append(el("p", "source: " + iso(e.source || "—") + " · score " + Number(e.score).toFixed(3) +
        " · " + e.document_id + " · " + (e.created_at || ""), "meta"));
      const lanes = Object.entries(e.lanes || {}).map(([name, l]) =>
        name + " #" + l.rank + " (" + Number(l.score).toPrecision(3) + ")").join(" · ");
      li.append(el("p", "lanes: " + (lanes || "—"), "meta lanes"));
      const quoted = ((answer && answer.citations) || []).filter((c) => c.chunk_id === e.chunk_id && c.span).map((c) => c.span);
      li.append(chunkText(e.text, e.span ? e.span.start : 0, quoted));
      li.append(openButton(e.document_id));
      list.append(li);
    }
  } catch (e) { failed(e); }
}

// The documents list's filters, as the form has them (empty ones left out).
function documentFilters() {
  const f = {};
  for (const [name, id] of [["source", "source-filter"], ["media_type", "type-filter"],
    ["provenance", "provenance-filter"], ["since", "since-filter"], ["until", "until-filter"]]) {
    const v = $(id).value.trim();
    if (v) f[name] = v;
  }
  if ($("history-filter").checked) f.include_history = "true";
  return f;
}

let listing = 0; // the newest documents request: older answers are dropped
let rows = []; // the documents listed, as the server sent them (newest first)
const selected = new Map(); // document id -> listed document, for bulk forget

// One compact row of a document list: title, snippet, facts, stored when;
// with a selection box when `selectable`.
function documentRow(d, selectable) {
  const li = el("li");
  li.dataset.documentId = d.document_id;
  if (selectable && mayForget) {
    const box = el("input");
    box.type = "checkbox";
    box.className = "select";
    box.checked = selected.has(d.document_id);
    box.setAttribute("aria-label", "Select " + (d.title || d.document_id));
    box.addEventListener("change", () => {
      if (box.checked) selected.set(d.document_id, d); else selected.delete(d.document_id);
      showSelection();
    });
    li.append(box);
  }
  const body = el("div", null, "row-body");
  body.append(el("p", d.title || d.document_id, "item-title"));
  if (d.snippet) body.append(el("p", d.snippet, "snippet"));
  body.append(meta([iso(d.source || "no source"), d.media_type, bytes(d.bytes), d.provenance ? iso(d.provenance) : null,
    when(d.created_at, "stored ")]));
  if (d.superseded_at) {
    li.classList.add("superseded");
    body.append(meta([when(d.superseded_at, "Superseded ")]));
  }
  li.append(body, openButton(d.document_id, "Open"));
  return li;
}

function showSelection() {
  $("bulk-bar").hidden = selected.size === 0;
  $("bulk-count").textContent = selected.size + " selected";
}

// The listed rows, in the order the server paged them (newest, oldest or
// by title).
function renderDocuments() {
  const list = $("documents");
  list.replaceChildren(...rows.map((d) => documentRow(d, true)));
  if (!rows.length) {
    list.append(el("li", Object.keys(listed ? listed.filters : {}).length ? "No documents match." : "No documents yet.", "muted"));
  }
}

async function loadDocuments(more) {
  const mine = ++listing;
  const filters = documentFilters();
  const source = filters.source;
  const q = new URLSearchParams({ limit: "50", ...filters });
  const order = $("sort-filter").value;
  const forward = order === "oldest" || order === "title";
  if (forward) q.set("order", order);
  if (more && nextBefore !== null) q.set(forward ? "after" : "before", String(nextBefore));
  try {
    const r = await api("GET", "/v1/documents?" + q.toString());
    if (mine !== listing) return;
    if (!more) { rows = []; selected.clear(); showSelection(); }
    listed = { filters, total: r.total };
    const filtered = Object.keys(filters).length > 0;
    $("documents-total").textContent = typeof r.total === "number"
      ? r.total + " document(s)" + (filtered ? " match" : " in all") : "";
    // Forgetting by source goes by the source alone: offered only when
    // nothing else narrows the list, so its count is what would go.
    $("source-forget").hidden = !(mayForget && source && Object.keys(filters).length === 1 && r.total > 0);
    rows = rows.concat(r.documents);
    renderDocuments();
    nextBefore = forward ? r.next_after : r.next_before;
    $("documents-more").hidden = nextBefore === null;
  } catch (e) { failed(e); }
}

// Opens the dialog whose elements are named PREFIX-title, -what, -list,
// -confirm and -dialog over the selected documents, listed by title and id.
function askAboutSelected(prefix, verb, what) {
  const n = selected.size;
  if (!n) return;
  $(prefix + "-title").textContent = verb + " " + n + " document(s)?";
  $(prefix + "-what").textContent = what(n);
  const ul = $(prefix + "-list");
  ul.replaceChildren();
  for (const d of selected.values()) ul.append(el("li", iso(d.title || "(untitled)") + " · " + d.document_id));
  $(prefix + "-confirm").textContent = verb + " " + n + " document(s)";
  $(prefix + "-dialog").returnValue = "";
  $(prefix + "-dialog").showModal();
}

function askBulkForget() {
  askAboutSelected("bulk", "Forget", (n) => "This deletes, for good, these " + n + " document(s):");
}

function askBulkShare() {
  askAboutSelected("share", "Share", (n) => "These " + n + " document(s):");
}

// The server takes at most this many documents per share (MAX_SHARE_DOCUMENTS).
const SHARE_BATCH = 100;

// Grants the selected documents into the scope named in the dialog, a
// batch at a time; says how many were new there.
async function bulkShare() {
  const scope = $("share-scope").value.trim();
  const ids = [...selected.keys()];
  const count = (v) => Array.isArray(v) ? v.length : (typeof v === "number" ? v : 0);
  let shared = 0, already = 0;
  try {
    for (let i = 0; i < ids.length; i += SHARE_BATCH) {
      const r = await api("POST", "/v1/share", { scope, document_ids: ids.slice(i, i + SHARE_BATCH) });
      shared += count(r.shared);
      already += count(r.already_shared);
    }
    show("Shared " + shared + " document(s) into " + scope + (already ? " (" + already + " already there)." : "."), true);
  } catch (e) { failed(e); }
}

// Forgets the selected documents one by one; a failure stops there and
// says what was forgotten before it.
async function bulkForget() {
  const ids = [...selected.keys()];
  let done = 0;
  try {
    for (const id of ids) {
      await api("DELETE", "/v1/documents/" + encodeURIComponent(id));
      done++;
    }
    await loadDocuments(false);
    show("Forgot " + done + " document(s).", true);
  } catch (e) {
    await loadDocuments(false);
    failed(e);
    show("Forgot " + done + " of " + ids.length + " document(s), then: " + $("message").textContent);
  }
}

// The metadata as a table: one row a key (nested values as JSON), and the
// provenance.
function metadataTable(d) {
  const body = $("document-metadata").tBodies[0];
  body.replaceChildren();
  const entries = Object.entries(d.metadata && typeof d.metadata === "object" ? d.metadata : {});
  if (d.provenance) entries.push(["provenance", d.provenance]);
  for (const [k, v] of entries) {
    const tr = el("tr");
    tr.append(el("th", k), el("td", typeof v === "string" ? v : JSON.stringify(v)));
    tr.firstChild.scope = "row";
    body.append(tr);
  }
  if (!entries.length) {
    const tr = el("tr");
    tr.append(el("td", "No metadata.", "muted"));
    body.append(tr);
  }
}

const EDITABLE_TEXT = ["text/plain", "text/markdown"];

function askEdit() {
  if (!current) return;
  const d = current;
  $("edit-doc-title").value = d.title || "";
  // Only a whole text of a text type is offered for editing: saving a cut
  // text would store the cut.
  const editable = EDITABLE_TEXT.includes(d.media_type.split(";")[0]) && !d.text_truncated;
  $("edit-content").value = editable ? (d.text || "") : "";
  $("edit-content").disabled = !editable;
  $("edit-content-note").hidden = editable;
  $("edit-content-note").textContent = editable ? "" : "This document's text is not editable here (not plain text or Markdown, or too long to show whole); title and metadata are.";
  $("edit-metadata").value = JSON.stringify(d.metadata && typeof d.metadata === "object" ? d.metadata : {}, null, 2);
  $("edit-dialog").returnValue = "";
  $("edit-dialog").showModal();
}

// Sends what changed as PATCH /v1/documents/{id} (a new version) and
// opens the new version.
async function saveEdit() {
  const d = current;
  if (!d) return;
  const change = {};
  const title = $("edit-doc-title").value.trim();
  if (title && title !== (d.title || "")) change.title = title;
  // The text keeps the document's media type (bare `content` would be
  // stored as plain text).
  if (!$("edit-content").disabled && $("edit-content").value !== (d.text || "")) {
    change.Text = { content: $("edit-content").value, media_type: d.media_type.split(";")[0] };
  }
  let metadata;
  try { metadata = JSON.parse($("edit-metadata").value || "{}"); } catch (_) { metadata = null; }
  if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) {
    show("Metadata must be a JSON object; nothing was saved.");
    return;
  }
  if (JSON.stringify(metadata) !== JSON.stringify(d.metadata || {})) change.metadata = metadata;
  if (!Object.keys(change).length) { show("Nothing changed; nothing was saved.", true); return; }
  change.wait = true;
  try {
    const r = await api("PATCH", "/v1/documents/" + encodeURIComponent(d.document_id), change);
    await openDocument(r.document_id);
    show("Saved a new version " + r.document_id + " (the old one, " + d.document_id + ", is kept as history).", true);
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
    fact(dl, "Stored", when(d.created_at));
    fact(dl, "Stored by", d.created_by);
    fact(dl, "State", d.state);
    if (d.error) fact(dl, "Error", d.error);
    showVersions(d);
    metadataTable(d);
    $("document-text").textContent = (d.text || "") +
      (d.text_truncated ? "\n\n[The text is cut here: it is too long to show whole. Download the original for all of it.]" : "");
    // Markdown is shown rendered (the stored text a click away); other
    // text as it is.
    const markdown = d.media_type.split(";")[0] === "text/markdown";
    const rendered = $("document-rendered");
    rendered.hidden = !markdown;
    rendered.replaceChildren(...(markdown ? [Markdown.render(d.text || "")] : []));
    $("document-source").open = !markdown;
    $("document-chunks").replaceChildren();
    $("document-entities").replaceChildren();
    chunksAfter = null;
    await loadChunks(d.document_id, false);
    $("document-forget").disabled = !mayForget;
    $("document-edit").disabled = !mayForget || !!d.superseded_by;
    $("forget-note").hidden = mayForget;
    $("forget-note").textContent = mayForget ? "" : "This token cannot forget documents (it needs the ingest:write scope or the ingestor or admin role).";
  } catch (e) { failed(e); }
}

// The open document's chain of versions, oldest first: each opens, the
// superseded ones are marked, and a superseded document says so above all.
function showVersions(d) {
  const note = $("document-superseded");
  note.hidden = !d.superseded_by;
  note.textContent = d.superseded_by
    ? "This version was superseded on " + d.superseded_at + " by " + d.superseded_by + "; it is kept as history."
    : "";
  const versions = d.versions || [];
  $("versions-section").hidden = versions.length < 2;
  const list = $("document-versions");
  list.replaceChildren();
  for (const v of versions) {
    const li = el("li");
    li.dataset.documentId = v.document_id;
    li.classList.add(v.current ? "current" : "superseded");
    li.append(el("span", v.document_id + " · stored " + v.created_at + " · " +
      (v.current ? "current" : "superseded " + v.superseded_at)));
    if (v.document_id === d.document_id) li.append(el("span", " (this version)", "muted"));
    else li.append(openButton(v.document_id, "Open"));
    list.append(li);
  }
}

// One page of the open document's chunks, each with the entities it
// mentions marked (click one to see it in the graph), and the entities
// gathered above them.
async function loadChunks(id, more) {
  const q = new URLSearchParams({ limit: "50" });
  if (more && chunksAfter !== null) q.set("after", String(chunksAfter));
  const r = await api("GET", "/v1/documents/" + encodeURIComponent(id) + "/chunks?" + q.toString());
  if (!current || current.document_id !== id) return;
  const list = $("document-chunks"), chips = $("document-entities");
  const seen = new Set([...chips.querySelectorAll("[data-entity-id]")].map((b) => b.dataset.entityId));
  for (const c of r.chunks || []) {
    const li = el("li");
    li.append(el("p", "chunk " + c.ordinal + " · bytes " + c.byte_start + "–" + c.byte_end + " · " + c.chunk_id, "meta"));
    const spans = (c.entities || []).map((m) => ({ start: m.byte_start, end: m.byte_end, entity: m }));
    li.append(chunkText(c.text, c.byte_start, spans, (span, text) => {
      const m = el("mark", text, "entity");
      m.title = span.entity.name + " (" + span.entity.kind + ")";
      return m;
    }));
    list.append(li);
    for (const m of c.entities || []) {
      if (seen.has(m.entity_id)) continue;
      seen.add(m.entity_id);
      const item = el("li");
      const b = el("button", iso(m.name) + " · " + m.kind, "chip");
      b.type = "button";
      b.dataset.entityId = m.entity_id;
      b.addEventListener("click", () => Graph.show(m.entity_id));
      item.append(b);
      chips.append(item);
    }
  }
  if (!more && !(r.chunks || []).length) list.append(el("li", "No chunks (the document is not indexed yet, or has no text).", "muted"));
  if (!chips.children.length && (r.chunks || []).length && r.next_after === null) chips.append(el("li", "No entities found.", "muted"));
  chunksAfter = r.next_after === undefined ? null : r.next_after;
  $("chunks-more").hidden = chunksAfter === null;
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
  const versions = (current.versions || []).length;
  if (versions > 1) fact(dl, "Versions", versions + ", all forgotten with it");
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
    show("Forgot " + n + " document(s): " + iso(d.title || d.document_id) + " (" + d.document_id + "), " +
      (r.chunks || 0) + " chunk(s), " + (r.vectors || 0) + " vector(s)", true);
  } catch (e) { failed(e); }
}

async function askForgetSource() {
  if (!listed || !listed.filters.source) return;
  const source = listed.filters.source;
  try {
    // The exact count and the first titles, read now, not from the list:
    // superseded versions of the source too, since they go as well.
    const q = new URLSearchParams({ source, limit: "10", include_history: "true" });
    const r = await api("GET", "/v1/documents?" + q.toString());
    $("source-forget-what").textContent = "This deletes, for good, all " + r.total +
      " document(s) whose source is exactly \u201c" + iso(source) + "\u201d, superseded versions " +
      "included, with every other version of each:";
    const ul = $("source-forget-list");
    ul.replaceChildren();
    for (const d of r.documents) ul.append(el("li", iso(d.title || "(untitled)") + " · " + d.document_id + " · " + bytes(d.bytes)));
    if (r.total > r.documents.length) ul.append(el("li", "and " + (r.total - r.documents.length) + " more", "muted"));
    $("source-dialog").dataset.source = source;
    $("source-dialog").returnValue = "";
    $("source-dialog").showModal();
  } catch (e) { failed(e); }
}

async function forgetSource() {
  const source = $("source-dialog").dataset.source;
  try {
    const r = await api("POST", "/v1/tools/alayasiki_forget", { source });
    $("source-filter").value = "";
    await loadDocuments(false);
    show("Forgot " + r.documents + " document(s) of source \u201c" + iso(source) + "\u201d: " + (r.chunks || 0) +
      " chunk(s), " + (r.vectors || 0) + " vector(s)", true);
  } catch (e) { failed(e); }
}

// --- working memory --------------------------------------------------------

function timeLeft(ms) {
  if (typeof ms !== "number") return "—";
  if (ms <= 0) return "expired";
  const s = Math.floor(ms / 1000), m = Math.floor(s / 60), h = Math.floor(m / 60);
  return h > 0 ? h + " h " + (m % 60) + " min" : m > 0 ? m + " min " + (s % 60) + " s" : s + " s";
}

// Counts every shown session's time down, once a second, from what the
// server said and when it said it.
function tickSessions(at) {
  if (sessionTimer) clearInterval(sessionTimer);
  const tick = () => {
    for (const e of document.querySelectorAll("[data-ms-left]")) {
      e.textContent = "time left: " + timeLeft(Number(e.dataset.msLeft) - (Date.now() - at));
    }
  };
  tick();
  sessionTimer = setInterval(tick, 1000);
}

async function loadSessions() {
  try {
    const r = await api("GET", "/v1/sessions");
    const at = Date.now();
    const list = $("sessions");
    list.replaceChildren();
    for (const s of r.sessions || []) {
      const li = el("li");
      li.append(el("p", s.session_id, "item-title"));
      li.append(el("p", (s.notes !== undefined ? s.notes + " note(s) · " : "") + "updated " + (s.updated_at || "—") +
        " · expires " + (s.expires_at || "—"), "meta"));
      const left = el("p", null, "meta");
      left.dataset.msLeft = String(s.ms_left);
      li.append(left);
      const b = el("button", "Open");
      b.type = "button";
      b.addEventListener("click", () => openSession(s.session_id));
      li.append(b);
      list.append(li);
    }
    if (!(r.sessions || []).length) list.append(el("li", "No working-memory sessions right now.", "muted"));
    tickSessions(at);
  } catch (e) { failed(e); }
}

async function openSession(id) {
  try {
    const s = await api("GET", "/v1/sessions/" + encodeURIComponent(id));
    $("session-detail").hidden = false;
    $("session-title").textContent = "Session " + (s.session_id || id);
    const dl = $("session-facts");
    dl.replaceChildren();
    fact(dl, "Created", s.created_at);
    fact(dl, "Updated", s.updated_at);
    fact(dl, "Expires", s.expires_at);
    fact(dl, "Nodes", (s.nodes || []).length);
    fact(dl, "Edges", (s.edges || []).length);
    const notes = $("session-notes");
    notes.replaceChildren();
    for (const n of s.notes || []) {
      const li = el("li");
      li.append(el("p", "note " + (n.seq !== undefined ? n.seq : n.note_id) + " · " + (n.media_type || "") +
        (n.written_at ? " · " + n.written_at : ""), "item-title"));
      li.append(el("p", (n.text !== undefined ? n.text : JSON.stringify(n)) +
        (n.text_truncated ? "\n\n[The note is cut here: the session is too large to show whole.]" : ""), "chunk"));
      notes.append(li);
    }
    if (!(s.notes || []).length) notes.append(el("li", "No notes.", "muted"));
  } catch (e) { failed(e); }
}

// --- adding ----------------------------------------------------------------

async function addNote(ev) {
  ev.preventDefault();
  const f = ev.target;
  const args = { content: f.content.value, media_type: f.media_type.value, wait: true };
  $("add-result").textContent = "Storing…";
  if (f.source.value.trim()) args.source = f.source.value.trim();
  $("add-open").hidden = true;
  try {
    const r = await api("POST", "/v1/ingest", args);
    stored(r);
    f.content.value = "";
  } catch (e) { $("add-result").textContent = ""; failed(e); }
}

function stored(r) {
  $("add-result").textContent = "Stored as " + r.document_id + " (" + r.state + ", " + (r.chunks || 0) + " chunk(s))" +
    (r.idempotent_replay ? ", already stored before" : "");
  $("add-open").hidden = false;
  $("add-open").dataset.documentId = r.document_id;
}

// The file's bytes as base64, in slices (a whole file at once would
// overflow String.fromCharCode's arguments).
function base64Of(buffer) {
  const b = new Uint8Array(buffer);
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
  return btoa(s);
}

async function upload(ev) {
  ev.preventDefault();
  const f = ev.target;
  const file = f.file.files[0];
  if (!file) return;
  $("add-result").textContent = "Uploading " + file.name + "…";
  if (file.size > 4 * 1048576) { show("The file is " + bytes(file.size) + "; the limit is 4 MiB."); return; }
  const upload = { filename: file.name, content: base64Of(await file.arrayBuffer()) };
  if (file.type) upload.mime_type = file.type;
  const description = f.description.value.trim();
  if (description) upload.metadata = { description };
  upload.source = f.source.value.trim() || file.name;
  $("add-open").hidden = true;
  try {
    stored(await api("POST", "/v1/ingest", { File: upload, wait: true }));
    f.reset();
  } catch (e) { $("add-result").textContent = ""; failed(e); }
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
  $("upload-form").addEventListener("submit", upload);
  $("source-forget").addEventListener("click", askForgetSource);
  $("source-dialog").addEventListener("close", () => { if ($("source-dialog").returnValue === "forget") forgetSource(); });
  $("chunks-more").addEventListener("click", () => { if (current) loadChunks(current.document_id, true).catch(failed); });
  $("sessions-refresh").addEventListener("click", loadSessions);
  $("sort-filter").addEventListener("change", () => loadDocuments(false));
  $("bulk-clear").addEventListener("click", () => { selected.clear(); showSelection(); renderDocuments(); });
  $("bulk-forget").addEventListener("click", askBulkForget);
  $("bulk-share").addEventListener("click", askBulkShare);
  $("share-dialog").addEventListener("close", () => { if ($("share-dialog").returnValue === "share") bulkShare(); });
  $("bulk-dialog").addEventListener("close", () => { if ($("bulk-dialog").returnValue === "forget") bulkForget(); });
  $("document-edit").addEventListener("click", askEdit);
  $("edit-dialog").addEventListener("close", () => { if ($("edit-dialog").returnValue === "save") saveEdit(); });
  $("add-open").addEventListener("click", () => openDocument($("add-open").dataset.documentId));
  // The local server's link carries its per-start secret in the fragment
  // (never sent in a request): taken as the token, then cleared from the
  // address bar and the history entry. Only a secret of that shape (64 hex
  // digits, which no JWT is) signs in from a link: a foreign page linking
  // here with a token of its own would otherwise sign the reader into a
  // memory its author reads (login CSRF).
  const secret = new URLSearchParams(location.hash.slice(1)).get("secret");
  if (secret !== null) history.replaceState(null, "", location.pathname + location.search);
  if (secret !== null && /^[0-9a-f]{64}$/.test(secret)) signIn(secret);
  else if (secret !== null) { show("A sign-in link carries only this computer's local secret; paste a token to sign in.", true); $("token").focus(); }
  else if (token()) signIn(token()); else $("token").focus();
});
