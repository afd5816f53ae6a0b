"""Graph build, communities, `check` and `stats` at 10,000 / 30,000 / 100,000 notes (issue 20).

    python bench/bench_graph_scale.py                         # 10k, 30k, 100k
    python bench/bench_graph_scale.py --sizes 10000 --compare # + NetworkX and python-louvain
    python bench/bench_graph_scale.py --wiki DIR              # an existing (ingested) wiki

Each size is a vault written by bench/gen_corpus.py (seed 1) straight into a workspace's wiki/
(the graph, check and stats read the wiki; compiling it first would take an ingest of the same
notes, bench/bench_scale.py's job). Steps, each with wall and CPU (user+sys) seconds:

- ``pages``: parse every page into the page cache (context: ingest's work, not the graph's);
- ``build``: KnowledgeGraph.build of all pages (links resolved, the tag index), with the
  resident memory the graph adds (``graph_mb``: RSS after the build minus before) and the
  process's peak RSS; ``graph save``/``graph load``: graph.pickle written and read back (its
  size in MB);
- ``communities``: Leiden (igraph, the default), with modularity and the number of
  communities; with --compare also NetworkX's Louvain and python-louvain on the same graph;
- ``graph communities``, ``check``, ``stats``: fresh `mindgraph` processes on the workspace
  (the page cache warm, the graph not yet saved), as a person waits for them; then
  ``graph communities (saved)``: the same from the graph.pickle the first one wrote.

The machine's load average is printed beside each size; quote CPU where the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gen_corpus  # noqa: E402

from mindgraph.config import GraphSettings  # noqa: E402
from mindgraph.graph.build import KnowledgeGraph  # noqa: E402
from mindgraph.graph.communities import (detect_communities, modularity, partition,  # noqa: E402
                                         weighted_pairs)
from mindgraph.page.cache import open_pages  # noqa: E402

COMMANDS = (("graph communities", ["graph", "communities", "--min-size", "5"]),
            ("check", ["check", "--limit", "0"]),
            ("stats", ["stats"]),
            ("graph communities (saved)", ["graph", "communities", "--min-size", "5"]))


def _rss_mb() -> float:
    """Resident memory of this process now (MB)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _timed(row: dict, step: str, fn, *args):
    wall, cpu = time.perf_counter(), _cpu()
    result = fn(*args)
    row[step] = {"wall": round(time.perf_counter() - wall, 2), "cpu": round(_cpu() - cpu, 2)}
    print(f"  {row['notes']:>7} {step:28} {row[step]['wall']:8.2f} s wall "
          f"{row[step]['cpu']:8.2f} s CPU", file=sys.stderr, flush=True)
    return result


def _command(row: dict, step: str, workspace: Path, args: list[str]) -> None:
    wall, cpu = time.perf_counter(), _cpu(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "mindgraph", *args, "-C", str(workspace)],
                          capture_output=True, text=True, cwd=workspace)
    if done.returncode not in (0, 1):       # 1: check found something
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    row[step] = {"wall": round(time.perf_counter() - wall, 2),
                 "cpu": round(_cpu(resource.RUSAGE_CHILDREN) - cpu, 2)}
    print(f"  {row['notes']:>7} {step:28} {row[step]['wall']:8.2f} s wall "
          f"{row[step]['cpu']:8.2f} s CPU", file=sys.stderr, flush=True)


def measure(workspace: Path, notes: int, compare: bool) -> dict:
    """Every step on one workspace whose wiki/ holds the notes."""
    row: dict = {"notes": notes, "load": round(os.getloadavg()[0], 1)}
    (workspace / ".mindgraph").mkdir(exist_ok=True)
    cache, _ = _timed(row, "pages", open_pages, workspace / "wiki", workspace / ".mindgraph")
    row["notes"] = len(cache.pages)
    settings = GraphSettings()
    before = _rss_mb()
    kg = _timed(row, "build", KnowledgeGraph.build, cache.pages, settings)
    row["graph_mb"] = round(_rss_mb() - before, 1)
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    row["edges"] = kg.number_of_edges()
    saved = workspace / ".mindgraph" / "bench-graph.pickle"
    _timed(row, "graph save", kg.save, saved)
    row["file_mb"] = round(saved.stat().st_size / 2**20, 1)
    _timed(row, "graph load", KnowledgeGraph.load, saved, settings)
    saved.unlink()
    cache.close()
    found = _timed(row, "communities (leiden)", detect_communities, kg)
    data = weighted_pairs(kg)
    label = {m: c.id for c in found for m in c.members}
    row["quality"] = {"leiden": {"communities": len(found), "modularity": round(
        modularity(data, [label[n] for n in data.nodes]), 4)}}
    if compare:
        for method in ("networkx", "python-louvain"):
            labels = _timed(row, f"communities ({method})", partition, data, method, 1.0,
                            settings.seed)
            row["quality"][method] = {"communities": len(set(labels)),
                                      "modularity": round(modularity(data, labels), 4)}
    for step, args in COMMANDS:
        _command(row, step, workspace, args)
    return row


def _workspace(parent: Path, notes: int, source: gen_corpus.Source) -> Path:
    base = parent / f"w{notes}"
    gen_corpus.generate(base / "wiki", notes, 1, source)
    (base / "raw").mkdir()
    gen_corpus.write_workspace_config(base, notes)
    return base


def main() -> None:
    """Run the sizes and print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--wiki", type=Path, help="measure this workspace instead (its wiki/)")
    parser.add_argument("--compare", action="store_true",
                        help="also time NetworkX's Louvain and python-louvain (slow)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    if args.wiki:
        rows.append(measure(args.wiki, 0, args.compare))
    else:
        source = gen_corpus.load_source()
        with tempfile.TemporaryDirectory(prefix="mindgraph-graph-") as tmp:
            for size in args.sizes:
                workspace = _workspace(Path(tmp), size, source)
                rows.append(measure(workspace, size, args.compare))
                shutil.rmtree(workspace, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    steps = [s for s in rows[0] if isinstance(rows[0][s], dict) and "wall" in rows[0][s]]
    print("| step | " + " | ".join(f"{r['notes']:,} notes (load {r['load']})" for r in rows)
          + " |")
    print("|" + "---|" * (len(rows) + 1))
    for step in steps:
        print(f"| {step} | " + " | ".join(f"{r[step]['wall']:.2f} s ({r[step]['cpu']:.2f} s CPU)"
                                          for r in rows) + " |")
    for method in rows[0]["quality"]:
        print(f"| modularity, {method} | " + " | ".join(
            f"{r['quality'][method]['modularity']} ({r['quality'][method]['communities']} "
            f"communities)" for r in rows) + " |")
    for key, label in (("edges", "edges"), ("graph_mb", "graph resident MB"),
                       ("peak_rss_mb", "peak RSS MB (pages + graph)"),
                       ("file_mb", "graph.pickle MB")):
        print(f"| {label} | " + " | ".join(f"{r[key]:,}" for r in rows) + " |")


if __name__ == "__main__":
    main()
