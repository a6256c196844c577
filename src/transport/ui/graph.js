// The knowledge-graph view: entity search, an entity's relations with their
// confidence and evidence, an interactive neighbourhood (SVG: drag to pan,
// wheel or buttons to zoom, click or Enter on an entity to expand it) and
// the communities, whose colours the graph's nodes wear.
//
// Uses app.js's helpers (api, el, fact, failed, openDocument); like the rest
// of the page it puts stored text into the page only as text nodes.
"use strict";

const Graph = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const nodes = new Map(); // entity_id -> {id, name, kind, mentions, community, x, y}
  const edges = new Map(); // relation_id -> {id, source, target, label, confidence}
  const camera = { x: 0, y: 0, k: 1 };
  let communityTitles = new Map(); // community key -> title
  let selected = null;
  let started = false;
  // The neighbourhood asked for last, and how many entities: "Show 50
  // more" asks for the same one with a larger limit (up to the server's).
  let asked = { entity: null, limit: 50 };
  const NODES_STEP = 50, NODES_MAX = 200; // GRAPH_DEFAULT_NODES and GRAPH_MAX_NODES
  // An entity's relations are shown a page at a time.
  const RELATIONS_PAGE = 10;
  let relations = [], relationsShown = 0;
  const LABEL_CHARS = 28; // a longer name is cut (whole in its tooltip)

  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }

  // A community's colour: its key spread round the hue circle, so
  // neighbouring ids look different.
  function colour(community) {
    if (community === null || community === undefined) return "hsl(220 8% 60%)";
    let h = 0;
    for (const c of String(community)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return "hsl(" + ((h * 137.508) % 360).toFixed(0) + " 62% 52%)";
  }

  // Folds a neighbourhood answer into the picture; new nodes start near
  // `around` (the node being expanded), or on a circle.
  function merge(g, around) {
    const centre = around && nodes.get(around);
    let i = 0;
    for (const n of g.nodes || []) {
      const known = nodes.get(n.entity_id);
      if (known) { Object.assign(known, { name: n.name, kind: n.kind, mentions: n.mentions, community: n.community }); continue; }
      const a = (i++ / Math.max(1, (g.nodes || []).length)) * 2 * Math.PI;
      const r = centre ? 60 : 160;
      nodes.set(n.entity_id, {
        id: n.entity_id, name: n.name, kind: n.kind, mentions: n.mentions, community: n.community,
        x: (centre ? centre.x : 0) + r * Math.cos(a), y: (centre ? centre.y : 0) + r * Math.sin(a),
      });
    }
    for (const e of g.edges || []) {
      if (nodes.has(e.source) && nodes.has(e.target)) {
        edges.set(e.relation_id, { id: e.relation_id, source: e.source, target: e.target, label: e.label, confidence: e.confidence });
      }
    }
  }

  // A force layout (Fruchterman and Reingold: every pair repels, each
  // relation pulls its ends together, moves capped by a cooling
  // temperature). The picture is at most a few hundred nodes, so a few
  // hundred steps are quick, and it is deterministic.
  function layout(steps) {
    const list = [...nodes.values()];
    if (list.length < 2) { for (const n of list) { n.x = 0; n.y = 0; } return; }
    const k = Math.sqrt((800 * 480) / list.length);
    let t = 80;
    const cool = t / steps;
    for (let s = 0; s < steps; s++) {
      const disp = new Map(list.map((n) => [n.id, { x: 0, y: 0 }]));
      for (let i = 0; i < list.length; i++) {
        for (let j = i + 1; j < list.length; j++) {
          const a = list[i], b = list[j];
          let dx = a.x - b.x, dy = a.y - b.y;
          let d = Math.sqrt(dx * dx + dy * dy);
          if (d < 0.01) { dx = 0.01 * (i + 1); dy = 0.01 * (j + 1); d = Math.sqrt(dx * dx + dy * dy); }
          const f = (k * k) / d;
          const da = disp.get(a.id), db = disp.get(b.id);
          da.x += (dx / d) * f; da.y += (dy / d) * f;
          db.x -= (dx / d) * f; db.y -= (dy / d) * f;
        }
      }
      for (const e of edges.values()) {
        const a = nodes.get(e.source), b = nodes.get(e.target);
        if (!a || !b || a === b) continue;
        const dx = a.x - b.x, dy = a.y - b.y;
        const d = Math.sqrt(dx * dx + dy * dy) || 0.01;
        const f = (d * d) / k;
        const da = disp.get(a.id), db = disp.get(b.id);
        da.x -= (dx / d) * f; da.y -= (dy / d) * f;
        db.x += (dx / d) * f; db.y += (dy / d) * f;
      }
      for (const n of list) {
        const v = disp.get(n.id);
        // A weak pull to the centre keeps unrelated groups in view.
        v.x -= n.x * 0.05 * k / 50; v.y -= n.y * 0.05 * k / 50;
        const len = Math.sqrt(v.x * v.x + v.y * v.y) || 1;
        const step = Math.min(len, t);
        n.x += (v.x / len) * step; n.y += (v.y / len) * step;
      }
      t = Math.max(1, t - cool);
    }
  }

  // Centres the drawing and scales it to the view's box.
  function fit() {
    const svg = document.getElementById("graph");
    const w = svg.clientWidth || 800, h = svg.clientHeight || 480;
    const list = [...nodes.values()];
    if (!list.length) return;
    const xs = list.map((n) => n.x), ys = list.map((n) => n.y);
    const minX = Math.min(...xs), maxX = Math.max(...xs), minY = Math.min(...ys), maxY = Math.max(...ys);
    // The margin is in screen pixels: labels and dots keep their size
    // whatever the zoom.
    const pad = 40;
    camera.k = Math.min(2, Math.max(0.05, Math.min((w - 2 * pad) / (maxX - minX || 1), (h - 2 * pad) / (maxY - minY || 1))));
    camera.x = -((minX + maxX) / 2) * camera.k;
    camera.y = -((minY + maxY) / 2) * camera.k;
  }

  // Applies the camera. Labels and dots are scaled against the zoom, so a
  // label stays about 12 px on screen however far the view is zoomed out.
  function applyView() {
    const svg = document.getElementById("graph");
    const g = document.querySelector("#graph > g");
    if (g) g.setAttribute("transform", "translate(" + camera.x + " " + camera.y + ") scale(" + camera.k + ")");
    svg.style.setProperty("--label-size", (12 / camera.k).toFixed(2) + "px");
    svg.style.setProperty("--halo", (3 / camera.k).toFixed(2) + "px");
    for (const n of document.querySelectorAll("#graph .node")) {
      n.querySelector("circle").setAttribute("r", (Number(n.dataset.r) / Math.sqrt(camera.k)).toFixed(2));
      n.querySelector("text").setAttribute("y", (-(Number(n.dataset.r) + 6) / Math.sqrt(camera.k)).toFixed(2));
    }
    declutter();
  }

  // Hides the labels that would overlap one already placed, placing the
  // selected entity's first and then the most mentioned: crowded entities
  // keep their dot and their name in the tooltip, and zooming in shows
  // them. Label boxes are estimated in screen pixels (12 px text).
  function declutter() {
    const placed = [];
    const order = [...nodes.values()].sort((a, b) =>
      (b.id === selected) - (a.id === selected) || (b.mentions || 0) - (a.mentions || 0));
    for (const n of order) {
      const g = document.querySelector('#graph .node[data-entity-id="' + CSS.escape(n.id) + '"]');
      if (!g) continue;
      const label = g.querySelector("text");
      // The label's baseline sits r + 6 user units above the dot, which
      // applyView scales by 1 / sqrt(k): on screen, (r + 6) * sqrt(k).
      const w = Math.min(n.name.length, LABEL_CHARS) * 7.5 + 6, h = 18;
      const rise = (Number(g.dataset.r) + 6) * Math.sqrt(camera.k);
      const x = n.x * camera.k + camera.x, y = n.y * camera.k + camera.y - rise - 5;
      const clash = placed.some((p) => Math.abs(p.x - x) * 2 < p.w + w && Math.abs(p.y - y) * 2 < p.h + h);
      label.classList.toggle("quiet", clash);
      if (!clash) placed.push({ x, y, w, h });
    }
  }

  // Moves the camera so that entity `id` is in the middle of the view.
  function centreOn(id) {
    const n = nodes.get(id);
    if (!n) return;
    camera.x = -n.x * camera.k;
    camera.y = -n.y * camera.k;
    applyView();
  }

  function render() {
    const svg = document.getElementById("graph");
    const w = svg.clientWidth || 800, h = svg.clientHeight || 480;
    svg.setAttribute("viewBox", (-w / 2) + " " + (-h / 2) + " " + w + " " + h);
    const root = svgEl("g");
    const lines = svgEl("g", { class: "edges" });
    for (const e of edges.values()) {
      const a = nodes.get(e.source), b = nodes.get(e.target);
      if (!a || !b) continue;
      const line = svgEl("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": 1 + 2 * (e.confidence || 0) });
      const title = svgEl("title");
      title.textContent = "\u2068" + a.name + "\u2069 \u2068" + e.label + "\u2069 \u2068" + b.name + "\u2069 (confidence " + Number(e.confidence).toFixed(2) + ")";
      line.append(title);
      lines.append(line);
    }
    const dots = svgEl("g", { class: "nodes" });
    for (const n of nodes.values()) {
      const g = svgEl("g", {
        class: "node" + (n.id === selected ? " selected" : ""), transform: "translate(" + n.x + " " + n.y + ")",
        tabindex: 0, role: "button", "data-entity-id": n.id,
      });
      g.setAttribute("aria-label", n.name + " (" + n.kind + ", " + n.mentions + " mentions)");
      const r = 6 + Math.min(14, Math.sqrt(n.mentions || 1) * 2);
      g.dataset.r = String(r);
      g.append(svgEl("circle", { r, fill: colour(n.community) }));
      const label = svgEl("text", { x: 0, y: -(r + 6), "text-anchor": "middle" });
      label.textContent = n.name.length > LABEL_CHARS ? n.name.slice(0, LABEL_CHARS - 1) + "…" : n.name;
      const tip = svgEl("title");
      tip.textContent = n.name + " (" + n.kind + ")";
      g.append(tip, label);
      g.addEventListener("click", (ev) => { ev.stopPropagation(); open(n.id); });
      g.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(n.id); } });
      dots.append(g);
    }
    root.append(lines, dots);
    svg.replaceChildren(root);
    applyView();
    const shown = [...nodes.values()].length;
    document.getElementById("graph-summary").textContent =
      shown + " entit" + (shown === 1 ? "y" : "ies") + " · " + edges.size + " relation(s)";
  }

  // Loads a neighbourhood (the starting picture when `entityId` is null)
  // of at most `limit` entities; when the server had more, "Show 50 more"
  // offers the next step up to its largest limit.
  async function load(entityId, limit) {
    limit = limit || NODES_STEP;
    const q = new URLSearchParams({ depth: "1", limit: String(limit) });
    if (entityId) q.set("entity", entityId);
    const g = await api("GET", "/v1/graph?" + q.toString());
    const before = nodes.size;
    asked = { entity: entityId, limit };
    merge(g, entityId);
    layout(nodes.size > 150 ? 120 : 300);
    fit();
    render();
    const more = document.getElementById("graph-more");
    // One entity's neighbourhood is also cut per entity (its strongest
    // relations): asking for more that brought nothing stops offering it.
    const stalled = limit > NODES_STEP && nodes.size === before;
    more.hidden = !(g.truncated && limit < NODES_MAX && !stalled);
    more.textContent = "Show " + Math.min(NODES_STEP, NODES_MAX - limit) + " more";
    if (g.truncated && more.hidden) {
      document.getElementById("graph-summary").textContent += " · more exist: click an entity to expand it";
    }
    if (entityId) centreOn(entityId);
  }

  // Shows an entity and expands its neighbourhood.
  async function open(entityId) {
    selected = entityId;
    try {
      await Promise.all([detail(entityId), load(entityId)]);
    } catch (e) { failed(e); }
  }

  function relationItem(r) {
    const li = el("li");
    const other = el("button", r.other.name, "link");
    other.type = "button";
    other.addEventListener("click", () => open(r.other.entity_id));
    const head = el("p", null, "relation");
    const self = document.getElementById("entity-title").textContent;
    if (r.direction === "out") head.append(el("strong", self), document.createTextNode(" " + r.predicate + " "), other);
    else head.append(other, document.createTextNode(" " + r.predicate + " "), el("strong", self));
    li.append(head);
    let when = "";
    if (r.valid_from) when = " · from " + r.valid_from;
    if (r.valid_to) when += " · until " + r.valid_to + (r.superseded_by ? " (superseded)" : " (ended)");
    li.append(el("p", "confidence " + Number(r.confidence).toFixed(2) + " · supported by " + r.support +
      " · contradicted by " + r.contradict + when, "meta"));
    const ev = el("ul", null, "quotes");
    for (const e of r.evidence || []) {
      const q = el("li");
      q.append(el("blockquote", e.quote, e.supports ? "" : "contra"));
      const meta = el("p", (e.supports ? "supports" : "contradicts") + " · " + e.provenance + " · " + e.document_id, "meta");
      q.append(meta, openButton(e.document_id, "Open document"));
      ev.append(q);
    }
    li.append(ev);
    return li;
  }

  async function detail(entityId) {
    const e = await api("GET", "/v1/entities/" + encodeURIComponent(entityId));
    document.getElementById("entity-detail").hidden = false;
    document.getElementById("entity-title").textContent = e.name;
    const dl = document.getElementById("entity-facts");
    dl.replaceChildren();
    fact(dl, "Id", e.entity_id);
    fact(dl, "Kind", e.kind);
    fact(dl, "Mentions", e.mentions);
    fact(dl, "Also called", (e.aliases || []).join(", "));
    fact(dl, "First seen", e.first_seen);
    fact(dl, "Last seen", e.last_seen);
    const c = e.community;
    fact(dl, "Community", c === null || c === undefined ? null :
      (typeof c === "object" ? (c.title || c.community) : (communityTitles.get(String(c)) || c)));
    const list = document.getElementById("entity-relations");
    list.replaceChildren();
    relations = e.relations || [];
    relationsShown = 0;
    moreRelations();
    if (!relations.length) list.append(el("li", "No relations recorded.", "muted"));
    if (e.truncated) list.dataset.truncated = "true"; else delete list.dataset.truncated;
  }

  // The next page of the open entity's relations.
  function moreRelations() {
    const list = document.getElementById("entity-relations");
    const next = relations.slice(relationsShown, relationsShown + RELATIONS_PAGE);
    for (const r of next) list.append(relationItem(r));
    relationsShown += next.length;
    const left = relations.length - relationsShown;
    const button = document.getElementById("relations-more");
    button.hidden = left <= 0;
    button.textContent = "Show " + Math.min(RELATIONS_PAGE, left) + " more relations (" + left + " left)";
    document.getElementById("relations-count").textContent = relations.length
      ? relationsShown + " of " + relations.length + " relation(s)" +
        (list.dataset.truncated ? " (the server's first; more exist)" : "") : "";
  }

  async function find(ev) {
    if (ev) ev.preventDefault();
    const q = document.getElementById("entity-q").value.trim();
    const p = new URLSearchParams({ limit: "30" });
    if (q) p.set("q", q);
    try {
      const r = await api("GET", "/v1/entities?" + p.toString());
      const list = document.getElementById("entity-list");
      list.replaceChildren();
      for (const e of r.entities || []) {
        const li = el("li");
        const b = el("button", e.name + " · " + e.mentions, "chip");
        b.type = "button";
        b.addEventListener("click", () => open(e.entity_id));
        li.append(b);
        list.append(li);
      }
      if (!(r.entities || []).length) list.append(el("li", q ? "No entity matches." : "No entities yet.", "muted"));
      // A name searched for: its best match is opened, centred and
      // highlighted in the picture.
      if (q && (r.entities || []).length) await open(r.entities[0].entity_id);
    } catch (e) { failed(e); }
  }

  async function communities() {
    const r = await api("GET", "/v1/communities");
    const list = document.getElementById("communities");
    list.replaceChildren();
    communityTitles = new Map();
    // Graph nodes name their community at the finest level (the lowest
    // number): those wear colours; coarser levels are listed after them.
    const all = r.communities || [];
    const finest = Math.min(...all.map((c) => c.level));
    const ordered = [...all].sort((a, b) => a.level - b.level);
    for (const c of ordered) {
      const li = el("li");
      if (c.level === finest) {
        communityTitles.set(String(c.community), c.title);
        const swatch = el("span", null, "swatch");
        swatch.style.background = colour(c.community);
        li.append(swatch);
      }
      li.append(el("strong", c.title), el("span", " · " + c.size + " entities · level " + c.level, "muted"));
      if (c.llm_summary) li.append(el("p", c.llm_summary.text, "summary"));
      const facts = (c.facts || []).slice(0, 5);
      if (facts.length) {
        const ul = el("ul", null, "facts-list");
        for (const f of facts) ul.append(el("li", typeof f === "string" ? f : (f.text || JSON.stringify(f))));
        li.append(ul);
      }
      list.append(li);
    }
    if (!(r.communities || []).length) list.append(el("li", "No communities yet (they form once entities are related).", "muted"));
  }

  function zoom(factor) {
    camera.k = Math.min(6, Math.max(0.05, camera.k * factor));
    applyView();
  }

  function wire() {
    const svg = document.getElementById("graph");
    let drag = null;
    svg.addEventListener("pointerdown", (ev) => {
      if (ev.target.closest && ev.target.closest(".node")) return;
      drag = { x: ev.clientX - camera.x, y: ev.clientY - camera.y };
      svg.setPointerCapture(ev.pointerId);
    });
    svg.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      camera.x = ev.clientX - drag.x; camera.y = ev.clientY - drag.y;
      applyView();
    });
    svg.addEventListener("pointerup", () => { drag = null; });
    svg.addEventListener("wheel", (ev) => { ev.preventDefault(); zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15); }, { passive: false });
    svg.addEventListener("keydown", (ev) => {
      const step = 40;
      const moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
      if (moves[ev.key] && ev.target === svg) { camera.x += moves[ev.key][0]; camera.y += moves[ev.key][1]; applyView(); ev.preventDefault(); }
      if (ev.key === "+" || ev.key === "=") zoom(1.2);
      if (ev.key === "-") zoom(1 / 1.2);
    });
    document.getElementById("graph-zoom-in").addEventListener("click", () => zoom(1.2));
    document.getElementById("graph-zoom-out").addEventListener("click", () => zoom(1 / 1.2));
    document.getElementById("graph-reset").addEventListener("click", () => { fit(); applyView(); });
    document.getElementById("graph-more").addEventListener("click", () => {
      load(asked.entity, Math.min(NODES_MAX, asked.limit + NODES_STEP)).catch(failed);
    });
    document.getElementById("relations-more").addEventListener("click", moreRelations);
    document.getElementById("entity-form").addEventListener("submit", find);
  }

  return {
    // The view was opened: a first picture (the most mentioned entities)
    // unless one is already shown.
    async start() {
      if (!started) { wire(); started = true; }
      try {
        await communities();
        if (nodes.size === 0) { await load(null); await find(); }
      } catch (e) { failed(e); }
    },
    // Opens the view on one entity (from a document's entity list).
    async show(entityId) {
      view("graph");
      await open(entityId);
    },
    // Forgets the picture (sign-out, or a change of memory).
    reset() {
      nodes.clear(); edges.clear(); selected = null;
      relations = []; relationsShown = 0; asked = { entity: null, limit: NODES_STEP };
      document.getElementById("graph-more").hidden = true;
      document.getElementById("relations-more").hidden = true;
      camera.x = 0; camera.y = 0; camera.k = 1;
      for (const id of ["graph", "entity-list", "entity-relations", "communities", "entity-facts"]) document.getElementById(id).replaceChildren();
      document.getElementById("entity-detail").hidden = true;
    },
  };
})();
