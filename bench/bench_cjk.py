"""How CJK text becomes BM25 terms, measured side by side: bigrams / words / words + bigrams,
with and without the Japanese and Chinese stop words (function words).

    python bench/bench_cjk.py                          # keyword on the dev and held-out sets
    python bench/bench_cjk.py --methods keyword,hybrid # hybrid too (embeds once if needed)
    python bench/bench_cjk.py --json
    python bench/bench_cjk.py --what-is                # 「Xとは何ですか」/「什么是X」 per title

Each variant rebuilds the keyword index of a workspace whose wiki is the Obsidian Help vault
(bench-out/oh, as the Makefile's ``bench`` target makes it) and runs ``mindgraph bench`` on it,
in one process, so every variant sees the same pages, vectors and questions. Prints MRR@10
per language, the median latency and each set's run time (with the index build).

``--what-is`` asks 「Xとは何ですか」 for the title X of every Japanese page and 「什么是X」 for every
Chinese one (keyword search) and counts how often the top hit is page X, and how often it is
another page whose heading asks the same question (とは何 / 什么是).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402

from mindgraph.cli import cli  # noqa: E402
from mindgraph.retrieval import analyzer, keyword  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
WORKSPACE = ROOT / "bench-out" / "oh"
SETS = {"dev": CORPORA / "obsidian-help-queries.dev.jsonl",
        "held-out": ROOT / "bench" / "questions" / "obsidian-help-heldout.jsonl"}
# (terms, stop words out, Chinese words' dictionary sub-words too); the default comes last, so
# the index left in bench-out/oh is the one `mindgraph search` uses
VARIANTS = [("bigrams", False, False), ("words", False, False), ("words", True, False),
            ("words", False, True), ("words+bigrams", True, False), ("words", True, True)]


def workspace() -> Path:
    """bench-out/oh with its wiki pointing at the vault (made when missing)."""
    WORKSPACE.mkdir(parents=True, exist_ok=True)
    config = WORKSPACE / "mindgraph.yml"
    if not config.exists():
        config.write_text(f"paths:\n  wiki: {CORPORA / 'obsidian-help'}\n  state: state\n")
    return WORKSPACE


def run(methods: str, embed: bool) -> list[dict]:
    """One row per variant and question set: MRR@10 per method and language."""
    rows = []
    runner = CliRunner()
    for terms, stop, parts in VARIANTS:
        analyzer.CJK_TERMS, analyzer.CJK_STOP, analyzer.CJK_PARTS = terms, stop, parts
        keyword.index_fingerprint.cache_clear()
        for name, questions in SETS.items():
            started = time.perf_counter()
            args = ["bench", str(questions), "-C", str(workspace()), "--methods", methods,
                    "--json"] + ([] if embed else ["--no-embed"])
            result = runner.invoke(cli, args, catch_exceptions=False)
            elapsed = time.perf_counter() - started
            if result.exit_code:
                raise SystemExit(f"mindgraph {' '.join(args)}: {result.output}")
            report = json.loads(result.output[result.output.index("{"):])
            row = {"terms": terms, "stop": stop, "parts": parts, "set": name,
                   "seconds": round(elapsed, 1)}
            for method in report["methods"]:
                for lang, scores in method["by_lang"].items():
                    row[f"{method['method']}:{lang}"] = scores["mrr10"]
                row[f"{method['method']}:all"] = method["overall"]["mrr10"]
                row[f"{method['method']}:p50ms"] = method["overall"]["latency_median_ms"]
            rows.append(row)
            embed = False           # vectors are up to date after the first run
    return rows


def what_is() -> list[dict]:
    """Per variant and language: questions, top hit is the page, top hit asks the phrase."""
    from mindgraph.config import load_settings
    from mindgraph.core import Mindgraph
    from mindgraph.retrieval.keyword import KeywordIndex

    pages = Mindgraph(load_settings(workspace()))._pages()    # the parsed wiki, as search has
    rows = []
    for terms, stop, parts in VARIANTS:
        analyzer.CJK_TERMS, analyzer.CJK_STOP, analyzer.CJK_PARTS = terms, stop, parts
        index = KeywordIndex.build(pages.values())
        for lang, question, phrase in (("ja", "{}とは何ですか", "とは何"), ("zh", "什么是{}", "什么是")):
            row = {"terms": terms, "stop": stop, "parts": parts, "lang": lang, "questions": 0,
                   "top_is_the_page": 0, "top_asks_the_phrase": 0}
            for page in (p for p in pages.values() if p.path.startswith(lang + "/")):
                hits = index.search(question.format(page.title), 1)
                row["questions"] += 1
                if hits and hits[0].path == page.path:
                    row["top_is_the_page"] += 1
                elif hits and any(phrase in s.heading for s in pages[hits[0].path].sections):
                    row["top_asks_the_phrase"] += 1
            rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    """A text table of ``rows``."""
    columns = [k for k in rows[0] if ":" in k]
    lines = [f"{'terms':14} {'stop':5} {'parts':5} {'set':9} "
             + " ".join(f"{c:>12}" for c in columns) + "  seconds"]
    for row in rows:
        lines.append(f"{row['terms']:14} {str(row['stop']):5} {str(row['parts']):5} "
                     f"{row['set']:9} "
                     + " ".join(f"{row.get(c, 0):12.3f}" for c in columns)
                     + f"  {row['seconds']:7.1f}")
    return "\n".join(lines)


def main_cli() -> None:
    """Parse arguments and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--methods", default="keyword")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--what-is", action="store_true")
    args = parser.parse_args()
    shared_corpora.require(CORPORA, "obsidian-help", "obsidian-help-queries.dev.jsonl")
    if args.what_is:
        rows = what_is()
        if not args.json:
            for row in rows:
                print(" ".join(f"{k}={v}" for k, v in row.items()))
            return
    else:
        rows = run(args.methods, embed="vector" in args.methods or "hybrid" in args.methods)
    print(json.dumps(rows, indent=2) if args.json else table(rows))


if __name__ == "__main__":
    main_cli()
