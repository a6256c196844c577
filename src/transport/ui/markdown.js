// A small Markdown renderer for stored documents. Stored text is untrusted:
// it builds DOM nodes and sets only textContent, never HTML, so raw HTML in
// Markdown shows as text. Only headings, lists, block quotes, code (fenced
// and inline), emphasis and links are rendered; a link becomes an <a> only
// when its target is http(s) (then with rel="noopener noreferrer"),
// otherwise it stays text as written.
"use strict";

const Markdown = (() => {
  function node(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  // A link's target if it is an absolute http(s) URL, else null.
  function safeHref(raw) {
    try {
      const u = new URL(raw);
      return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
    } catch (_) { return null; }
  }

  // Inline spans: `code`, **strong**, *em* or _em_, [text](http(s) url).
  const INLINE = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\b_([^_\s][^_]*)_\b|\[([^\]]*)\]\(([^()\s]*)\)/g;

  function inline(parent, text) {
    let at = 0;
    for (const m of text.matchAll(INLINE)) {
      parent.append(document.createTextNode(text.slice(at, m.index)));
      if (m[1] !== undefined) parent.append(node("code", m[1]));
      else if (m[2] !== undefined) { const s = node("strong"); inline(s, m[2]); parent.append(s); }
      else if (m[3] !== undefined || m[4] !== undefined) {
        const e = node("em"); inline(e, m[3] !== undefined ? m[3] : m[4]); parent.append(e);
      } else {
        const href = safeHref(m[6]);
        if (href) {
          const a = node("a");
          inline(a, m[5] || m[6]);
          a.href = href;
          a.rel = "noopener noreferrer";
          a.target = "_blank";
          parent.append(a);
        } else parent.append(document.createTextNode(m[0]));
      }
      at = m.index + m[0].length;
    }
    parent.append(document.createTextNode(text.slice(at)));
  }

  const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
  const BULLET = /^\s*[-*+]\s+(.*)$/;
  const NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/;
  const FENCE = /^\s*(```|~~~)/;

  // `text` rendered into a new <div class="markdown">. A YAML front-matter
  // block is shown as code, not rendered.
  function render(text) {
    const root = node("div", undefined, "markdown");
    const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    if (lines[0] === "---") {
      const end = lines.indexOf("---", 1);
      if (end > 0) { root.append(node("pre", lines.slice(0, end + 1).join("\n"), "front-matter")); i = end + 1; }
    }
    let para = null, list = null;
    const close = () => { para = null; list = null; };
    while (i < lines.length) {
      const line = lines[i];
      const fence = line.match(FENCE);
      if (fence) {
        close();
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
        const pre = node("pre");
        pre.append(node("code", body.join("\n")));
        root.append(pre);
        i++;
        continue;
      }
      let m;
      if (!line.trim()) { close(); }
      else if ((m = line.match(HEADING))) {
        close();
        // Below the page's own headings: # becomes an h3.
        const h = node("h" + Math.min(m[1].length + 2, 6));
        inline(h, m[2]);
        root.append(h);
      } else if ((m = line.match(BULLET)) || (m = line.match(NUMBERED))) {
        const tag = BULLET.test(line) ? "ul" : "ol";
        if (!list || list.tagName.toLowerCase() !== tag) { para = null; list = node(tag); root.append(list); }
        const li = node("li");
        inline(li, m[1]);
        list.append(li);
      } else if (line.startsWith(">")) {
        close();
        const q = node("blockquote");
        inline(q, line.replace(/^>\s?/, ""));
        root.append(q);
      } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
        close();
        root.append(node("hr"));
      } else {
        list = null;
        if (!para) { para = node("p"); root.append(para); } else para.append(document.createTextNode(" "));
        inline(para, line.trim());
      }
      i++;
    }
    return root;
  }

  return { render, safeHref };
})();
