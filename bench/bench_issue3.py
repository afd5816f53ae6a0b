"""Benchmark for issue 3: keyword quality (SciFact, dev questions) and graph/keyword speed at scale.

    python bench/bench_issue3.py                 # everything, human-readable
    python bench/bench_issue3.py --json          # the same figures as one JSON document
    python bench/bench_issue3.py --only quality  # or: scifact, dev, scale
    python bench/bench_issue3.py --pages 10000   # size of the generated vault for the scale part

Targets: SciFact keyword nDCG@10 >= 0.67; dev questions keyword MRR@10 >= 0.65 (ja and zh as
good as en); at 10,000 pages graph build < 2 s, single-page update < 50 ms, keyword query
< 5 ms median in-process.

The 10,000-page vault is generated from the real Obsidian Help vault: copies of every page under
copyNN/ folders, with about a third of each copy's resolvable wikilinks rewritten to point at the
same page in the next copy (full path), and a folder tag (#topic/<folder>) appended to each page,
so links cross copies and tags span them.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.config import GraphSettings  # noqa: E402
from mindgraph.graph.build import KnowledgeGraph  # noqa: E402
from mindgraph.graph.communities import detect_communities  # noqa: E402
from mindgraph.page.cache import PageCache  # noqa: E402
from mindgraph.page.parse import parse_page  # noqa: E402
from mindgraph.page.vault import load_vault  # noqa: E402
from mindgraph.retrieval.datasets import load_beir, load_questions  # noqa: E402
from mindgraph.retrieval.keyword import KeywordIndex  # noqa: E402
from mindgraph.retrieval.metrics import hit_at, mean, mrr_at, ndcg_at, recall_at  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
VAULT = CORPORA / "obsidian-help"
DEV = CORPORA / "obsidian-help-queries.dev.jsonl"
SCIFACT = CORPORA / "scifact"
TARGETS = {"scifact_ndcg10": 0.67, "dev_mrr10": 0.65, "graph_build_s": 2.0,
           "single_update_ms": 50.0, "keyword_query_ms": 5.0}


def bench_scifact() -> dict[str, Any]:
    """Keyword-only retrieval over SciFact (each abstract is a page: '# title' + text)."""
    data = load_beir(SCIFACT)
    started = time.perf_counter()
    pages = [parse_page(f"# {d.title}\n\n{d.text}", f"{d.id}.md") for d in data.documents]
    index = KeywordIndex.build(pages)
    build_s = time.perf_counter() - started
    ndcg, recall, mrr = [], [], []
    for qid, query in data.queries.items():
        ranked = [h.path[:-3] for h in index.search(query, 100)]
        relevant = data.qrels[qid]
        ndcg.append(ndcg_at(ranked, relevant, 10))
        recall.append(recall_at(ranked, [d for d, g in relevant.items() if g > 0], 100))
        mrr.append(mrr_at(ranked, [d for d, g in relevant.items() if g > 0], 10))
    return {"documents": len(pages), "queries": len(data.queries), "ndcg@10": mean(ndcg),
            "recall@100": mean(recall), "mrr@10": mean(mrr), "index_build_s": build_s}


def bench_dev() -> dict[str, Any]:
    """Keyword-only page ranking of the dev questions over the whole Obsidian Help vault."""
    vault = load_vault(VAULT)
    index = KeywordIndex.build(vault.pages.values())
    questions = load_questions(DEV)
    by_lang: dict[str, list[tuple[float, float, float]]] = {}
    misses = []
    for q in questions:
        ranked = [h.path for h in index.search(q.query, 10)]
        row = (hit_at(ranked, q.relevant, 1), recall_at(ranked, q.relevant, 5),
               mrr_at(ranked, q.relevant, 10))
        by_lang.setdefault(q.lang or "?", []).append(row)
        by_lang.setdefault("all", []).append(row)
        if row[2] == 0:
            misses.append(q.id)

    def summary(rows: list[tuple[float, float, float]]) -> dict[str, float]:
        return {"n": len(rows), "hit@1": mean(r[0] for r in rows),
                "recall@5": mean(r[1] for r in rows), "mrr@10": mean(r[2] for r in rows)}

    return {"pages": len(vault.pages), "by_lang": {k: summary(v) for k, v in by_lang.items()},
            "not_in_top10": misses}


# -- scale -------------------------------------------------------------------------------
_LINK = re.compile(r"(!?\[\[)([^\]|#^\n]+)")


def generate_vault(target: Path, n_pages: int, seed: int = 7) -> int:
    """Write about ``n_pages`` pages made from the real vault into ``target``; returns count."""
    vault = load_vault(VAULT)
    rng = random.Random(seed)
    copies = max(1, math.ceil(n_pages / len(vault.pages)))
    written = 0
    for copy in range(copies):
        prefix, nxt = f"copy{copy:02d}/", f"copy{(copy + 1) % copies:02d}/"
        for path, page in sorted(vault.pages.items()):
            if written >= n_pages:
                return written
            text = (VAULT / path).read_text(encoding="utf-8")

            def rewrite(match: re.Match[str], path: str = path) -> str:
                res = vault.resolver.resolve_target(match.group(2), path)
                if res.status == "resolved" and res.target and rng.random() < 0.33:
                    return match.group(1) + nxt + res.target[:-3]
                return match.group(0)

            text = _LINK.sub(rewrite, text)
            folder = path.rsplit("/", 1)[0] if "/" in path else "root"
            tag = re.sub(r"[^\w/-]+", "-", folder).strip("-").lower()
            text += f"\n\n#topic/{tag}\n"
            out = target / (prefix + path)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
            written += 1
    return written


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return times, result


def bench_scale(n_pages: int) -> dict[str, Any]:
    """Graph and keyword speed on a generated vault of ``n_pages`` pages."""
    out: dict[str, Any] = {"pages_requested": n_pages}
    tmp = Path(tempfile.mkdtemp(prefix="mindgraph-bench-"))
    try:
        wiki, state = tmp / "wiki", tmp / "state"
        out["pages"] = generate_vault(wiki, n_pages)
        started = time.perf_counter()
        cache = PageCache.open(wiki, state / "pages.pickle")
        cache.refresh()
        out["parse_all_s"] = time.perf_counter() - started
        pages = cache.pages
        out["page_cache_cold_load_s"] = _timed(
            lambda: PageCache.open(wiki, state / "pages.pickle"), 1)[0][0]
        out["page_cache_refresh_unchanged_s"] = _timed(lambda: cache.refresh(), 3)[0][-1]

        settings = GraphSettings()
        times, graph = _timed(lambda: KnowledgeGraph.build(pages, settings), 3)
        out["graph_build_s"] = min(times)
        out["graph_nodes"] = len(graph)
        out["graph_edges"] = graph.number_of_edges()
        out["graph_edges_inferred"] = sum(1 for *_, d in graph.edges()
                                          if d["kind"] == "inferred")
        graph_file = state / "graph.pickle"
        out["graph_save_s"] = _timed(lambda: graph.save(graph_file), 1)[0][0]
        out["graph_load_s"] = _timed(lambda: KnowledgeGraph.load(graph_file, settings), 1)[0][0]

        for method in ("networkx", "python-louvain"):
            graph._communities = None
            times, found = _timed(lambda: detect_communities(graph, method), 1)  # type: ignore
            graph._communities = None
            again = detect_communities(graph, method)  # type: ignore[arg-type]
            out[f"communities_{method}_s"] = times[0]
            out[f"communities_{method}_count"] = len(found)
            out[f"communities_{method}_deterministic"] = [c.members for c in found] == [
                c.members for c in again]

        started = time.perf_counter()
        index = KeywordIndex.build(pages.values())
        out["keyword_build_s"] = time.perf_counter() - started
        out["keyword_sections"] = len(index.sections)

        out.update(_bench_updates(wiki, cache, graph, index))

        queries = [q.query for q in load_questions(DEV)]
        for q in queries:  # warm up (stem cache, compaction)
            index.search(q, 10)
        query_times = []
        for _ in range(5):
            for q in queries:
                started = time.perf_counter()
                index.search(q, 10)
                query_times.append(time.perf_counter() - started)
        out["keyword_query_ms_median"] = statistics.median(query_times) * 1000
        out["keyword_query_ms_p95"] = sorted(query_times)[int(len(query_times) * 0.95)] * 1000
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _bench_updates(wiki: Path, cache: PageCache, graph: KnowledgeGraph,
                   index: KeywordIndex) -> dict[str, Any]:
    """Edit single pages on disk (text, links and tags change) and time the update."""
    rng = random.Random(11)
    paths = sorted(cache.pages)
    targets = rng.sample(paths, 40)
    parse_ms, graph_ms, keyword_ms, total_ms = [], [], [], []
    for i, rel in enumerate(targets):
        file = wiki / rel
        other = rng.choice(paths)[:-3]
        file.write_text(file.read_text(encoding="utf-8")
                        + f"\n\nEdited {i}: see [[{other}]] and [[Missing page {i}]] #edit{i % 3}\n",
                        encoding="utf-8")
        started = time.perf_counter()
        changes = cache.refresh(only=[rel], save=False)
        t1 = time.perf_counter()
        graph.apply(cache.pages, changes.added, changes.changed, changes.removed)
        t2 = time.perf_counter()
        index.apply(cache.pages, changes.added, changes.changed, changes.removed)
        index.search("edited page", 5)  # the next query pays for any deferred work
        t3 = time.perf_counter()
        assert changes.changed == (rel,), changes
        parse_ms.append((t1 - started) * 1000)
        graph_ms.append((t2 - t1) * 1000)
        keyword_ms.append((t3 - t2) * 1000)
        total_ms.append((t3 - started) * 1000)
    rebuilt = KnowledgeGraph.build(cache.pages, graph.settings)
    return {"single_update_ms_median": statistics.median(total_ms),
            "single_update_ms_max": max(total_ms),
            "single_update_parse_ms_median": statistics.median(parse_ms),
            "single_update_graph_ms_median": statistics.median(graph_ms),
            "single_update_keyword_ms_median": statistics.median(keyword_ms),
            "incremental_graph_equals_rebuild": rebuilt.signature() == graph.signature()}


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--only", choices=["quality", "scifact", "dev", "scale"])
    parser.add_argument("--pages", type=int, default=10_000)
    args = parser.parse_args()
    report: dict[str, Any] = {"targets": TARGETS}
    if args.only in (None, "quality", "scifact"):
        report["scifact"] = bench_scifact()
    if args.only in (None, "quality", "dev"):
        report["dev"] = bench_dev()
    if args.only in (None, "scale"):
        report["scale"] = bench_scale(args.pages)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print(report)
    return 0


def _print(report: dict[str, Any]) -> None:
    if "scifact" in report:
        s = report["scifact"]
        print(f"SciFact keyword ({s['documents']} docs, {s['queries']} queries): "
              f"nDCG@10 {s['ndcg@10']:.4f} (target >= 0.67), recall@100 {s['recall@100']:.4f}, "
              f"MRR@10 {s['mrr@10']:.4f}")
    if "dev" in report:
        d = report["dev"]
        print(f"Dev questions, keyword page ranking over {d['pages']} pages:")
        for lang, row in d["by_lang"].items():
            print(f"  {lang:4} n={row['n']:2}  hit@1 {row['hit@1']:.3f}  recall@5 "
                  f"{row['recall@5']:.3f}  MRR@10 {row['mrr@10']:.3f}")
        print(f"  (target: all MRR@10 >= 0.65)  not in top 10: {', '.join(d['not_in_top10'])}")
    if "scale" in report:
        s = report["scale"]
        print(f"Scale ({s['pages']} generated pages):")
        for key, value in s.items():
            if key != "pages":
                print(f"  {key:40} {value:.4f}" if isinstance(value, float)
                      else f"  {key:40} {value}")


if __name__ == "__main__":
    sys.exit(main())
