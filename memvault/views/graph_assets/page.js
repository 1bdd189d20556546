"use strict";
// memvault graph.html: draws the embedded data (laid out in Python). Data is only ever set as textContent or
// attribute values, never parsed as markup. No request is made: everything is in this file.
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const zh = /^zh/i.test(navigator.language || "");
  const T = zh ? {
    q: "搜索标题、实体或 id", all: "全部项目", none: "（无项目）", at: "有效日期", fit: "适应窗口",
    cards: "张卡片", ents: "个实体", showing: "显示", of: "/", hub: "实体（大小 = 提及次数）",
    cross: "跨项目实体", sup: "已被取代", ret: "已撤回", arrow: "取代 →", hidden: (n, t) =>
      `显示最新且关联最多的 ${t - n} 张卡片，另有 ${n} 张未显示；用 --project 或 --since 缩小范围。`,
    empty: "这个库还没有卡片。先捕获一段对话并运行 <memvault distill>，或用 <memvault remember \"…\"> 手写一张。",
    one: "目前只有一张卡片：卡片提到相同的实体时，图就会连起来。点击它查看详情。",
    kind: "类型", project: "项目", status: "状态", created: "创建", valid: "有效期", ents2: "实体", src: "来源",
    supersedes: "取代", supby: "被取代于", hand: "（手写）", now: "至今", nomatch: "没有匹配",
    mentions: "提及", cardsOf: "卡片", entity: "实体"
  } : {
    q: "search title, entity or id", all: "all projects", none: "(no project)", at: "valid at", fit: "fit",
    cards: "cards", ents: "entities", showing: "showing", of: "of", hub: "entity (size = mentions)",
    cross: "entity in several projects", sup: "superseded", ret: "retracted", arrow: "supersedes →",
    hidden: (n, t) => `Showing the ${t - n} most recent and most connected cards; ${n} more are hidden. ` +
      "Narrow it with --project or --since.",
    empty: "This vault has no cards yet. Capture a conversation and run <memvault distill>, or write one with " +
      "<memvault remember \"…\">.",
    one: "Only one card so far: cards link up here once they name the same entities. Click it for its details.",
    kind: "kind", project: "project", status: "status", created: "created", valid: "valid", ents2: "entities",
    src: "sources", supersedes: "supersedes", supby: "superseded by", hand: "(written by hand)", now: "now",
    nomatch: "no match", mentions: "mentions", cardsOf: "cards", entity: "entity"
  };
  const $ = (id) => document.getElementById(id);
  const NS = "http://www.w3.org/2000/svg";
  const svg = $("g"), vp = $("vp");
  const mk = (tag, cls, parent) => { const e = document.createElementNS(NS, tag); if (cls) e.setAttribute("class", cls);
    parent.appendChild(e); return e; };
  const html = (tag, text, parent, cls) => { const e = document.createElement(tag); if (text != null) e.textContent = text;
    if (cls) e.className = cls; if (parent) parent.appendChild(e); return e; };
  const kindColour = (k) => `var(--k${k % 10})`;

  // ---- nodes and edges
  const nodes = [], byId = new Map(), byEnt = new Map();
  D.ents.forEach((e, i) => {
    const n = { type: "entity", i, name: e.n, x: e.x, y: e.y, r: e.r, m: e.m, cross: !!e.xp, edges: [], nb: new Set(),
      cards: [] };
    n.el = mk("circle", "node entity" + (n.cross ? " cross" : ""), $("nodes"));
    n.el.setAttribute("cx", n.x); n.el.setAttribute("cy", n.y); n.el.setAttribute("r", n.r);
    n.el.setAttribute("data-entity", n.name);
    n.label = mk("text", "label", $("labels")); n.label.textContent = n.name;
    n.label.setAttribute("x", n.x); n.label.setAttribute("y", n.y);
    nodes.push(n); byEnt.set(n.name, n);
  });
  D.cards.forEach((c) => {
    const n = { type: "card", c, id: c.id, x: c.x, y: c.y, r: 2.5, edges: [], nb: new Set(), arrows: [] };
    n.el = mk("circle", "node card " + (c.s === "active" ? "" : c.s), $("nodes"));
    n.el.setAttribute("cx", n.x); n.el.setAttribute("cy", n.y); n.el.setAttribute("r", n.r);
    n.el.setAttribute("data-id", c.id);
    n.el.style.fill = kindColour(c.k); n.el.style.stroke = c.s === "superseded" ? kindColour(c.k) : "";
    for (const ei of c.e) {
      const h = nodes[ei];
      const l = mk("line", "edge", $("edges"));
      l.setAttribute("x1", n.x); l.setAttribute("y1", n.y); l.setAttribute("x2", h.x); l.setAttribute("y2", h.y);
      const edge = { el: l, a: n, b: h }; n.edges.push(edge); h.edges.push(edge); n.nb.add(h); h.nb.add(n); h.cards.push(n);
    }
    nodes.push(n); byId.set(c.id, n);
  });
  for (const n of byId.values()) for (const old of n.c.sup || []) {
    const o = byId.get(old); if (!o) continue;
    const dx = n.x - o.x, dy = n.y - o.y, d = Math.hypot(dx, dy) || 1;
    const l = mk("line", "arrow", $("arrows"));
    l.setAttribute("x1", o.x + dx / d * 3); l.setAttribute("y1", o.y + dy / d * 3);
    l.setAttribute("x2", n.x - dx / d * 3); l.setAttribute("y2", n.y - dy / d * 3);
    l.setAttribute("marker-end", "url(#arrow)");
    const edge = { el: l, a: o, b: n }; o.edges.push(edge); n.edges.push(edge); o.nb.add(n); n.nb.add(o);
  }

  // ---- header, legend, notices
  $("q").placeholder = T.q; $("at-text").textContent = T.at; $("fit").textContent = T.fit;
  const sel = $("project");
  html("option", T.all, sel).value = "";
  D.projects.forEach((p, i) => { const o = html("option", p || T.none, sel); o.value = String(i); });
  const legend = $("legend");
  const swatch = (label, draw) => { const s = html("span", null, legend); const g = mk("svg", null, s);
    g.setAttribute("viewBox", "-7 -7 14 14"); draw(g); html("span", label, s); };
  D.kinds.forEach((k, i) => swatch(k, (g) => { const c = mk("circle", null, g); c.setAttribute("r", 4);
    c.style.fill = kindColour(i); }));
  swatch(T.hub, (g) => { mk("circle", "entity", g).setAttribute("r", 6); });
  swatch(T.cross, (g) => { mk("circle", "entity cross", g).setAttribute("r", 6); });
  swatch(T.sup, (g) => { const c = mk("circle", "card superseded", g); c.setAttribute("r", 5);
    c.style.fill = kindColour(0); c.style.stroke = kindColour(0); });
  swatch(T.ret, (g) => { mk("circle", "card retracted", g).setAttribute("r", 4); });
  swatch(T.arrow, (g) => { const l = mk("line", "arrow", g); l.setAttribute("x1", -6); l.setAttribute("x2", 5);
    l.setAttribute("y1", 0); l.setAttribute("y2", 0); l.setAttribute("marker-end", "url(#arrow)"); });
  if (D.hidden > 0) { $("notice").hidden = false; $("notice").textContent = T.hidden(D.hidden, D.total); }
  const hint = (text) => { const h = $("hint"); h.hidden = false;
    // <code> pieces are marked <…> in the message; made with textContent, never parsed
    text.split(/(<[^>]*>)/).forEach((part) => { if (!part) return;
      if (part[0] === "<") html("code", part.slice(1, -1), h); else h.appendChild(document.createTextNode(part)); }); };
  if (D.cards.length === 0) hint(T.empty); else if (D.cards.length === 1) hint(T.one);

  // ---- view: fit, zoom, pan
  let k = 1, tx = 0, ty = 0, raf = 0, still = 0;
  const many = $("edges").childElementCount > 1500;  // then edges rest while the view moves: half the paint
  const apply = (moving) => { vp.setAttribute("transform", `translate(${tx},${ty}) scale(${k})`);
    if (moving && many) { svg.classList.add("moving"); clearTimeout(still);
      still = setTimeout(() => svg.classList.remove("moving"), 200); }
    if (!raf) raf = requestAnimationFrame(labels); };
  const ranked = nodes.filter((n) => n.type === "entity").sort((a, b) => b.m - a.m || (a.name < b.name ? -1 : 1));
  function labels() {
    // Biggest hubs first; a label that would overlap one already shown (on screen) stays hidden until zoomed in.
    raf = 0;
    const size = 12 / k, taken = new Map();  // screen cells of 64 px -> label boxes in them
    const cells = (b) => { const out = [];
      for (let i = Math.floor(b[0] / 64); i <= Math.floor(b[2] / 64); i++)
        for (let j = Math.floor(b[1] / 64); j <= Math.floor(b[3] / 64); j++) out.push(i + "," + j);
      return out; };
    for (const n of ranked) {
      let show = !n.off && (n.r * k >= 4 || n.hot);
      const x = n.x * k + tx, y = n.y * k + ty;
      if (show && x > -300 && x < innerWidth + 300 && y > -50 && y < innerHeight + 50) {
        const w = Math.min(n.name.length, 40) * 3.6 + 4, box = [x - w, y - 8, x + w, y + 8], keys = cells(box);
        const hit = keys.some((key) => (taken.get(key) || []).some((b) =>
          b[0] < box[2] && box[0] < b[2] && b[1] < box[3] && box[1] < b[3]));
        if (hit && !n.hot) show = false;
        else for (const key of keys) { if (!taken.has(key)) taken.set(key, []); taken.get(key).push(box); }
      } else show = false;
      n.label.classList.toggle("off", !show);
      if (show) n.label.setAttribute("font-size", size.toFixed(3));
    }
  }
  function fit(list) {
    const vis = (list || nodes).filter((n) => !n.off);
    let [x0, y0, x1, y1] = D.bounds;
    if (list && vis.length) { x0 = Math.min(...vis.map((n) => n.x - n.r - 20)); x1 = Math.max(...vis.map((n) => n.x + n.r + 20));
      y0 = Math.min(...vis.map((n) => n.y - n.r - 20)); y1 = Math.max(...vis.map((n) => n.y + n.r + 20)); }
    const top = $("bar").offsetHeight + 4, W = innerWidth, H = innerHeight - top - 40;
    k = Math.min(W / (x1 - x0), H / (y1 - y0), 8);
    tx = (W - (x1 - x0) * k) / 2 - x0 * k; ty = top + (H - (y1 - y0) * k) / 2 - y0 * k; apply();
  }
  function centre(n, zoom) {
    k = Math.max(k, zoom || 0); tx = innerWidth / 2 - n.x * k; ty = innerHeight / 2 - n.y * k; apply();
  }
  svg.addEventListener("wheel", (ev) => { ev.preventDefault();
    const f = Math.exp(-ev.deltaY * (ev.deltaMode ? 0.05 : 0.0015)), nk = Math.min(200, Math.max(0.02, k * f));
    tx = ev.clientX - (ev.clientX - tx) * nk / k; ty = ev.clientY - (ev.clientY - ty) * nk / k; k = nk; apply(true);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (ev) => { if (ev.target.closest && ev.target.closest(".node")) return;
    drag = { x: ev.clientX, y: ev.clientY, tx, ty, moved: false }; svg.setPointerCapture(ev.pointerId);
    svg.classList.add("panning"); });
  svg.addEventListener("pointermove", (ev) => {
    if (drag) { const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true; tx = drag.tx + dx; ty = drag.ty + dy; apply(true); }
    const tip = $("tip"); if (!tip.hidden) { tip.style.left = ev.clientX + 12 + "px"; tip.style.top = ev.clientY + 12 + "px"; }
  });
  svg.addEventListener("pointerup", () => { if (drag && !drag.moved) clearSelection(); drag = null;
    svg.classList.remove("panning"); });

  // ---- hover: one-hop neighbours
  const nodeOf = (el) => el && el.classList && el.classList.contains("node") ?
    (el.dataset.id ? byId.get(el.dataset.id) : byEnt.get(el.getAttribute("data-entity"))) : null;
  let hot = [];
  function highlight(n) {
    unhighlight(); if (!n) return;
    svg.classList.add("hover");
    hot = [n, ...n.nb];
    for (const m of hot) { m.el.classList.add("hl"); m.hot = true; if (m.label) m.label.classList.add("hl"); }
    for (const e of n.edges) e.el.classList.add("hl");
    const tip = $("tip"); tip.hidden = false;
    tip.textContent = n.type === "card" ? n.c.t : `${n.name} · ${n.m} ${T.mentions}`;
    if (!raf) raf = requestAnimationFrame(labels);
  }
  function unhighlight() {
    svg.classList.remove("hover");
    for (const m of hot) { m.el.classList.remove("hl"); m.hot = false; if (m.label) m.label.classList.remove("hl");
      for (const e of m.edges) e.el.classList.remove("hl"); }
    hot = []; $("tip").hidden = true;
  }
  $("nodes").addEventListener("pointerover", (ev) => highlight(nodeOf(ev.target)));
  $("nodes").addEventListener("pointerout", () => { unhighlight(); if (!raf) raf = requestAnimationFrame(labels); });
  $("nodes").addEventListener("click", (ev) => { const n = nodeOf(ev.target); if (n) select(n); });

  // ---- details
  let selected = null;
  function select(n, focus) {
    if (selected) selected.el.classList.remove("sel", "focus");
    selected = n; n.el.classList.add("sel");
    if (focus) { n.el.classList.remove("focus"); void n.el.getBBox(); n.el.classList.add("focus"); centre(n, 3); }
    const box = $("details"); box.replaceChildren(); box.hidden = false; box.dataset.id = n.id || n.name;
    const row = (dl, term, value) => { if (value === "" || value == null) return; html("dt", term, dl);
      const dd = html("dd", null, dl); if (value instanceof Node) dd.appendChild(value); else dd.textContent = value; };
    const links = (items, go) => { const f = document.createDocumentFragment();
      items.forEach((it, i) => { if (i) f.appendChild(document.createTextNode(", "));
        const a = html("a", it.label, f); a.addEventListener("click", () => go(it)); }); return f; };
    if (n.type === "card") {
      const c = n.c;
      html("div", c.id, box, "id"); html("h2", c.t, box);
      const dl = html("dl", null, box);
      row(dl, T.kind, D.kinds[c.k]); row(dl, T.project, D.projects[c.p] || T.none); row(dl, T.status, c.s);
      row(dl, T.created, c.c); row(dl, T.valid, `${c.vf || "?"} .. ${c.vt || T.now}`);
      if (c.e.length) row(dl, T.ents2, links(c.e.map((i) => ({ label: nodes[i].name, n: nodes[i] })),
        (it) => select(it.n, true)));
      const ids = (list) => links(list.map((id) => ({ label: id, n: byId.get(id) })),
        (it) => it.n && select(it.n, true));
      if (c.sup) row(dl, T.supersedes, ids(c.sup));
      const by = [...byId.values()].filter((m) => (m.c.sup || []).includes(c.id)).map((m) => m.id);
      if (by.length) row(dl, T.supby, ids(by));
      row(dl, T.src, c.src ? c.src.join(", ") : T.hand);
      html("p", c.b, box, "body");
    } else {
      html("div", n.cross ? T.cross : T.entity, box, "id"); html("h2", n.name, box);
      const dl = html("dl", null, box);
      row(dl, T.mentions, String(n.m));
      row(dl, T.cardsOf, links(n.cards.map((m) => ({ label: m.c.t, n: m })), (it) => select(it.n, true)));
    }
  }
  function clearSelection() {
    if (selected) selected.el.classList.remove("sel", "focus");
    selected = null; $("details").hidden = true; $("details").replaceChildren();
  }

  // ---- search
  const fold = (s) => String(s || "").toLocaleLowerCase();
  let found = [];
  function search() {
    const q = fold($("q").value.trim()), box = $("results"); box.replaceChildren(); found = [];
    if (!q) { box.hidden = true; return; }
    for (const n of nodes) { if (n.off) continue;
      const hay = n.type === "card" ? [n.id, n.c.t, ...n.c.e.map((i) => nodes[i].name)] : [n.name];
      if (hay.some((h) => fold(h).includes(q))) found.push(n); }
    found.sort((a, b) => (b.type === "entity") - (a.type === "entity") || (fold(a.id) === q ? -1 : 0) ||
      (fold(b.id) === q ? 1 : 0));
    found = found.slice(0, 40);
    if (!found.length) html("li", T.nomatch, box);
    for (const n of found) { const li = html("li", null, box);
      html("span", n.type === "card" ? n.c.t : n.name, li); li.appendChild(document.createTextNode(" "));
      html("span", n.type === "card" ? n.id : `${n.m} ${T.mentions}`, li, "id");
      li.addEventListener("click", () => { select(n, true); box.hidden = true; }); }
    box.hidden = false;
  }
  $("q").addEventListener("input", search);
  $("q").addEventListener("keydown", (ev) => { if (ev.key === "Enter" && found.length) {
    const exact = found.find((n) => fold(n.id || n.name) === fold($("q").value.trim()));
    select(exact || found[0], true); $("results").hidden = true; } });

  // ---- filters: project, valid at a date
  function filter() {
    const p = sel.value === "" ? null : Number(sel.value), at = $("at").value;
    let shown = 0;
    for (const n of byId.values()) { const c = n.c, from = c.vf || c.c.slice(0, 10);
      n.off = (p !== null && c.p !== p) || (at !== "" && (c.s === "retracted" || from > at || (c.vt && c.vt <= at)));
      n.el.classList.toggle("off", n.off); if (!n.off) shown++; }
    for (const n of byEnt.values()) { n.off = !n.cards.some((m) => !m.off); n.el.classList.toggle("off", n.off); }
    for (const n of nodes) for (const e of n.edges) e.el.classList.toggle("off", e.a.off || e.b.off);
    $("count").textContent = shown === D.cards.length && D.hidden === 0 ?
      ` ${D.cards.length} ${T.cards} · ${D.ents.length} ${T.ents}` :
      ` ${T.showing} ${shown} ${T.of} ${D.total} ${T.cards}`;
    if (selected && selected.off) clearSelection();
    if (!raf) raf = requestAnimationFrame(labels);
  }
  sel.addEventListener("change", () => { filter(); fit(p_nodes()); });
  const p_nodes = () => (sel.value === "" ? null : nodes.filter((n) => !n.off));
  $("at").addEventListener("input", filter);
  $("fit").addEventListener("click", () => fit(p_nodes()));

  // ---- keyboard, fragment, theme
  document.addEventListener("keydown", (ev) => { if (ev.key !== "Escape") return;
    $("q").value = ""; search(); unhighlight(); clearSelection(); if (document.activeElement) document.activeElement.blur(); });
  function fragment() {
    const h = decodeURIComponent(location.hash.slice(1));
    if (h === "dark" || h === "light") document.documentElement.dataset.theme = h;
    else { delete document.documentElement.dataset.theme; const n = byId.get(h) || byEnt.get(h); if (n) select(n, true); }
  }
  addEventListener("hashchange", fragment);
  addEventListener("resize", () => fit(p_nodes()));
  filter(); fit(); fragment();
  requestAnimationFrame(() => { window.memvaultReady = performance.now(); document.body.dataset.ready = "1"; });
})();
