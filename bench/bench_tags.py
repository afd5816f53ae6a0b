"""Shared-tag edges before and after the offline compiler stopped making tags up (issue 18).

    python bench/bench_tags.py [--no-retrieval] [--json]

It compiles the 883-page Obsidian Help vault offline into a temporary workspace ("after": the
salient terms are written as ``keywords:``, the tags are the note's own and its folder), then
builds the "before" wiki from it by moving each page's keywords back into its tags (what
``offline:v3`` wrote, byte for byte in every other respect). For each: the shared-tag edges,
the tags behind the most of them, how many come from a tag a person wrote in a raw note, and
the degree the tags give the pages (median and maximum). Then, unless ``--no-retrieval``,
``mindgraph bench`` on the dev questions (hybrid; keyword for reference) in both workspaces in
this process, the vectors embedded once and copied (the section text is the same).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.ingest.pipeline import run_ingest  # noqa: E402
from mindgraph.page.markdown import split_frontmatter  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
QUESTIONS = CORPORA / "obsidian-help-queries.dev.jsonl"


def before_wiki(after: Path, before: Path) -> None:
    """``before``: a copy of the workspace ``after`` whose pages carry their keywords as
    tags again (the offline compiler's tags up to v3)."""
    shutil.copytree(after, before, ignore=shutil.ignore_patterns("*.pickle", "*.lock"))
    for page in (before / "wiki").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        block, body, _ = split_frontmatter(text)
        meta = yaml.safe_load(block) or {}
        keywords = meta.pop("keywords", None)
        if not keywords:
            continue
        meta["tags"] = list(dict.fromkeys([*(meta.get("tags") or []), *keywords]))
        head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=10_000)
        page.write_text(f"---\n{head}---\n{body}", encoding="utf-8")


def edge_stats(root: Path, own_tags: dict[str, set[str]]) -> dict:
    """Shared-tag edges of the workspace at ``root``, by tag, and the degree they give."""
    mg = Mindgraph.open(root)
    kg = mg.graph()
    edges = [(u, v, d) for u, v, k, d in kg.edges() if k == "shared_tag"]
    by_tag = collections.Counter(t for _, _, d in edges for t in d["tags"])
    degree = collections.Counter()
    for u, v, _ in edges:
        degree[u] += 1
        degree[v] += 1
    people = sum(1 for u, v, d in edges
                 if any(t in own_tags.get(u, set()) and t in own_tags.get(v, set())
                        for t in d["tags"]))
    degrees = [degree.get(p, 0) for p in kg.nodes]
    mg.close()
    return {"edges": len(edges), "from_a_persons_tag": people,
            "top_tags": by_tag.most_common(8),
            "degree_median": statistics.median(degrees), "degree_max": max(degrees),
            "file_tag_edges": by_tag.get("file", 0), "amet_tag_edges": by_tag.get("amet", 0)}


def raw_tags(root: Path) -> dict[str, set[str]]:
    """page path → the tags its raw note's author wrote (frontmatter and inline)."""
    from mindgraph.page.parse import parse_page

    out = {}
    for note in (root / "raw").rglob("*.md"):
        rel = note.relative_to(root / "raw").as_posix()
        out[rel] = {t.lower() for t in parse_page(note.read_text(encoding="utf-8"), rel).tags}
    return out


def retrieval(root: Path) -> dict:
    """hybrid and keyword MRR@10 of the dev questions on the workspace at ``root``."""
    from click.testing import CliRunner

    from mindgraph.cli import cli

    result = CliRunner().invoke(cli, ["-C", str(root), "bench", str(QUESTIONS), "--methods",
                                      "keyword,hybrid", "--json"], catch_exceptions=False)
    data = json.loads(result.stdout)
    return {m["method"]: round(m["overall"]["mrr10"], 3) for m in data["methods"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--no-retrieval", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", type=Path, help="work in this (new) folder and keep it")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True)
    with contextlib.nullcontext(str(args.keep)) if args.keep else \
            tempfile.TemporaryDirectory(prefix="bench-tags-") as tmp:
        after, before = Path(tmp) / "after", Path(tmp) / "before"
        shutil.copytree(CORPORA / "obsidian-help", after / "raw")
        started = time.perf_counter()
        run_ingest(load_settings(after))
        if not args.no_retrieval:
            Mindgraph.open(after).embed()     # once: the before copy takes the same vectors
        before_wiki(after, before)
        own = raw_tags(after)
        report = {"pages": sum(1 for _ in (after / "wiki").rglob("*.md")),
                  "before": edge_stats(before, own), "after": edge_stats(after, own)}
        if not args.no_retrieval:
            report["before"]["mrr@10"] = retrieval(before)
            report["after"]["mrr@10"] = retrieval(after)
        report["seconds"] = round(time.perf_counter() - started, 1)
        report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(report, indent=1, ensure_ascii=False))
        return
    print(f"{report['pages']} pages; load average {report['load_average']}")
    print("| | shared-tag edges | from a person's tag | #file | #amet | degree median / max "
          "| hybrid MRR@10 | keyword MRR@10 |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("before", "after"):
        r = report[name]
        mrr = r.get("mrr@10", {})
        print(f"| {name} | {r['edges']:,} | {r['from_a_persons_tag']:,} | {r['file_tag_edges']}"
              f" | {r['amet_tag_edges']} | {r['degree_median']} / {r['degree_max']} "
              f"| {mrr.get('hybrid', '-')} | {mrr.get('keyword', '-')} |")
    for name in ("before", "after"):
        print(f"{name}: top tags " + ", ".join(f"#{t} {n}" for t, n in report[name]["top_tags"]))


if __name__ == "__main__":
    main()
