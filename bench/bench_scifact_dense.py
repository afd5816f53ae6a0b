"""Dense-only retrieval quality on SciFact (BEIR test split) with the offline MiniLM model.

    python bench/bench_scifact_dense.py                    # both modes, a table
    python bench/bench_scifact_dense.py --mode chunked     # our pipeline only
    python bench/bench_scifact_dense.py --limit 500 --json # a quick look on 500 documents

Two ways to embed the 5,183 abstracts:
- ``truncated``: title + " " + abstract as one text cut at 256 word pieces, one vector per
  document: how MTEB scores all-MiniLM-L6-v2 (published nDCG@10 about 0.645).
- ``chunked``: our pipeline: each abstract becomes a page (title, one lead section), cut into
  chunks under the token limit with overlap (chunking.py), embedded with ``sync_pages`` into
  the embedded store; a document's score is its best chunk's.

Queries are the 300 test claims. Reported: nDCG@10 (binary relevance, as pytrec_eval),
recall@100, MRR@10, and embedding speed. With --limit, only the first N documents are
embedded and only queries whose relevant documents are all among them are scored.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.page.model import Page, Section  # noqa: E402
from mindgraph.providers.embedding.local import LocalMiniLMProvider  # noqa: E402
from mindgraph.stores.embedded import EmbeddedStore  # noqa: E402
from mindgraph.vectors.chunking import chunker_for  # noqa: E402
from mindgraph.vectors.sync import sync_pages  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

SCIFACT = shared_corpora.corpora() \
    / "scifact"
PUBLISHED = 0.645


def load(limit: int | None) -> tuple[list[dict], dict[str, str], dict[str, set[str]]]:
    """Documents, queries (id → text) and qrels (query id → relevant doc ids)."""
    docs = [json.loads(line) for line in
            (SCIFACT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    if limit:
        docs = docs[:limit]
    ids = {d["_id"] for d in docs}
    queries = {q["_id"]: q["text"] for q in map(json.loads, (SCIFACT / "queries.jsonl")
                                                .read_text(encoding="utf-8").splitlines())}
    qrels: dict[str, set[str]] = {}
    for line in (SCIFACT / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, score = line.split("\t")
        if int(score) > 0:
            qrels.setdefault(qid, set()).add(did)
    qrels = {q: rel for q, rel in qrels.items() if rel <= ids and q in queries}
    return docs, {q: queries[q] for q in qrels}, qrels


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal


def mrr_at_10(ranked: list[str], relevant: set[str]) -> float:
    return next((1 / (i + 1) for i, d in enumerate(ranked[:10]) if d in relevant), 0.0)


def score(rankings: dict[str, list[str]], qrels: dict[str, set[str]]) -> dict[str, float]:
    """Mean nDCG@10, recall@100 and MRR@10 over the judged queries."""
    qs = sorted(qrels)
    return {"ndcg@10": round(float(np.mean([ndcg_at_10(rankings[q], qrels[q]) for q in qs])), 4),
            "recall@100": round(float(np.mean([len(set(rankings[q][:100]) & qrels[q])
                                               / len(qrels[q]) for q in qs])), 4),
            "mrr@10": round(float(np.mean([mrr_at_10(rankings[q], qrels[q]) for q in qs])), 4),
            "queries": len(qs)}


def run_truncated(provider: LocalMiniLMProvider, docs: list[dict], queries: dict[str, str],
                  ) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """One vector per document (title + abstract, truncated by the model at 256 pieces)."""
    texts = [f"{d['title']} {d['text']}".strip() for d in docs]
    started = time.perf_counter()
    matrix = provider.embed_documents(texts)
    spent = time.perf_counter() - started
    qids = sorted(queries)
    q = provider.embed_queries([queries[i] for i in qids])
    scores = q @ matrix.T
    rankings = {qid: [docs[j]["_id"] for j in np.argsort(-row)[:100]]
                for qid, row in zip(qids, scores)}
    return rankings, {"vectors": len(texts), "embed_s": round(spent, 1),
                      "per_s": round(len(texts) / spent, 1)}


def as_page(doc: dict) -> Page:
    """A SciFact abstract as a one-section page titled with the paper's title."""
    text = doc["text"].strip()
    section = Section(id="lead", heading="", level=0, path=(), text=text, start_line=1,
                      end_line=1)
    return Page(path=f"{doc['_id']}.md", title=doc["title"].strip() or doc["_id"], aliases=(),
                tags=(), sections=(section,) if text else (), links=())


def run_chunked(provider: LocalMiniLMProvider, docs: list[dict], queries: dict[str, str],
                ) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Our pipeline: chunk, sync into the embedded store, best chunk per document."""
    with tempfile.TemporaryDirectory(prefix="mindgraph-scifact-") as tmp:
        store = EmbeddedStore(Path(tmp))
        started = time.perf_counter()
        report = sync_pages([as_page(d) for d in docs], provider, store,
                            chunker_for(provider), batch_size=256)
        spent = time.perf_counter() - started
        qids = sorted(queries)
        q = provider.embed_queries([queries[i] for i in qids])
        rankings = {}
        for qid, vector in zip(qids, q):
            ranked: list[str] = []
            for hit in store.query(vector, 300, provider.model_version):
                doc_id = hit.page[:-3]
                if doc_id not in ranked:
                    ranked.append(doc_id)
            rankings[qid] = ranked[:100]
    return rankings, {"vectors": report.chunks, "embed_s": round(spent, 1),
                      "per_s": round(report.chunks / spent, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--mode", choices=["truncated", "chunked", "both"], default="both")
    parser.add_argument("--limit", type=int, default=0, help="embed only the first N docs")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    docs, queries, qrels = load(args.limit or None)
    provider = LocalMiniLMProvider()
    result: dict[str, Any] = {"documents": len(docs), "published_ndcg@10": PUBLISHED,
                              "model": provider.model_version}
    modes = ["truncated", "chunked"] if args.mode == "both" else [args.mode]
    for mode in modes:
        runner = run_truncated if mode == "truncated" else run_chunked
        rankings, timing = runner(provider, docs, queries)
        result[mode] = {**score(rankings, qrels), **timing}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"SciFact test, {len(docs)} documents, {len(qrels)} judged queries, "
          f"{provider.model_version} (published nDCG@10 {PUBLISHED})")
    for mode in modes:
        r = result[mode]
        print(f"  {mode:<9}  nDCG@10 {r['ndcg@10']:.4f}  recall@100 {r['recall@100']:.4f}  "
              f"MRR@10 {r['mrr@10']:.4f}  ({r['vectors']} vectors, {r['embed_s']} s, "
              f"{r['per_s']}/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
