// The mindgraph dashboard: document list with facets, WebGL knowledge graph (sigma.js over
// graphology), explained hybrid search, page detail, and the actions of the documents API.
// Everything comes from the REST API of the server that served this file. Text from notes is
// only ever set as textContent; the one HTML string used (a rendered page) comes from the
// server's renderer, which draws a note's raw HTML through an allow-list (dashboard/raw_html.py:
// no script, handler, style or src gets through), and the page's CSP allows no inline script.
"use strict";
(() => {
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                   "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#8cd17d", "#a0cbe8", "#f1ce63"];
  const DIM = "#e4e6ea";
  const RELATIONS = ["reference", "depends_on", "extends", "related", "supersedes", "contradicts"];
  const LINK_KINDS = ["wikilink", ...RELATIONS];         // what POST /links takes
  const LIST_ROWS = 300;
  const FACETS = [
    ["type", "Type", (n) => [n.type || "(none)"]],
    ["tag", "Tag", (n) => (n.tags.length ? n.tags : ["(none)"])],
    ["community", "Community", (n) => [n.community === null ? "(none)" : String(n.community)]],
    ["scope", "Scope", (n) => [n.scope || "(none)"]],
    ["trust", "Trust", (n) => ["L" + n.trust]],
  ];
  const state = {
    token: null, nodes: [], byId: new Map(), communities: new Map(), text: "", sort: "title",
    active: Object.fromEntries(FACETS.map(([key]) => [key, new Set()])), expanded: new Set(),
    filtered: null, hits: null, selected: null, graph: null, sigma: null, hovered: null,
    lod: null, strong: null, thinned: false, moving: false,
  };
  const $ = (id) => document.getElementById(id);
  let readyResolve;
  const ready = new Promise((resolve) => { readyResolve = resolve; });
  window.mindgraph = { state, ready };

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const pageHash = (path) => "#page=" + encodeURIComponent(path).replace(/%2F/g, "/");

  class ApiError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  async function api(path, options = {}) {
    const headers = new Headers(options.headers || {});
    if (state.token) headers.set("Authorization", "Bearer " + state.token);
    if (options.json !== undefined) {
      headers.set("Content-Type", "application/json");
      options = { ...options, body: JSON.stringify(options.json) };
    }
    const response = await fetch(path, { ...options, headers });
    const kind = response.headers.get("content-type") || "";
    const body = kind.includes("json") ? await response.json() : await response.text();
    if (response.status === 401) {
      $("login").hidden = false;
      throw new ApiError(401, "This server needs its token: paste it into the Bearer token " +
                              "field at the top and press Sign in.");
    }
    if (!response.ok) {
      const detail = typeof body === "object" && body ? (body.detail || body.error) : body;
      throw new ApiError(response.status, `${response.status}: ${detail || response.statusText}`);
    }
    return body;
  }

  // Attachments (GET /dashboard/attachment) are shown and opened by their route URL, which
  // the server signed for this viewer when it needs a token (an <img> or a link cannot send
  // one: serve/attachment_tickets.py). Never through a blob: URL: a blob: document runs under
  // this page's origin and policy, where the route's answer is sandboxed (an SVG's scripts).
  function loadAttachments(root) {
    for (const img of root.querySelectorAll("img[data-src]")) {
      img.addEventListener("load", () => { delete img.dataset.renewed; });
      img.addEventListener("error", () => {
        // a ticket that expired unrenewed (the computer slept past the timer): renewed,
        // and the image tried once more
        const before = img.dataset.src;
        if (ticketOf(before) && !img.dataset.renewed) {
          img.dataset.renewed = "1";
          renewAttachments().then(() => { if (img.dataset.src === before) missingImage(img); });
          return;
        }
        missingImage(img);
      });
      img.src = img.dataset.src;
    }
  }

  function missingImage(img) {
    img.classList.add("missing");
    img.title = "attachment not found";
  }

  // A ticket expires (``expires``, Unix seconds: an hour or more after the page was asked
  // for, at the end of a ten-minute bucket). The page renews its URLs before then: it asks
  // for the page again and gives each image and link the new URL of its target and page,
  // so a page left open gets no 401 for its files. A link whose ticket ended anyway opens
  // a tab at once (while the click may open one) and sends it to the renewed URL.
  const TICKETED = "img[data-src], a[data-attachment]";
  const renewal = state.renewal = { body: null, path: null, timer: null, at: Infinity,
                                    soonest: -Infinity, pending: null };

  function ticketOf(url) {
    const query = new URL(url || "", location.href).searchParams;
    return query.has("ticket") ? query : null;
  }

  function urlOf(element) {
    return element.tagName === "IMG" ? element.dataset.src : element.getAttribute("href");
  }

  function attachmentKey(url) {
    const query = new URL(url, location.href).searchParams;
    return query.get("target") + "\n" + query.get("page");
  }

  function watchTickets(body, path) {
    clearTimeout(renewal.timer);
    if (path !== renewal.path) renewal.soonest = -Infinity;
    Object.assign(renewal, { body, path, at: Infinity });
    const ends = [...body.querySelectorAll(TICKETED)].map((e) => ticketOf(urlOf(e)))
      .filter(Boolean).map((query) => Number(query.get("expires")));
    if (!ends.length) return;
    const now = Date.now() / 1000, soonest = Math.min(...ends);
    // a renewal that brought no later expiry (this clock far ahead of the server's) is not
    // tried again at once: a minute later
    const wait = soonest <= renewal.soonest ? 60_000 : 1000;
    renewal.soonest = soonest;
    renewal.at = soonest - Math.min(60, (soonest - now) / 10);   // a minute before, at most
    renewal.timer = setTimeout(renewAttachments, Math.max(wait, (renewal.at - now) * 1000));
  }

  function renewAttachments() {
    const { body, path } = renewal;
    if (renewal.pending || !body || !body.isConnected) return renewal.pending || Promise.resolve();
    renewal.pending = api("/dashboard/page?page=" + encodeURIComponent(path)).then((view) => {
      const fresh = document.createElement("template");
      fresh.innerHTML = view.html;           // inert: nothing in a template is loaded
      const urls = new Map([...fresh.content.querySelectorAll(TICKETED)]
        .map((e) => [attachmentKey(urlOf(e)), urlOf(e)]));
      for (const element of body.querySelectorAll(TICKETED)) {
        const url = urls.get(attachmentKey(urlOf(element)));
        if (!url || url === urlOf(element)) continue;
        if (element.tagName === "IMG") {
          element.dataset.src = url;
          element.src = url;
        } else {
          element.setAttribute("href", url);
        }
      }
      return true;
    }).catch((error) => {
      // not tried again on a timer (a token gone would be asked for every second): an
      // image's error, a click or the tab shown again tries
      say("Could not renew the page's attachment links: " + error.message, true);
      return false;
    }).then((renewed) => {
      renewal.pending = null;
      if (renewed && body.isConnected) watchTickets(body, path);
    });
    return renewal.pending;
  }

  function openRenewed(event) {
    const link = event.target.closest("a[data-attachment]");
    const query = link && ticketOf(link.getAttribute("href"));
    if (!query || Number(query.get("expires")) > Date.now() / 1000 + 5) return;
    event.preventDefault();
    const tab = window.open("", "_blank");
    if (tab) tab.opener = null;
    renewAttachments().then(() => { if (tab) tab.location.replace(link.href); });
  }

  // A footnote's number and its back-arrow scroll within the page: the address keeps naming
  // the page (#page=...), which a plain "#fn1" link would replace.
  function followFootnotes(root) {
    for (const link of root.querySelectorAll(".footnote-ref a, a.footnote-backref")) {
      link.addEventListener("click", (event) => {
        const target = root.querySelector(`[id="${CSS.escape(link.getAttribute("href").slice(1))}"]`);
        if (!target) return;
        event.preventDefault();
        target.scrollIntoView({ block: "center" });
      });
    }
  }

  // A #tag in a page filters the list by that tag, as a click on a tag in Obsidian searches
  // for it (the graph's tags are case-insensitive: the facet's own spelling is the one used).
  function followTags(root, path) {
    const node = state.byId.get(path);
    for (const tag of root.querySelectorAll(".tag[data-tag]")) {
      const wanted = tag.dataset.tag.toLowerCase();
      const value = (node && node.tags.find((t) => t.toLowerCase() === wanted)) || tag.dataset.tag;
      Object.assign(tag, { tabIndex: 0, title: `Show the pages tagged #${value}` });
      tag.setAttribute("role", "button");
      const show = () => { if (!state.active.tag.has(value)) toggle("tag", value); };
      tag.addEventListener("click", show);
      tag.addEventListener("keydown", (event) => { if (event.key === "Enter") show(); });
    }
  }

  // A sticky message stays until something else is said or it is hidden (the request for
  // the token: gone after 4 s, it left a blank page that did not say why).
  function say(text, error = false, sticky = false) {
    const box = $("message");
    box.textContent = text;
    box.className = error ? "error" : "";
    box.hidden = false;
    clearTimeout(say.timer);
    if (!sticky) say.timer = setTimeout(() => { box.hidden = true; }, error ? 8000 : 4000);
    if (error) console.warn("mindgraph:", text);
  }

  // ---- data -------------------------------------------------------------------------------
  async function load() {
    const data = await api("/dashboard/graph");
    state.nodes = data.nodes;
    state.byId = new Map(data.nodes.map((n) => [n.id, n]));
    state.communities = new Map(data.communities.map((c) => [String(c.id), c]));
    // why the list is empty (notes never compiled), as the search results show their notes
    $("list-notes").replaceChildren(...(data.notes || []).map((d) => el("li", {}, d)));
    drawGraph(data);
    refreshList();
    $("legend").textContent = `${data.nodes.length} pages · ${data.edges.length} links · ` +
      `${data.communities.length} communities — solid arrows: written links, faint lines: ` +
      `shared tags (inferred)`;
  }

  // ---- filters and list -------------------------------------------------------------------
  function facetLabel(key, value) {
    if (key === "community" && value !== "(none)") {
      const c = state.communities.get(value);
      return c ? c.name : value;
    }
    return value;
  }

  function matches(node, except) {
    if (state.text) {
      const hay = (node.title + "\n" + node.id + "\n" + node.tags.join(" ")).toLowerCase();
      if (!hay.includes(state.text)) return false;
    }
    for (const [key, , values] of FACETS) {
      const wanted = state.active[key];
      if (key === except || wanted.size === 0) continue;
      if (!values(node).some((v) => wanted.has(v))) return false;
    }
    return true;
  }

  function anyFilter() {
    return Boolean(state.text) || FACETS.some(([key]) => state.active[key].size > 0);
  }

  function refreshList() {
    renderChips();
    const shown = state.nodes.filter((n) => matches(n, null));
    state.filtered = anyFilter() ? new Set(shown.map((n) => n.id)) : null;
    const by = {
      title: (a, b) => a.title.localeCompare(b.title),
      date: (a, b) => (b.date || "").localeCompare(a.date || "") || a.title.localeCompare(b.title),
      backlinks: (a, b) => b.backlinks - a.backlinks || a.title.localeCompare(b.title),
    }[state.sort];
    shown.sort(by);
    $("list-count").textContent = `${shown.length} of ${state.nodes.length} pages` +
      (shown.length > LIST_ROWS ? ` (first ${LIST_ROWS} listed: filter to see the rest)` : "");
    const list = $("doc-list");
    list.replaceChildren(...shown.slice(0, LIST_ROWS).map((n) => el("li",
      { class: n.id === state.selected ? "selected" : null, dataset: { page: n.id } },
      el("a", { href: pageHash(n.id) }, n.title),
      el("span", { class: "meta" }, [n.id, `${n.backlinks} backlinks`, n.date, n.type]
        .filter(Boolean).join(" · ")))));
    redraw();
  }

  function renderChips() {
    const groups = FACETS.map(([key, name, values]) => {
      const counts = new Map();
      for (const node of state.nodes) {
        if (!matches(node, key)) continue;
        for (const v of new Set(values(node))) counts.set(v, (counts.get(v) || 0) + 1);
      }
      for (const v of state.active[key]) if (!counts.has(v)) counts.set(v, 0);
      const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      const limit = state.expanded.has(key) ? sorted.length : 8;
      const chips = sorted.filter(([v], i) => i < limit || state.active[key].has(v))
        .map(([value, count]) => el("button", {
          type: "button", class: "chip" + (state.active[key].has(value) ? " active" : ""),
          dataset: { facet: key, value }, "aria-pressed": String(state.active[key].has(value)),
          onclick: () => toggle(key, value),
        }, facetLabel(key, value), el("span", { class: "count" }, count)));
      const more = sorted.length > limit ? el("button", {
        type: "button", class: "more", onclick: () => { state.expanded.add(key); renderChips(); },
      }, `+${sorted.length - limit} more`) : null;
      return el("div", { class: "facet", dataset: { facet: key } },
        el("span", { class: "facet-name" }, name), chips, more);
    });
    $("chips").replaceChildren(...groups);
  }

  function toggle(key, value) {
    const set = state.active[key];
    if (set.has(value)) set.delete(value); else set.add(value);
    refreshList();
  }

  // ---- graph ------------------------------------------------------------------------------
  // Level of detail. WebGL done by the CPU (SwiftShader, llvmpipe: no GPU) spends a frame's time
  // filling edge pixels, so there: while the camera moves (drag, wheel, animation) edges and
  // labels are not drawn, and come back when it stops; and when a big graph is zoomed out only
  // its strongest edges are drawn (typed links, then links between well-linked pages), all of
  // them once zoomed in. With a GPU only graphs of more than GPU_MOVE_NODES nodes hide on move.
  // ?lod=off turns it off (to measure the full drawing).
  const EDGE_BUDGET = { software: 2500, gpu: 20000 };
  const GPU_MOVE_NODES = 4000;
  const THIN_RATIO = 0.45;          // camera ratio above which a big graph is "zoomed out"
  state.lod = levelOfDetail();

  function levelOfDetail() {
    const on = !/[?&]lod=off\b/.test(location.search);
    let renderer = "unknown";
    try {
      const gl = document.createElement("canvas").getContext("webgl");
      const info = gl && gl.getExtension("WEBGL_debug_renderer_info");
      if (info) renderer = String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL));
      const lose = gl && gl.getExtension("WEBGL_lose_context");
      if (lose) lose.loseContext();
    } catch { /* no WebGL: sigma says so itself */ }
    const software = /swiftshader|llvmpipe|softpipe|software|microsoft basic render/i.test(renderer);
    return { on, renderer, software, budget: software ? EDGE_BUDGET.software : EDGE_BUDGET.gpu };
  }

  // The edges drawn when a big graph is zoomed out: typed links first, then written links,
  // then inferred ones, each by how well linked the less linked of its two pages is.
  function strongestEdges(graph, budget) {
    if (graph.size <= budget) return null;
    const scored = [];
    graph.forEachEdge((id, attrs, s, t) => {
      const rank = attrs.kind !== "extracted" ? 0 : attrs.label ? 2 : 1;
      scored.push([rank * 1e6 + Math.min(graph.degree(s), graph.degree(t)), id]);
    });
    scored.sort((a, b) => b[0] - a[0]);
    return new Set(scored.slice(0, budget).map(([, id]) => id));
  }

  function thinning() { return state.lod.on && state.strong !== null && state.thinned; }

  // Zooming across THIN_RATIO switches between the strongest edges and all of them, once the
  // camera has come to rest (a refresh re-reads every edge: not during a gesture).
  function watchZoom(renderer) {
    let rest = null;
    renderer.getCamera().on("updated", (camera) => {
      clearTimeout(rest);
      rest = setTimeout(() => {
        const thin = camera.ratio > THIN_RATIO;
        if (thin !== state.thinned) { state.thinned = thin; redraw(); }
      }, 150);
    });
  }

  // While the camera moves, the canvases sigma then leaves empty (edges, labels, hover) are
  // taken out of the page: the browser composites every canvas layer in every frame, and
  // without a GPU that costs as much as drawing. They are back for the frame at rest.
  const MOVE_HIDDEN_LAYERS = ["edges", "edgeLabels", "labels", "hovers", "hoverNodes"];

  function hideLayersOnMove(renderer) {
    const canvases = renderer.getCanvases(), captor = renderer.getMouseCaptor();
    const camera = renderer.getCamera();
    renderer.on("beforeRender", () => {
      const moving = Boolean(camera.isAnimated() || captor.isMoving || captor.draggedEvents ||
                             captor.currentWheelDirection);
      if (moving === state.moving) return;
      state.moving = moving;
      for (const name of MOVE_HIDDEN_LAYERS) {
        if (canvases[name]) canvases[name].style.visibility = moving ? "hidden" : "";
      }
    });
  }

  function hash(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    return (h >>> 0) / 4294967296;
  }

  function seedPosition(node, old) {
    if (old) return old;
    // communities on a golden-angle spiral, members scattered in a disc around their centre
    const rank = node.community === null ? 0 : node.community + 1;
    const angle = rank * 2.39996, radius = 12 * Math.sqrt(rank);
    const a = hash(node.id) * 2 * Math.PI, r = 4 * Math.sqrt(hash(node.id + "r"));
    return { x: radius * Math.cos(angle) + r * Math.cos(a), y: radius * Math.sin(angle) + r * Math.sin(a) };
  }

  function drawGraph(data) {
    const old = state.graph;
    const graph = new graphology.Graph({ type: "directed", multi: false, allowSelfLoops: false });
    let fresh = 0;
    for (const node of data.nodes) {
      const kept = old && old.hasNode(node.id) ? old.getNodeAttributes(node.id) : null;
      if (!kept) fresh++;
      const at = seedPosition(node, kept && { x: kept.x, y: kept.y });
      graph.addNode(node.id, {
        label: node.title, x: at.x, y: at.y, size: Math.min(3 + 1.4 * Math.sqrt(node.links), 20),
        color: node.community === null ? "#98a2b3" : PALETTE[node.community % PALETTE.length],
      });
    }
    for (const edge of data.edges) {
      const extracted = edge.kind === "extracted";
      if (!extracted && (graph.hasEdge(edge.source, edge.target) ||
                         graph.hasEdge(edge.target, edge.source))) continue;
      const typed = extracted && RELATIONS.includes(edge.relation);
      const attrs = extracted
        ? { type: "arrow", size: typed ? 1.6 : 1, color: typed ? "#5b6478" : "#9aa1ad",
            label: typed ? edge.relation.replace("_", " ") : "", kind: "extracted",
            relation: edge.relation }
        : { type: "line", size: 0.4, color: "#e8eaee", kind: "inferred", relation: edge.relation,
            label: "" };
      if (graph.hasEdge(edge.source, edge.target)) {
        if (extracted) graph.mergeEdgeAttributes(edge.source, edge.target, attrs);
      } else {
        graph.addEdge(edge.source, edge.target, attrs);
      }
    }
    const n = graph.order;
    if (fresh > 0 && n > 1) {
      const fa2 = graphologyLibrary.layoutForceAtlas2;
      const iterations = !old ? (n < 1500 ? 120 : n < 4000 ? 50 : 25) : 15;
      const started = performance.now();
      fa2.assign(graph, { iterations, settings: { ...fa2.inferSettings(graph),
        barnesHutOptimize: n > 600, adjustSizes: false, slowDown: 2 } });
      state.layoutMs = performance.now() - started;
    }
    state.graph = graph;
    state.strong = strongestEdges(graph, state.lod.budget);
    if (state.sigma) {
      state.sigma.setGraph(graph);
      return;
    }
    const lod = state.lod, hideOnMove = lod.on ? lod.software || n > GPU_MOVE_NODES : n > 4000;
    state.thinned = lod.on;            // the first view shows the whole graph: zoomed out
    state.sigma = new Sigma(graph, $("graph"), {
      renderEdgeLabels: true, zIndex: true, hideEdgesOnMove: hideOnMove,
      hideLabelsOnMove: lod.on && hideOnMove,
      labelFont: getComputedStyle(document.documentElement).fontFamily,
      labelDensity: n > 4000 ? 0.3 : 0.7, labelGridCellSize: 80,
      labelRenderedSizeThreshold: n > 4000 ? 12 : 7, edgeLabelSize: 11,
      nodeReducer: nodeLook, edgeReducer: edgeLook,
    });
    if (lod.on) watchZoom(state.sigma);
    if (lod.on && hideOnMove) hideLayersOnMove(state.sigma);
    wireGraphEvents(state.sigma);
  }

  function lit() { return state.hits || state.filtered; }

  function nodeLook(id, attrs) {
    const on = lit();
    const out = { ...attrs };
    if (id === state.selected) {
      out.highlighted = true; out.zIndex = 2; out.forceLabel = true;
    } else if (on && !on.has(id)) {
      out.color = DIM; out.label = ""; out.zIndex = 0;
    } else if (on) {
      out.highlighted = state.hits !== null; out.zIndex = 1;
      if (state.hits) out.forceLabel = on.size <= 30;
    }
    return out;
  }

  function edgeLook(id, attrs) {
    const on = lit(), thin = thinning() && !state.strong.has(id);
    if (!on && !state.selected && !thin) return attrs;
    const [s, t] = state.graph.extremities(id);
    const touches = state.selected && (s === state.selected || t === state.selected);
    if (touches) return { ...attrs, color: "#3559e0", zIndex: 2, size: attrs.size + 0.6 };
    if (on && !(on.has(s) && on.has(t))) return { ...attrs, hidden: true };
    if (thin && !(on && on.size <= 200)) return { ...attrs, hidden: true };  // few lit: all shown
    return attrs;
  }

  function resizeGraph() { if (state.sigma) state.sigma.resize(); }

  function redraw() { if (state.sigma) state.sigma.refresh({ skipIndexation: true }); }

  function wireGraphEvents(renderer) {
    const tip = $("tooltip");
    let dragged = null, moved = false;
    renderer.on("enterNode", ({ node, event }) => {
      state.hovered = node;
      const info = state.byId.get(node);
      $("tooltip-title").textContent = info ? info.title : node;
      $("tooltip-summary").textContent = info ? info.summary : "";
      placeTip(event);
      tip.hidden = false;        // sigma draws the hovered node's label itself: no refresh
    });
    renderer.on("leaveNode", () => { state.hovered = null; tip.hidden = true; });
    renderer.on("downNode", ({ node }) => {
      dragged = node; moved = false;
      renderer.getCamera().disable();
    });
    renderer.on("moveBody", ({ event }) => {
      if (tip.hidden === false) placeTip(event);
      if (!dragged) return;
      moved = true;
      const at = renderer.viewportToGraph(event);
      state.graph.mergeNodeAttributes(dragged, { x: at.x, y: at.y });
      event.preventSigmaDefault();
      event.original.preventDefault();
    });
    const drop = () => { dragged = null; renderer.getCamera().enable(); };
    renderer.on("upNode", drop);
    renderer.on("upStage", drop);
    renderer.on("clickNode", ({ node }) => {
      if (moved) { moved = false; return; }
      location.hash = pageHash(node);
    });
  }

  function placeTip(event) {
    const tip = $("tooltip");
    tip.style.left = (event.x + 14) + "px";
    tip.style.top = (event.y + 10) + "px";
  }

  function focusNode(id) {
    if (!state.sigma || !state.graph.hasNode(id)) return;
    const at = state.sigma.getNodeDisplayData(id);
    if (at) state.sigma.getCamera().animate({ x: at.x, y: at.y, ratio: 0.35 }, { duration: 400 });
  }

  // ---- search -----------------------------------------------------------------------------
  // A snippet's matched words come wrapped in **…** (retrieval/present.py, the explanation's
  // highlights; the page's own bold is taken out first): drawn as <mark> elements holding
  // text nodes, so what a note says is never read as markup. The marks sit exactly where the
  // server put them, with nothing added around them: a Japanese or Chinese word stays whole.
  // What is between backticks is code, its ** text (`a ** b`): the server marks a code span
  // whole, never inside (retrieval/snippet_marks.py, the same CODE_SPAN); an unpaired ** is text.
  function marked(snippet) {
    const text = String(snippet || ""), stars = [];
    text.split(/(`[^`]*`)/u).reduce((at, piece, i) => {
      if (i % 2 === 0) for (let j = piece.indexOf("**"); j >= 0; j = piece.indexOf("**", j + 2)) stars.push(at + j);
      return at + piece.length;
    }, 0);
    if (stars.length % 2) stars.pop();
    const out = [];
    let cursor = 0;
    for (let k = 0; k < stars.length; k += 2) {
      out.push(text.slice(cursor, stars[k]), el("mark", {}, text.slice(stars[k] + 2, stars[k + 1])));
      cursor = stars[k + 1] + 2;
    }
    out.push(text.slice(cursor));
    return out.filter((p) => p !== "");
  }

  async function search(query) {
    query = query.trim();
    if (!query) return clearSearch();
    $("search").value = query;
    const answer = await api("/smart_search?" + new URLSearchParams({ q: query, limit: "20" }));
    state.hits = new Set(answer.results.map((r) => r.page));
    $("results").hidden = false;
    $("results-title").textContent = `${answer.results.length} results for “${answer.query}”`;
    $("results-intent").textContent = `intent: ${answer.intent.name} ` +
      `(${Math.round(answer.intent.confidence * 100)}%)` +
      (answer.interpretation ? ` — ${answer.interpretation}` : "");
    $("results-notes").replaceChildren(...answer.degradation.map((d) => el("li", {}, d)));
    $("results-list").replaceChildren(...answer.results.map((r) => el("li", {},
      el("a", { href: pageHash(r.page) }, `${r.rank}. ${r.title}`),
      r.heading ? el("span", { class: "meta" }, "§ " + r.heading) : null,
      el("span", { class: "snippet" }, marked(r.snippet)),
      el("span", { class: "why" }, explain(r)))));
    $("results-followups").replaceChildren(...(answer.follow_ups.length
      ? [el("span", { class: "muted" }, "Follow-ups: ")] : []),
      ...answer.follow_ups.map((f) => el("button", { type: "button", class: "followup",
                                                    onclick: () => search(f) }, f)));
    redraw();
  }

  function explain(result) {
    const parts = Object.entries(result.sources).map(([name, info]) =>
      name === "graph" ? `graph: links ${info.linked}`
        : `${name} #${info.rank} (${Number(info.score).toFixed(2)})`);
    // a penalty (other_language) is "−0.057", never "+-0.057"
    const boosts = Object.entries(result.boosts).map(([name, v]) =>
      `${name} ${v < 0 ? "−" + Math.abs(v) : "+" + v}`);
    return [`score ${result.score.toFixed(3)}`, ...parts, ...boosts].join(" · ");
  }

  function clearSearch() {
    state.hits = null;
    $("results").hidden = true;
    $("search").value = "";
    redraw();
  }

  // ---- detail -----------------------------------------------------------------------------
  function facts(pairs) {
    return el("dl", { class: "facts" }, pairs.filter(([, v]) => v !== null && v !== undefined &&
      v !== "" && !(Array.isArray(v) && v.length === 0))
      .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, Array.isArray(v) ? v.join(", ") : v)]));
  }

  function linkTo(path, text) {
    return el("a", { class: "wikilink", href: pageHash(path) }, text || titleOf(path));
  }

  function titleOf(path) { const n = state.byId.get(path); return n ? n.title : path; }

  // ``anchor``: a block id ("^id") to scroll to, from a link to Note#^id, or a heading, from
  // a link to Note#Heading (matched by its letters and digits in any case, as links match)
  async function showDetail(path, anchor) {
    const enc = encodeURIComponent(path);
    let page, view;
    try {
      [page, view] = await Promise.all([api("/page?page=" + enc), api("/dashboard/page?page=" + enc)]);
    } catch (error) {
      say(error.message, true);
      return;
    }
    state.selected = page.path;
    const body = el("div", { class: "page-body", lang: view.lang === "other" ? null : view.lang });
    body.innerHTML = view.html;      // the server's renderer allow-listed the note's raw HTML
    loadAttachments(body);
    watchTickets(body, page.path);
    body.addEventListener("click", openRenewed);
    followFootnotes(body);
    followTags(body, page.path);
    const t = view.trust;
    const timeline = el("ul", { class: "links-list" }, el("li", { class: "muted" }, "…"));
    const outgoing = page.outgoing.map((l) => el("li", {},
      el("span", { class: "kind" }, l.relation === "wikilink" ? l.syntax : l.relation),
      // an attachment is no page: its file, not a broken link (the page body opens it)
      l.page ? linkTo(l.page) : l.status === "attachment" ? el("span", { class: "attachment" }, l.target)
        : el("span", { class: "wikilink broken" }, l.target || "#" + (l.heading || "")),
      l.status === "resolved" ? null : el("span", { class: "muted" }, " " + l.status)));
    const backlinks = page.backlinks.map((b) => el("li", {},
      el("span", { class: "kind" }, b.relation), linkTo(b.page),
      el("span", { class: "muted" }, ` line ${b.line}`)));
    $("detail-body").replaceChildren(
      el("h2", { lang: view.lang === "other" ? null : view.lang }, page.title),
      el("p", { class: "muted" }, page.path),
      facts([["Community", view.community ? `${view.community.name} (${view.community.size} pages)` : null],
             ["Type", view.type], ["Scope", view.scope], ["Tags", page.tags], ["Aliases", page.aliases]]),
      el("h3", {}, "Trust"),
      facts([["Level", `L${t.level ?? 0} ${t.status || "unverified"}`], ["Freshness", t.freshness],
             ["Stale because", t.stale], ["Origin", t.origin], ["Validator", t.validator],
             ["Last validated", t.last_validated], ["Revalidate after", t.revalidate_after],
             ["Evidence", t.evidence], ["Problem", t.problem]]),
      el("h3", {}, "Sources and compile"),
      facts([["Compiler", view.compile.compiler || "none (written by hand)"],
             ["Sources", view.compile.sources], ["Created", view.compile.created],
             ["Updated", view.compile.updated], ["Dated from", view.compile.date_source]]),
      el("h3", {}, `Sections (${page.sections.length})`),
      el("div", {}, page.sections.filter((s) => s.heading).map((s) => el("button", {
        type: "button", class: "section-link", onclick: () => scrollToHeading(body, s.heading),
      }, "  ".repeat(Math.max(0, s.level - 2)) + s.heading))),
      body,
      el("h3", {}, `Outgoing links (${page.outgoing.length})`), el("ul", { class: "links-list" }, outgoing),
      el("h3", {}, `Backlinks (${page.backlinks.length})`), el("ul", { class: "links-list" }, backlinks),
      el("h3", {}, "Timeline mentions"), timeline,
      el("h3", {}, "Add a typed link"), linkForm(page.path));
    if ($("detail").hidden) { $("detail").hidden = false; resizeGraph(); }
    $("detail").scrollTop = 0;
    const block = !anchor ? null : anchor.startsWith("^")
      ? [...body.querySelectorAll("[id]")].find((e) => e.id === anchor)
      : [...body.querySelectorAll("h1,h2,h3,h4,h5,h6")]
        .find((h) => headingKey(h.textContent) === headingKey(anchor));
    if (block) { block.classList.add("anchored"); block.scrollIntoView({ block: "start" }); }
    for (const li of $("doc-list").children) li.classList.toggle("selected", li.dataset.page === page.path);
    focusNode(page.path);
    redraw();
    loadTimeline(page.title, timeline);
  }

  async function loadTimeline(title, list) {
    try {
      const found = await api("/timeline?" + new URLSearchParams({ concept: title, limit: "10" }));
      list.replaceChildren(...(found.entries.length ? found.entries.map((e) => el("li", {},
        el("span", { class: "kind" }, e.date), e.page ? linkTo(e.page, e.title) : e.path,
        el("span", { class: "snippet" }, marked(e.snippet))))
        : [el("li", { class: "muted" }, "No dated note mentions it.")]));
    } catch (error) {
      list.replaceChildren(el("li", { class: "muted" }, "Timeline unavailable: " + error.message));
    }
  }

  function headingKey(text) { return text.replace(/[^\p{L}\p{N}]+/gu, "").toLowerCase(); }

  function scrollToHeading(body, heading) {
    const target = [...body.querySelectorAll("h1,h2,h3,h4,h5,h6")]
      .find((h) => h.textContent.trim() === heading.trim());
    if (target) target.scrollIntoView({ block: "start" });
  }

  function closeDetail() {
    state.selected = null;
    $("detail").hidden = true;
    resizeGraph();
    if (location.hash.startsWith("#page=") || location.hash === "#queue") {
      history.replaceState(null, "", location.pathname + location.search);
    }
    redraw();
  }

  function route() {
    if (location.hash === "#queue") { showQueue(); return; }
    const match = location.hash.match(/^#page=([^#]+)(?:#(.+))?$/);
    if (!match) return;
    let path, anchor;
    try {         // a note's link may carry a broken escape ([x](#page=%E0%A4%A)): no page
      [path, anchor] = [decodeURIComponent(match[1]), match[2] && decodeURIComponent(match[2])];
    } catch {
      say(`Not a page address: ${location.hash}`);
      return;
    }
    showDetail(path, anchor);
  }

  // ---- the propagation queue (GET /dashboard/propagation, POST /propagate/apply) ----------
  // Drafts of pages that state a fact which changed elsewhere; nothing is written until a
  // person approves a plan by typing (or pasting) its digest.
  const DIGEST = /^[0-9a-f]{64}$/;

  async function countQueue() {
    const button = $("queue-button");
    try {
      const { plans } = await api("/propagate/queue");
      const pages = plans.reduce((sum, p) => sum + p.targets.length, 0);
      button.textContent = plans.length ? `Queue (${pages})` : "Queue";
      button.hidden = false;
    } catch {
      button.hidden = true;       // this viewer may not see propagation (a scoped identity)
    }
  }

  async function showQueue() {
    let view;
    try {
      view = await api("/dashboard/propagation");
    } catch (error) { say(error.message, true); return; }
    state.selected = null;
    $("detail-body").replaceChildren(
      el("h2", {}, "Propagation queue"),
      el("p", { class: "muted" }, view.plans.length
        ? "Pages that state a fact which changed elsewhere, drafted to agree with it. Read " +
          "each change; approve a plan by entering its digest. Nothing is written before."
        : "Nothing is waiting for approval. `mindgraph propagate --plan` queues drafts after " +
          "a fact changes."),
      ...view.plans.map(planCard));
    if ($("detail").hidden) { $("detail").hidden = false; resizeGraph(); }
    $("detail").scrollTop = 0;
    redraw();
  }

  function planCard(plan) {
    const status = el("p", { class: "plan-status", role: "status" });
    const input = el("input", { name: "approve", class: "digest-input", autocomplete: "off",
      spellcheck: "false", placeholder: "Digest (64 hex characters)", "aria-label": "Digest" });
    const form = el("form", { class: "approve-form" }, input,
      el("button", { type: "submit" }, "Approve and apply"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      approve(plan, input.value.trim().toLowerCase(), status);
    });
    return el("section", { class: "plan", dataset: { plan: plan.plan } },
      el("h3", {}, `Plan ${plan.plan.replace(/\.json$/, "")} · ${plan.targets.length} page(s)`),
      facts([["Created", plan.created], ["Drafter", plan.drafter]]),
      el("p", { class: "digest" }, "Digest: ", el("code", {}, plan.digest)),
      ...plan.targets.map(targetView), form, status);
  }

  function targetView(target) {
    const reason = target.changed_page
      ? [linkTo(target.changed_page), " now says “", target.new, "” (it said “", target.old, "”)"]
      : ["A correction: “", target.new, "” (it said “", target.old, "”)"];
    const known = state.byId.has(target.path);
    return el("div", { class: "target", dataset: { page: target.path } },
      el("p", {}, el("span", { class: "kind" }, target.how),
        known ? linkTo(target.path) : el("strong", {}, target.path)),
      el("p", { class: "reason" }, ...reason),
      target.unchanged_since_plan ? null : el("p", { class: "warn" },
        "This page changed since the plan was made: applying it will be refused. Plan again."),
      ...target.passages.map((p) => el("div", { class: "passage" },
        el("span", { class: "muted" }, `line ${p.line}`),
        ...p.before.map((l) => el("div", { class: "ctx" }, l || " ")),
        ...p.removed.map((l) => el("del", {}, l || " ")),
        ...p.added.map((l) => el("ins", {}, l || " ")),
        ...p.after.map((l) => el("div", { class: "ctx" }, l || " ")))));
  }

  async function approve(plan, digest, status) {
    status.className = "plan-status";
    if (!DIGEST.test(digest)) {
      status.classList.add("error");
      status.textContent = "Not applied: enter the plan's whole digest (64 hex characters) shown above.";
      return;
    }
    status.textContent = "Applying…";
    try {
      const run = await api("/propagate/apply", { method: "POST",
                                                  json: { plan: plan.plan, approve: digest } });
      const applied = run.result_status === "APPLIED";
      status.classList.add(applied ? "done" : "error");
      status.textContent = applied ? `Applied: wrote ${run.written.join(", ")}.`
        : `Not applied (${run.result_status}): ${run.reason || run.process_status}`;
      if (applied) {
        say(`Applied the plan: ${run.written.length} page(s) updated.`);
        await load();
        await countQueue();
        if (location.hash === "#queue") await showQueue();
      }
    } catch (error) {
      status.classList.add("error");
      const detail = error.message.replace(/^\d+: /, "");
      status.textContent = error.status === 400 && digest !== plan.digest
        ? `Refused, nothing was written: the digest entered (${digest.slice(0, 16)}…) is not ` +
          `this plan's digest (${plan.digest.slice(0, 16)}…).`
        : error.status === 400 || error.status === 404
          ? "Refused, nothing was written: " + detail : error.message;
    }
  }

  // ---- actions (the documents API: POST /upload, /rescan, /links; GET /status) -----------
  function linkForm(source) {
    const form = el("form", { id: "link-form" },
      el("input", { name: "to", placeholder: "Target page", required: true }),
      el("select", { name: "kind" }, LINK_KINDS.map((r) => el("option", { value: r, selected: r === "related" }, r))),
      el("textarea", { name: "context", rows: 2, placeholder: "Why they are linked (a sentence)" }),
      el("button", { type: "submit" }, "Add link"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const wanted = String(data.get("to")).trim().toLowerCase();
      const target = state.nodes.find((n) => n.id.toLowerCase() === wanted ||
        n.title.toLowerCase() === wanted || n.id.toLowerCase() === wanted + ".md");
      if (!target) { say(`No page named “${data.get("to")}”: give its title or path.`, true); return; }
      try {
        await api("/links", { method: "POST", json: { from: state.byId.get(source).doc,
          to: target.doc, kind: data.get("kind"), context: data.get("context") || "" } });
        say("Link added.");
        await load();
        showDetail(source);
      } catch (error) { say(error.message, true); }
    });
    return form;
  }

  async function upload(files) {
    if (!files.length) return;
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    try {
      const done = await api("/upload", { method: "POST", body: form });
      say(`Uploaded ${done.documents.length} note(s) into ${done.folder}.`);
      await followProgress();
    } catch (error) { say("Upload failed: " + error.message, true); }
  }

  async function rescan() {
    try {
      await api("/rescan", { method: "POST", json: {} });
      say("Rescan started.");
      await followProgress();
    } catch (error) { say("Rescan failed: " + error.message, true); }
  }

  function describe(status) {
    if (!status || typeof status !== "object") return "";
    if (!status.busy) return "idle";
    return status.running.map((j) => [j.kind, j.phase, j.total ? `${j.done}/${j.total}` : "",
                                      j.current].filter(Boolean).join(" ")).join("; ");
  }

  // Follow GET /status as server-sent events (fetch, so the token goes along) until nothing
  // runs, showing each job's phase and progress; then reload the list and graph.
  async function followProgress() {
    const line = $("progress");
    line.textContent = "working…";
    try {
      const headers = new Headers({ Accept: "text/event-stream" });
      if (state.token) headers.set("Authorization", "Bearer " + state.token);
      const response = await fetch("/status", { headers });
      if (!response.ok) throw new ApiError(response.status, `status: ${response.status}`);
      if ((response.headers.get("content-type") || "").includes("text/event-stream")) {
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const data = buffer.slice(0, cut).split("\n").filter((l) => l.startsWith("data:"))
              .map((l) => l.slice(5).trim()).join("\n");
            buffer = buffer.slice(cut + 2);
            if (data) try { line.textContent = describe(JSON.parse(data)); } catch { /* a partial event */ }
          }
        }
      } else {
        line.textContent = describe(await response.json());
      }
    } catch (error) {
      line.textContent = error.status === 404 ? "" : error.message;
    }
    await load();
    line.textContent = "up to date";
  }

  function wireActions() {
    $("upload-button").addEventListener("click", () => $("upload-input").click());
    $("upload-input").addEventListener("change", (e) => upload([...e.target.files]));
    $("rescan-button").addEventListener("click", rescan);
    $("queue-button").addEventListener("click", () => {
      if (location.hash === "#queue") showQueue(); else location.hash = "#queue";
    });
    const zone = $("drop-zone");
    let depth = 0;
    window.addEventListener("dragenter", (e) => {
      if (![...(e.dataTransfer?.types || [])].includes("Files")) return;
      depth++; zone.hidden = false;
    });
    window.addEventListener("dragleave", () => { depth = Math.max(0, depth - 1); if (!depth) zone.hidden = true; });
    window.addEventListener("dragover", (e) => e.preventDefault());
    window.addEventListener("drop", (e) => {
      e.preventDefault(); depth = 0; zone.hidden = true;
      upload([...(e.dataTransfer?.files || [])]);
    });
  }

  // ---- start ------------------------------------------------------------------------------
  function wire() {
    $("search-form").addEventListener("submit", (e) => {
      e.preventDefault();
      search($("search").value).catch((error) => say(error.message, true));
    });
    $("results-clear").addEventListener("click", clearSearch);
    $("text-filter").addEventListener("input", (e) => {
      state.text = e.target.value.trim().toLowerCase();
      refreshList();
    });
    $("sort").addEventListener("change", (e) => { state.sort = e.target.value; refreshList(); });
    // on a phone the facets are folded away (the list had no room): this button shows them
    $("filters-toggle").addEventListener("click", () => {
      const open = $("filters").classList.toggle("open");
      $("filters-toggle").setAttribute("aria-expanded", String(open));
    });
    // the whole row opens its page, not only the title (a click on the path or the backlink
    // count did nothing)
    $("doc-list").addEventListener("click", (e) => {
      const row = e.target.closest("li");
      if (!row || e.target.closest("a")) return;
      location.hash = pageHash(row.dataset.page);
    });
    $("detail-close").addEventListener("click", closeDetail);
    $("login").addEventListener("submit", (e) => {
      e.preventDefault();
      state.token = $("token").value.trim() || null;    // kept in this tab's memory only
      $("token").value = "";
      $("login").hidden = true;
      $("message").hidden = true;
      start();
    });
    window.addEventListener("hashchange", route);
    // a tab shown again after its timers slept: the page's tickets renewed if they are due
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && Date.now() / 1000 >= renewal.at) renewAttachments();
    });
    wireActions();
  }

  async function start() {
    try {
      await load();
      await countQueue();
      route();
      document.body.dataset.ready = "true";
      readyResolve();
    } catch (error) {
      if (error.status === 401) {
        say(error.message, false, true);
        $("token").focus();
      } else {
        say(error.message, true);
      }
    }
  }

  wire();
  start();
})();
