"""Dashboard interaction figures in a real headless Chromium (issues 17 and 19).

    python bench/bench_dashboard.py                  # 883-page vault, then a 10,000-page graph
    python bench/bench_dashboard.py --frames 240 --json
    python bench/bench_dashboard.py --baseline /work/main/mindgraph/dashboard/static/dashboard.js

What it does: `mindgraph serve`'s app (uvicorn, in-process thread) over a copy of the
Obsidian Help vault (883 pages, en/ja/zh) in a temp dir; Debian's chromium driven by
Playwright opens the dashboard and reports, per graph and drawing:

- load: navigation until the graph is drawn (GET /dashboard/graph, ForceAtlas2 layout, first
  WebGL frame); layout: the ForceAtlas2 part of it;
- frames: a drag and a wheel zoom sent to sigma's mouse layer, one event per animation frame
  (tests/dashboard/browser_support.GESTURE_JS): the time between frames (median, p95) — what
  a person dragging or zooming sees — each render's own time (sigma's JS and the WebGL work,
  waited for by reading a pixel back), and whether the edges are drawn again once the camera
  rests;
- filter: typing into the list filter (list, facet counts and graph highlight redrawn at once);
- hover: mouse reaching a node until its hover card is on screen (median of 5, incl. the
  Playwright round trip);
- floor: the same browser's frame when one WebGL canvas of the graph's size is cleared each
  frame: no drawing of ours can beat it.

Drawings: "lod" is the dashboard as shipped (level of detail: see dashboard.js), "full" the
same page with ?lod=off (every edge and label in every frame), and with --baseline FILE the
page with that dashboard.js in place of ours (e.g. main's tree), measured side by side.

The 10,000-page graph is synthetic (tests/dashboard/browser_support.synthetic_graph: 40
communities, ~31,000 edges) and handed to the page in place of GET /dashboard/graph, so it
measures the browser side only. WebGL runs on SwiftShader (CPU): a machine with a GPU draws
faster. The machine's load average is printed: other work on it slows every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "dashboard"))

from browser_support import (CHROMIUM_ARGS, FLOOR_JS, GESTURE_JS,  # noqa: E402
                             chromium_path, hover_latency, live_server, synthetic_graph)
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)


def _corpus() -> Path:
    return shared_corpora.require(shared_corpora.corpora(), "obsidian-help") / "obsidian-help"


FILTER_JS = """() => {
    const filter = document.getElementById("text-filter"), took = [];
    for (const text of ["a", "in", "set", ""]) {
        const t0 = performance.now();
        filter.value = text;
        filter.dispatchEvent(new Event("input"));
        took.push(performance.now() - t0);
    }
    return took;
}"""


def measure(browser, url: str, frames: int, graph: str | None = None,
            script: str | None = None) -> dict:
    """One graph's figures with one drawing (see the module docstring)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    if graph is not None:
        page.route("**/dashboard/graph", lambda route: route.fulfill(
            status=200, content_type="application/json", body=graph))
    if script is not None:
        page.route("**/dashboard/static/dashboard.js", lambda route: route.fulfill(
            status=200, content_type="text/javascript", body=script))
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=300_000)
    load_ms = (time.perf_counter() - started) * 1e3
    figures = page.evaluate(GESTURE_JS, frames)
    filters = page.evaluate(FILTER_JS)
    floor = page.evaluate(FLOOR_JS, 60)
    layout = page.evaluate("window.mindgraph.state.layoutMs")
    hub = page.evaluate("() => [...window.mindgraph.state.nodes]"
                        ".sort((a, b) => b.links - a.links)[0].id")
    hovers = [hover_latency(page, hub) for _ in range(5)]
    page.close()
    return {**figures, "load_ms": load_ms, "layout_ms": layout, "filter_ms": filters,
            "floor_ms": floor, "hover_median_ms": statistics.median(hovers)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--pages", type=int, default=10_000, help="synthetic graph size")
    parser.add_argument("--baseline", type=Path, help="another dashboard.js to measure too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    chromium = chromium_path()
    if chromium is None:
        sys.exit("no chromium: apt-get install chromium (or set MINDGRAPH_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph
    from mindgraph.serve.rest import create_app

    drawings = [("lod", "", None), ("full", "?lod=off", None)]
    if args.baseline:
        drawings.append(("baseline", "", args.baseline.read_text(encoding="utf-8")))
    load = os.getloadavg()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(_corpus(), Path(tmp) / "wiki")
        app = create_app(Mindgraph(settings_from_dict({}, base_dir=tmp)))
        with live_server(app) as url, sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            import httpx

            httpx.get(url + "/dashboard/graph", timeout=120)         # warm
            took = []
            for _ in range(3):
                t0 = time.perf_counter()
                httpx.get(url + "/dashboard/graph", timeout=120).raise_for_status()
                took.append((time.perf_counter() - t0) * 1e3)
            synthetic = json.dumps(synthetic_graph(args.pages))
            for graph_name, graph in (("vault", None), (f"synthetic_{args.pages}", synthetic)):
                for name, query, script in drawings:    # side by side, graph by graph
                    results[f"{graph_name} {name}"] = measure(browser, url + "/" + query,
                                                              args.frames, graph, script)
            results["vault lod"]["server_graph_ms"] = statistics.median(took)
            browser.close()
    after = os.getloadavg()
    if args.json:
        print(json.dumps({"load_average": load, "load_average_after": after, **results},
                         indent=1))
        return
    print(f"load average before the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after: "
          f"{after[0]:.2f} ({os.cpu_count()} CPUs); WebGL on "
          f"{next(iter(results.values()))['renderer']}")
    print(f"{'graph drawing':<24}{'nodes':>6}{'edges':>7}{'load':>8}{'frame p50':>11}"
          f"{'frame p95':>11}{'render p50':>12}{'floor':>8}{'rest':>6}{'filter':>9}{'hover':>8}")
    for name, r in results.items():
        print(f"{name:<24}{r['nodes']:>6}{r['edges']:>7}{r['load_ms']:>6.0f}ms"
              f"{r['frame_median_ms']:>9.1f}ms{r['frame_p95_ms']:>9.1f}ms"
              f"{r['render_median_ms']:>10.1f}ms{r['floor_ms']:>6.1f}ms"
              f"{'edges' if r['edges_after_rest'] else 'NONE':>6}"
              f"{statistics.median(r['filter_ms']):>7.1f}ms{r['hover_median_ms']:>6.0f}ms")
    print(f"GET /dashboard/graph on the vault (server side): "
          f"{results['vault lod']['server_graph_ms']:.0f} ms median of 3")


if __name__ == "__main__":
    main()
