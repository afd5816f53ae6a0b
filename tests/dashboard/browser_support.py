"""Driving the dashboard in a real headless Chromium (Debian's ``chromium``, installed by
.ci/run) with Playwright, for the browser tests and bench/bench_dashboard.py.

Playwright's own browser download cannot run here (no network but the package registries), so
it is pointed at the system chromium with ``executable_path``. WebGL runs on SwiftShader (the
CPU): frame times are the CPU's, an upper bound for a machine with a GPU.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = ["--enable-unsafe-swiftshader", "--use-angle=swiftshader",
                 "--ignore-gpu-blocklist", "--disable-dev-shm-usage"]
ARTIFACTS = Path(os.environ.get("MINDGRAPH_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "bench-out" / "dashboard"))


def chromium_path() -> str | None:
    """The system Chromium ($MINDGRAPH_CHROMIUM, chromium or chromium-browser), or None."""
    given = os.environ.get("MINDGRAPH_CHROMIUM")
    if given:
        return given
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def live_server(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port; yields its base URL."""
    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", loop="asyncio",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the dashboard test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        listener.close()


class ConsoleWatch:
    """Collects a page's console errors and warnings, uncaught errors and failed requests."""

    def __init__(self, page: Any):
        self.problems: list[str] = []
        page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"),
                                     d.dismiss()))


def open_dashboard(browser: Any, url: str, *, wait: bool = True) -> tuple[Any, ConsoleWatch]:
    """A new tab on the dashboard at ``url``, waiting until its graph is drawn."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    watch = ConsoleWatch(page)
    page.goto(url)
    if wait:
        page.wait_for_selector("body[data-ready=true]", timeout=120_000)
    return page, watch


def shot(page: Any, name: str) -> Path:
    """A screenshot kept as an artifact (bench-out/dashboard/, not committed)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / name
    page.screenshot(path=str(target))
    return target


def node_point(page: Any, node: str, zoom_ratio: float | None = None) -> tuple[float, float]:
    """Where ``node`` is on the page (after centring the camera on it when ``zoom_ratio``)."""
    box = page.locator("#graph").bounding_box()
    at = page.evaluate("""([id, ratio]) => {
        const s = window.mindgraph.state.sigma, d = s.getNodeDisplayData(id);
        if (ratio !== null) s.getCamera().setState({x: d.x, y: d.y, ratio, angle: 0});
        s.refresh();
        return s.framedGraphToViewport(d);
    }""", [node, zoom_ratio])
    return box["x"] + at["x"], box["y"] + at["y"]


# The gesture meter: what a person dragging and zooming the graph sees. Mouse events go to
# sigma's own mouse layer (so sigma knows the camera is moving, as with a real mouse): a drag
# in a circle for the first half of ``frames`` animation frames, then a wheel zoom in and out
# (one wheel step every 8 frames). It times the gaps between frames (everything the browser
# does for a frame, compositing included), each render (sigma's JS and the WebGL work, waited
# for by reading a pixel back) and how many renders drew edges; then, once the camera has come
# to rest, whether the edges are drawn again.
GESTURE_JS = """async (frames) => {
    const s = window.mindgraph.state.sigma, camera = s.getCamera(), start = camera.getState();
    const layer = s.getContainer().querySelector(".sigma-mouse"), box = layer.getBoundingClientRect();
    const gls = Object.values(s.webGLContexts), own = s.render.bind(s), pixel = new Uint8Array(4);
    const gaps = [], costs = [];
    let edgeDraws = 0;
    const programs = Object.values(s.edgePrograms), drawn = programs.map((p) => p.render.bind(p));
    programs.forEach((p, i) => { p.render = (params) => { edgeDraws++; return drawn[i](params); }; });
    let lastDrewEdges = false, phase = "drag";
    const phases = {drag: {renders: 0, with_edges: 0}, zoom: {renders: 0, with_edges: 0},
                    rest: {renders: 0, with_edges: 0}};
    s.render = () => {
        const t0 = performance.now(), before = edgeDraws;
        own();
        for (const gl of gls) gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
        costs.push(performance.now() - t0);
        lastDrewEdges = edgeDraws > before;
        phases[phase].renders++;
        if (lastDrewEdges) phases[phase].with_edges++;
        return s;
    };
    // the drag starts on the stage, not on a node (that would drag the node): the point of a
    // grid around the centre farthest from every node
    const at = window.mindgraph.state.graph.mapNodes((id) => {
        const d = s.getNodeDisplayData(id);
        return {...s.framedGraphToViewport(d), r: s.scaleSize(d.size)};
    });
    let cx = box.left + box.width / 2, cy = box.top + box.height / 2, best = -Infinity;
    for (let gx = 0.25; gx <= 0.75; gx += 0.02) for (let gy = 0.2; gy <= 0.6; gy += 0.02) {
        const x = box.width * gx, y = box.height * gy;
        let near = Infinity;
        for (const p of at) near = Math.min(near, Math.hypot(p.x - x, p.y - y) - p.r);
        if (near > best) { best = near; cx = box.left + x; cy = box.top + y; }
    }
    const mouse = (type, x, y) => layer.dispatchEvent(new MouseEvent(type, {
        clientX: x, clientY: y, button: 0, buttons: type === "mouseup" ? 0 : 1,
        bubbles: true, cancelable: true}));
    const wheel = (dy) => layer.dispatchEvent(new WheelEvent("wheel", {
        clientX: cx, clientY: cy, deltaY: dy, deltaMode: 0, bubbles: true, cancelable: true}));
    const half = Math.floor(frames / 2);
    await new Promise((done) => {
        let i = 0, last = null;
        const step = (now) => {
            if (last !== null) gaps.push(now - last);
            last = now;
            if (i === frames) { done(); return; }
            if (i === 0) mouse("mousedown", cx, cy);
            if (i < half) {
                const a = 2 * Math.PI * i / half;
                mouse("mousemove", cx + 120 * Math.sin(a), cy + 120 * (1 - Math.cos(a)));
            } else if (i === half) {
                mouse("mouseup", cx, cy);
                phase = "zoom";
            } else if ((i - half) % 8 === 0) {
                wheel(i - half < (frames - half) / 2 ? -100 : 100);   // in, then out
            }
            i++;
            requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
    });
    const moving = edgeDraws;
    phase = "rest";
    await new Promise((done) => setTimeout(done, 600));      // the camera comes to rest
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    const rested = lastDrewEdges;
    delete s.render;
    programs.forEach((p) => { delete p.render; });
    camera.setState(start);
    const q = (values, p) => [...values].sort((a, b) => a - b)[Math.floor(p * (values.length - 1))];
    return {frames: gaps.length, frame_median_ms: q(gaps, 0.5), frame_p95_ms: q(gaps, 0.95),
            render_median_ms: q(costs, 0.5), renders: costs.length, edge_draws_moving: moving,
            edges_after_rest: rested, phases, renderer: (window.mindgraph.state.lod || {}).renderer,
            nodes: window.mindgraph.state.graph.order, edges: window.mindgraph.state.graph.size};
}"""

# The same browser's floor: one WebGL canvas of the graph's size cleared on every frame.
FLOOR_JS = """async (frames) => {
    const c = document.createElement("canvas"), box = document.getElementById("graph");
    c.width = box.clientWidth; c.height = box.clientHeight;
    c.style.cssText = "position:absolute;inset:0;pointer-events:none";
    box.appendChild(c);
    const gl = c.getContext("webgl"), gaps = [];
    await new Promise((done) => {
        let i = 0, last = null;
        const step = (now) => {
            if (last !== null) gaps.push(now - last);
            last = now;
            if (i++ === frames) { done(); return; }
            gl.clearColor(i % 2, 0.5, 0.5, 1); gl.clear(gl.COLOR_BUFFER_BIT);
            requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
    });
    c.remove();
    return [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)];
}"""


def hover_latency(page: Any, node: str) -> float:
    """Milliseconds from the mouse reaching ``node`` to its hover card on screen."""
    x, y = node_point(page, node, 0.2)
    page.mouse.move(x - 200, y - 200)
    page.wait_for_selector("#tooltip", state="hidden")
    started = time.perf_counter()
    page.mouse.move(x, y)
    page.wait_for_selector("#tooltip", state="visible", timeout=10_000)
    return (time.perf_counter() - started) * 1e3


def synthetic_graph(pages: int, seed: int = 7) -> dict[str, Any]:
    """A /dashboard/graph answer of ``pages`` pages in ~pages/250 communities: each page links
    to 2-4 pages (mostly of its community, a few hubs drawing many links), plus shared-tag
    edges among a tenth of them."""
    rng = random.Random(seed)
    communities = max(1, pages // 250)
    ids = [f"Area {i % communities}/Page {i}.md" for i in range(pages)]
    edges, degree = [], [0] * pages
    for i in range(pages):
        for _ in range(rng.randint(2, 4)):
            if rng.random() < 0.8:
                j = rng.randrange(i % communities, pages, communities)
            else:
                j = int(rng.paretovariate(1.2)) % pages
            if j != i:
                relation = "wikilink" if rng.random() < 0.95 else "related"
                edges.append({"source": ids[i], "target": ids[j], "kind": "extracted",
                              "relation": relation, "label": ""})
                degree[i] += 1
                degree[j] += 1
        if i % 10 == 0:
            j = rng.randrange(pages)
            if j != i:
                edges.append({"source": ids[i], "target": ids[j], "kind": "inferred",
                              "relation": "shared_tag", "label": "tags: #x"})
    nodes = [{"id": ids[i], "title": f"Page {i}", "type": ["guide", "note", None][i % 3],
              "tags": [f"t{i % 17}"], "scope": ["team", "shared"][i % 2],
              "community": i % communities, "trust": i % 4, "date": None, "links": degree[i],
              "backlinks": degree[i] // 2, "summary": f"Synthetic page {i}."}
             for i in range(pages)]
    return {"nodes": nodes, "edges": edges,
            "communities": [{"id": c, "name": f"Area {c}", "size": pages // communities}
                            for c in range(communities)]}
