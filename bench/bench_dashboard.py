"""Dashboard interaction figures in a real headless Chromium (issue 17).

    python bench/bench_dashboard.py                  # 883-page vault, then a 10,000-page graph
    python bench/bench_dashboard.py --frames 240 --json

What it does: `mindgraph serve`'s app (uvicorn, in-process thread) over a copy of the
Obsidian Help vault (883 pages, en/ja/zh) in a temp dir; Debian's chromium driven by
Playwright opens the dashboard and reports, per graph:

- load: navigation until the graph is drawn (GET /dashboard/graph, ForceAtlas2 layout, first
  WebGL frame); layout: the ForceAtlas2 part of it;
- frames: the camera panned and zoomed on every animation frame for --frames frames, the time
  between frames (median, p95) — what a user dragging or zooming sees — and each render's own
  time (sigma's JavaScript and the WebGL work, waited for by reading a pixel back);
- filter: typing into the list filter (list, facet counts and graph highlight redrawn at once);
- hover: mouse reaching a node until its hover card is on screen (median of 5, incl. the
  Playwright round trip).

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

from browser_support import (CHROMIUM_ARGS, MEASURE_JS, chromium_path,  # noqa: E402
                             hover_latency, live_server, synthetic_graph)


def _corpus() -> Path:
    for candidate in (os.environ.get("MINDGRAPH_CORPORA", ""), ROOT.parent / "shared" / "corpora",
                      "/work/shared/corpora"):
        if candidate and (Path(candidate) / "obsidian-help").is_dir():
            return Path(candidate) / "obsidian-help"
    sys.exit("the Obsidian Help corpus was not found: set MINDGRAPH_CORPORA")


def measure(browser, url: str, frames: int, graph: str | None = None) -> dict:
    """One graph's figures (see the module docstring)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    if graph is not None:
        page.route("**/dashboard/graph", lambda route: route.fulfill(
            status=200, content_type="application/json", body=graph))
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=300_000)
    load_ms = (time.perf_counter() - started) * 1e3
    figures = page.evaluate(MEASURE_JS, frames)
    hub = page.evaluate("() => [...window.mindgraph.state.nodes]"
                        ".sort((a, b) => b.links - a.links)[0].id")
    hovers = [hover_latency(page, hub) for _ in range(5)]
    page.close()
    return {**figures, "load_ms": load_ms, "hover_median_ms": statistics.median(hovers)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--pages", type=int, default=10_000, help="synthetic graph size")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    chromium = chromium_path()
    if chromium is None:
        sys.exit("no chromium: apt-get install chromium (or set MINDGRAPH_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph
    from mindgraph.serve.rest import create_app

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
            results["vault"] = {**measure(browser, url, args.frames),
                                "server_graph_ms": statistics.median(took)}
            results[f"synthetic_{args.pages}"] = measure(
                browser, url, args.frames, json.dumps(synthetic_graph(args.pages)))
            browser.close()
    if args.json:
        print(json.dumps({"load_average": load, **results}, indent=1))
        return
    print(f"load average before the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"({os.cpu_count()} CPUs); WebGL on SwiftShader (CPU)")
    print(f"{'graph':<16}{'nodes':>7}{'edges':>7}{'load':>9}{'layout':>9}{'frame p50':>11}"
          f"{'frame p95':>11}{'render p50':>12}{'filter p50':>12}{'hover':>8}")
    for name, r in results.items():
        print(f"{name:<16}{r['nodes']:>7}{r['edges']:>7}{r['load_ms']:>7.0f}ms"
              f"{r['layout_ms']:>7.0f}ms{r['frame_median_ms']:>9.1f}ms{r['frame_p95_ms']:>9.1f}ms"
              f"{r['render_median_ms']:>10.1f}ms"
              f"{statistics.median(r['filter_ms']):>10.1f}ms{r['hover_median_ms']:>6.0f}ms")
    if "server_graph_ms" in results["vault"]:
        print(f"GET /dashboard/graph on the vault (server side): "
              f"{results['vault']['server_graph_ms']:.0f} ms median of 3")


if __name__ == "__main__":
    main()
