"""Where a warm `serve` process's memory goes: resident memory after each thing it loads.

    python bench/bench_memory.py WORKSPACE              # stages, RSS after each (MB)
    python bench/bench_memory.py WORKSPACE --sizes      # + the page cache's parts, by kind
    python bench/bench_memory.py WORKSPACE --json

One fresh process loads, in the order `serve` warms up, the page cache (``sync``), the keyword
index, the graph, the vector store and the hybrid retriever, then answers one keyword search,
one hybrid search and 20 more; VmRSS (and its part that is pages of mapped files: the page
texts, the vectors of a table searched through its graph) is read after each stage, so each stage's figure is the memory it added (the
state files are read warm: run a search in the workspace first). ``--sizes`` adds what the
page cache holds, by kind: the text of page bodies and sections, the other strings, and the
objects around them (``sys.getsizeof`` of every object reachable from the cache, each
counted once), the way to see which part pays to make compact.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


HYBRID_WORDS = ("syncing", "moving", "tagging", "linking", "exporting", "importing", "sharing",
                "renaming", "archiving", "searching", "publishing", "merging", "splitting",
                "encrypting", "backing up", "restoring", "printing", "sorting", "filtering",
                "plugins for")


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


def file_mb() -> float:
    """The part of this process's resident memory that is pages of files it maps (RssFile:
    the page cache's, shared, given back under pressure), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssFile"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    """This process's peak resident memory (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    return 0.0


def cache_sizes(cache) -> dict[str, float]:
    """MB held by the page cache, by kind: every object reachable from its entries once,
    counted under the first kind that reaches it (texts, then links, frontmatter, the rest)."""
    from mindgraph.page.store import StoredPage

    seen: set[int] = set()
    texts = [p.__dict__.get("body", "") for p in cache.pages.values()]
    texts += [s.text for p in cache.pages.values() if "sections" in p.__dict__
              or not isinstance(p, StoredPage) for s in p.sections]
    return _sizes(seen, {
        "body and section text in memory": texts,
        "links": [link for p in cache.pages.values() for link in p.links],
        "frontmatter": [p.frontmatter for p in cache.pages.values()],
        "tags, aliases, titles, paths": [(p.tags, p.aliases, p.title, p.path)
                                         for p in cache.pages.values()],
        "pages, sections, entries (the rest)": [cache._entries, cache._pages]})


def keyword_sizes(index) -> dict[str, float]:
    """MB held by the keyword index, by part."""
    seen: set[int] = set()
    arrays = [v for bm25 in (index.sections, index.pages) for v in vars(bm25).values()]
    return _sizes(seen, {
        "vocabulary": [index.vocab.ids],
        "section keys (path, id) and rows": [index.sections._keys, index.sections._row_of],
        "page keys, hashes, ids": [index.pages._keys, index.pages._row_of, index.hashes,
                                   index._section_ids, index._pid, index._paths],
        "arrays": arrays})


def _sizes(seen: set[int], kinds: dict[str, list]) -> dict[str, float]:
    """``sys.getsizeof`` of every object reachable from each kind's roots, MB, each object
    counted once (under the first kind that reaches it)."""
    import numpy as np

    out = {}
    for kind, roots in kinds.items():
        total = 0
        stack = list(roots)
        while stack:
            obj = stack.pop()
            if id(obj) in seen or type(obj).__name__ in ("PageTexts", "mmap", "module", "type"):
                continue
            seen.add(id(obj))
            total += obj.nbytes if isinstance(obj, np.ndarray) else sys.getsizeof(obj)
            if not isinstance(obj, (str, bytes, np.ndarray)):
                stack.extend(gc.get_referents(obj))
        out[kind] = round(total / 2**20, 1)
    return out


def measure(workspace: Path, with_sizes: bool) -> dict:
    """RSS after each stage of a warm start in this process."""
    from mindgraph.core import Mindgraph

    stages: list[dict] = []
    before = rss_mb()

    def stage(name: str, action) -> None:
        nonlocal before
        started = time.perf_counter()
        action()
        now = rss_mb()
        stages.append({"stage": name, "s": round(time.perf_counter() - started, 2),
                       "added_mb": round(now - before), "rss_mb": round(now),
                       "file_mb": round(file_mb())})
        before = now
        print(f"  {name:22} +{stages[-1]['added_mb']:6} MB → {now:7.0f} MB"
              f" (of it file pages {stages[-1]['file_mb']} MB)  ({stages[-1]['s']} s)",
              file=sys.stderr, flush=True)

    stages.append({"stage": "imports", "s": 0, "added_mb": round(before), "rss_mb": round(before)})
    mg = Mindgraph.open(workspace)
    try:
        stage("page cache", mg.sync)
        stage("keyword index", mg.keyword_index)
        stage("graph", mg.graph)
        stage("vector store", lambda: mg.vector_store().count(
            mg.embedding_provider().model_version))
        stage("hybrid retriever", mg.hybrid_retriever)
        stage("keyword search", lambda: mg.search("how do I sync my vault", 10))
        stage("hybrid search", lambda: mg.smart_search("move a note to another folder", 10))
        stage("20 hybrid searches", lambda: [mg.smart_search(f"{word} notes and folders", 10)
                                             for word in HYBRID_WORDS])
        out: dict = {"workspace": str(workspace), "pages": len(mg._pages()), "stages": stages,
                     "rss_mb": round(rss_mb()), "peak_rss_mb": round(peak_mb()),
                     "load": round(os.getloadavg()[0], 1)}
        if with_sizes:
            out["page_cache_mb"] = cache_sizes(mg._cache)
            out["keyword_index_mb"] = keyword_sizes(mg.keyword_index())
    finally:
        mg.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--sizes", action="store_true", help="the page cache's parts by kind")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.workspace.resolve(), args.sizes)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['pages']} pages, RSS {result['rss_mb']} MB, peak {result['peak_rss_mb']} MB"
          f" (load {result['load']})")
    for row in result["stages"]:
        print(f"  {row['stage']:22} +{row['added_mb']:6} MB  {row['s']:7.2f} s"
              f"  (file pages {row.get('file_mb', 0)} MB)")
    for part in ("page_cache_mb", "keyword_index_mb"):
        for kind, mb in result.get(part, {}).items():
            print(f"  {part[:-3].replace('_', ' ')}: {kind:36} {mb:8.1f} MB")


if __name__ == "__main__":
    main()
