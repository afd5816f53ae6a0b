"""What one page view costs the dashboard's slow lane: dense markup against real pages.

    python bench/bench_render_guard.py                  # all cases, medians of 3 views
    python bench/bench_render_guard.py --runs 5 --unguarded 3
    python bench/bench_render_guard.py --json

What it does: copies the Obsidian Help vault (en, ja, zh and Release notes: 883 pages) into
the wiki of a temporary workspace, adds one page per pathological body (just under
RENDER_MAX_CHARS of one markup repeated: ``[``, ``[[``, ``![[``, ``[^``, ``*a``, ``<``,
``&``, tables, task lists, callouts, fenced code...), and fetches each page through GET
/dashboard/page (the serve app in-process, starlette's TestClient), the route the dashboard
draws a page from. For each pathological page it prints the median wall time (and CPU time
of the process: steadier under load) of ``--runs`` views with the render guard (dashboard/render_cost.py), the estimate the guard reads, how
much of the body was drawn as markdown, and — for the ``--unguarded`` costliest cases — the
time of one view with the guard off (its budgets set to infinity), side by side. For the
vault it prints the median, 99th percentile and slowest view of all 883 pages (one view
each after a warm-up) and how many had any part shown as plain text (the guard must cut
none of them). The figures depend on the machine's load: quote them with the load average
printed at the top.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CHARS = 99_990          # just under RENDER_MAX_CHARS (100,000)
# name → (one unit, repeated to CHARS; a header put before it)
CASES: dict[str, tuple[str, str]] = {
    "[": ("[", ""), "[[": ("[[", ""), "![[": ("![[", ""), "[^": ("[^", ""),
    "![": ("![", ""), "[x](": ("[x](", ""), "a[b": ("a[b ", ""), "[a]": ("[a] ", ""),
    "[[Home]] (resolved)": ("[[Home]] ", ""), "*a": ("*a", ""), "==a": ("==a", ""),
    "~~a": ("~~a", ""), "&": ("&", ""), "<": ("<", ""), "`a": ("`a", ""),
    "\\": ("\\", ""), "$a": ("$a", ""), "> nesting": ("> " * 40 + "a\n", ""),
    "- list": ("- a\n", ""), "1. list": ("1. a\n", ""), "- [ ] tasks": ("- [ ] a\n", ""),
    "nested list": ("".join("  " * i + "- a\n" for i in range(12)), ""),
    "| table rows": ("| [x | *y |\n", "| a | b |\n|---|---|\n"),
    "|b| rows": ("|b|\n", "|a|\n|-|\n"), "> [!note] callouts": ("> [!note]\n\n", ""),
    "^id blocks": ("a ^b\n\n", ""), "# headings": ("# a\n", ""),
    "```c code": ("x = <a href='b'>[c](d) # e \"f\" {g}; $h &i\n", "```c\n"),
    "p\\r\\r (old Mac line ends)": ("p\r\r", ""), "1. a\\r list": ("1. a\r", ""),
    "prose": ("Prose words of a long note, with a [[Home]] link. ", ""),
}


def workspace(corpus: Path) -> tuple[Path, dict[str, str]]:
    """A temporary workspace: the vault in its wiki, plus a page per case (name → path)."""
    base = Path(tempfile.mkdtemp(prefix="render-guard-"))
    for folder in ("en", "ja", "zh", "Release notes"):
        shutil.copytree(corpus / folder, base / "wiki" / folder)
    (base / "raw").mkdir()
    (base / "wiki" / "guard").mkdir()
    pages = {}
    for i, (name, (unit, head)) in enumerate(CASES.items()):
        body = head + (unit * (CHARS // len(unit) + 1))[:CHARS - len(head)]
        path = f"guard/case-{i:02d}.md"
        (base / "wiki" / path).write_text(f"---\ntitle: case {i}\n---\n{body}",
                                          encoding="utf-8")
        pages[name] = path
    return base, pages


def view(client, path: str) -> tuple[float, str, float]:
    """(seconds, html, CPU seconds of this process) of one GET /dashboard/page."""
    started, cpu = time.perf_counter(), time.process_time()
    answer = client.get("/dashboard/page", params={"page": path})
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert answer.status_code == 200, answer.text[:300]
    return elapsed, answer.json()["html"], cpu


def drawn_share(html: str, chars: int) -> float:
    """The share of the body drawn as markdown: all but what follows the guard's note."""
    cut = html.find('<p class="render-cut">')
    if cut < 0:
        return 1.0
    rest = html[cut:]
    start = rest.find('<pre class="unrendered">')
    text = rest[start + len('<pre class="unrendered">'):rest.find("</pre>", start)]
    import html as html_lib

    return max(0.0, 1 - len(html_lib.unescape(text)) / chars)


def main() -> None:
    corpora = shared_corpora.corpora()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--runs", type=int, default=3, help="views per pathological page")
    parser.add_argument("--unguarded", type=int, default=6,
                        help="how many of the costliest cases to view once with the guard off")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from starlette.testclient import TestClient

    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph
    from mindgraph.dashboard import render
    from mindgraph.dashboard.render_cost import as_markdown_it_reads, estimate
    from mindgraph.serve.rest import create_app

    base, pages = workspace(shared_corpora.require(corpora) / "obsidian-help")
    try:
        mg = Mindgraph(settings_from_dict({}, base_dir=base))
        client = TestClient(create_app(mg, None, None), base_url="http://127.0.0.1:8765")
        load = os.getloadavg()[0]
        vault = [p for p in mg.vault().pages if not p.startswith("guard/")]
        view(client, vault[0])                                       # warm-up
        cases = []
        for name, path in pages.items():
            body = mg.page(path).indexed_body
            times, cpus, html = [], [], ""
            for _ in range(args.runs):
                took, html, cpu = view(client, path)
                times.append(took)
                cpus.append(cpu)
            estimated = estimate(as_markdown_it_reads(body))    # as the guard reads it
            cases.append({"case": name, "estimate_s": round(estimated / 1e6, 2),
                          "median_s": round(statistics.median(times), 3),
                          "cpu_s": round(statistics.median(cpus), 3),
                          "markdown_share": round(drawn_share(html, len(body)), 3)})
        for case in sorted(cases, key=lambda c: -c["estimate_s"])[:args.unguarded]:
            saved = render.RENDER_BUDGET_US, render.HIGHLIGHT_BUDGET_CHARS
            render.RENDER_BUDGET_US = render.HIGHLIGHT_BUDGET_CHARS = math.inf
            try:
                case["unguarded_s"] = round(view(client, pages[case["case"]])[0], 3)
            finally:
                render.RENDER_BUDGET_US, render.HIGHLIGHT_BUDGET_CHARS = saved
        real = []
        cut = []
        for path in vault:
            took, html, _ = view(client, path)
            real.append(took)
            if 'class="render-cut"' in html:
                cut.append(path)
        real.sort()
        result = {"load_average": round(load, 2), "cases": cases,
                  "vault": {"pages": len(real), "median_s": round(statistics.median(real), 4),
                            "p99_s": round(real[int(len(real) * 0.99)], 4),
                            "slowest_s": round(real[-1], 4), "cut": cut}}
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    print(f"load average at start: {result['load_average']} "
          f"(views of {CHARS:,}-character bodies; medians of {args.runs})")
    print(f"{'case':22} {'estimate':>9} {'guarded':>9} {'(CPU)':>9} {'unguarded':>10} "
          f"{'markdown':>9}")
    for c in sorted(cases, key=lambda c: -c["median_s"]):
        off = f"{c['unguarded_s']:.3f} s" if "unguarded_s" in c else ""
        print(f"{c['case']:22} {c['estimate_s']:>7.2f} s {c['median_s']:>7.3f} s "
              f"{c['cpu_s']:>7.3f} s {off:>10} {c['markdown_share']:>8.0%}")
    v = result["vault"]
    print(f"vault: {v['pages']} pages, median {v['median_s'] * 1000:.1f} ms, p99 "
          f"{v['p99_s'] * 1000:.1f} ms, slowest {v['slowest_s'] * 1000:.1f} ms; "
          f"{len(v['cut'])} shown in part as text {v['cut'][:5]}")


if __name__ == "__main__":
    main()
