"""Fusion options side by side: dev and held-out questions over the vault, and SciFact.

    python bench/bench_fusion.py -C /tmp/oh                       # every option below
    python bench/bench_fusion.py -C /tmp/oh --options max,calibrated --no-scifact
    python bench/bench_fusion.py -C /tmp/oh --set calibrated=normalization:calibrated,vector_weight:0.5
    python bench/bench_fusion.py -C /tmp/oh --options max --keyword bm25=k1:0.9,b:0.4

``-C`` is a workspace whose wiki is the Obsidian Help vault (as for `mindgraph bench`); its
embedding settings choose the model (run `mindgraph embed` there first, or let `mindgraph
bench` do it). SciFact is embedded into the workspace's state folder by `mindgraph bench
<corpora>/scifact` the first time. Every option is the hybrid method of `mindgraph bench`
with the option's ``retrieval`` settings over the same indexes, so differences come from
fusion alone; ``--keyword`` names a variant of the keyword index instead (BM25 k1 and b, field
weights, the page/section mix: ``KeywordParams``), built over the same pages and fused with
the default settings. Prints one line per option: dev hit@1 / R@5 / MRR@10 and en / ja / zh MRR,
the same for the held-out set, and SciFact nDCG@10.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.bench.corpora import beir_retriever, wiki_retriever  # noqa: E402
from mindgraph.bench.runner import run_methods  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval.datasets import Question, load_beir, load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.keyword import KeywordIndex, KeywordParams  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()

HELD_OUT = ROOT / "bench" / "questions" / "obsidian-help-heldout.jsonl"
OPTIONS: dict[str, dict[str, Any]] = {
    "max": {"fusion": "weighted", "normalization": "max"},
    "calibrated": {"fusion": "weighted", "normalization": "calibrated"},
    "minmax": {"fusion": "weighted", "normalization": "minmax"},
    "meanmax": {"fusion": "weighted", "normalization": "meanmax"},
    "zscore": {"fusion": "weighted", "normalization": "zscore"},
    "rrf": {"fusion": "rrf"},
}


def variant(base: HybridRetriever, changes: dict[str, Any],
            keyword: dict[str, Any] | None = None) -> HybridRetriever:
    """The same indexes with other retrieval settings, or with a keyword index built over the
    same pages with other ``KeywordParams`` (``keyword``)."""
    index = base.keyword if not keyword else KeywordIndex.build(
        base.pages.values(), replace(KeywordParams(), **keyword))
    return HybridRetriever(base.pages, index, base.graph, base.vector,
                           replace(base.settings, **changes), expander=base.expander,
                           vector_error=base.vector_error,
                           calibration_file=base._calibration_file)


def figures(retriever: HybridRetriever, questions: list[Question],
            graded: dict | None = None) -> dict[str, float]:
    report = run_methods(retriever, questions, ["hybrid"], graded)[0]
    out = {"hit1": report.overall.hit1, "recall5": report.overall.recall5,
           "mrr10": report.overall.mrr10, "ndcg10": report.overall.ndcg10}
    out.update({f"mrr10_{lang}": s.mrr10 for lang, s in report.by_lang.items()})
    return out


def parse_set(items: list[str]) -> dict[str, dict[str, Any]]:
    """``name=key:value,key:value`` → {name: {key: value}} (values parsed as JSON if they can)."""
    out = {}
    for item in items:
        name, _, spec = item.partition("=")
        changes = {}
        for pair in filter(None, spec.split(",")):
            key, _, value = pair.partition(":")
            try:
                changes[key] = json.loads(value)
            except ValueError:
                changes[key] = value
        out[name] = changes
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    parser.add_argument("--options", default=",".join(OPTIONS))
    parser.add_argument("--set", action="append", default=[],
                        help="an extra option: name=key:value,key:value (retrieval settings)")
    parser.add_argument("--keyword", action="append", default=[],
                        help="a keyword-index variant: name=key:value,... (KeywordParams: "
                             "k1, b, title, heading, folder, body, lead, page_mix)")
    parser.add_argument("--no-scifact", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    options = {name: OPTIONS[name] for name in args.options.split(",") if name}
    options.update(parse_set(args.set))
    keyword = parse_set(args.keyword)
    unknown = {k for changes in keyword.values() for k in changes} - set(
        KeywordParams.__dataclass_fields__)
    if unknown:
        parser.error(f"--keyword: unknown KeywordParams {sorted(unknown)}; choose from "
                     f"{', '.join(KeywordParams.__dataclass_fields__)}")
    options.update({name: {} for name in keyword})
    shared_corpora.require(CORPORA, "obsidian-help-queries.dev.jsonl",
                           *(() if args.no_scifact else ("scifact",)))
    settings = load_settings(args.workspace)
    wiki = wiki_retriever(Mindgraph(settings))
    sets = {"dev": load_questions(CORPORA / "obsidian-help-queries.dev.jsonl"), "held-out": load_questions(HELD_OUT)}
    scifact = None
    if not args.no_scifact:
        data = load_beir(CORPORA / "scifact")
        sci = beir_retriever(settings, data, "scifact")
        graded = {q: {f"{d}.md": g for d, g in rel.items()} for q, rel in data.qrels.items()}
        scifact = (sci, [Question(qid, text, tuple(f"{d}.md" for d, g in data.qrels[qid].items()
                                                  if g > 0))
                         for qid, text in data.queries.items()], graded)
    rows = {}
    for name, changes in options.items():
        params = keyword.get(name)
        row = {key: figures(variant(wiki, changes, params), questions)
               for key, questions in sets.items()}
        if scifact is not None:
            row["scifact"] = figures(variant(scifact[0], changes, params), scifact[1],
                                     scifact[2])
        rows[name] = row
        if not args.json:
            print(line(name, row), flush=True)
    if args.json:
        print(json.dumps({"model": wiki.vector.model_version if wiki.vector else None,
                          "options": options, "keyword": keyword, "figures": rows}, indent=1))


def line(name: str, row: dict[str, dict[str, float]]) -> str:
    parts = [f"{name:12}"]
    for key in ("dev", "held-out"):
        f = row[key]
        parts.append(f"{key} {f['hit1']:.3f}/{f['recall5']:.3f}/{f['mrr10']:.3f} "
                     f"({f.get('mrr10_en', 0):.3f}/{f.get('mrr10_ja', 0):.3f}/"
                     f"{f.get('mrr10_zh', 0):.3f})")
    if "scifact" in row:
        parts.append(f"scifact nDCG@10 {row['scifact']['ndcg10']:.3f}")
    return " | ".join(parts)


if __name__ == "__main__":
    main()
