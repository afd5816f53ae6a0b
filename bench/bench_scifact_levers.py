"""Query-time levers for SciFact measured against the vault's questions (session 9, issue 13).

    python bench/bench_scifact_levers.py -C /tmp/oh                 # every lever below
    python bench/bench_scifact_levers.py -C /tmp/oh --levers base,coverage1

Each lever is the hybrid method of `mindgraph bench` over the same indexes with one thing
added at query time, so differences come from the lever alone (as bench/bench_fusion.py does
for fusion settings). None of them is in the product: each gains on SciFact only where it
loses on the dev questions, or gains nothing (README, "SciFact, session 9").

- ``feedback``: dense pseudo-relevance feedback (Rocchio on the vector side): the query's
  vector plus ``beta`` × the mean of the best chunk vectors of the first ``k`` fused results,
  then the whole search again with that vector (embedded store only: it reads the stored
  vectors);
- ``proximity``: a bonus of ``gamma`` × the best score × the share of the query's adjacent
  term pairs that stand within ``window`` terms of each other in a candidate (the first 30);
- ``coverage``: the keyword side's weight scaled by the share of the query's idf mass that
  BM25's first ``top`` pages hold (to the power ``gamma``): a BM25 first page that matches
  only part of the question lets the vector side order more.

Prints one line per lever: dev and held-out hit@1 / R@5 / MRR@10 (en / ja / zh MRR), and
SciFact nDCG@10.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_fusion import HELD_OUT, figures, line  # noqa: E402
from mindgraph.bench.corpora import beir_retriever, wiki_retriever  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.retrieval.analyzer import analyze  # noqa: E402
from mindgraph.retrieval.datasets import Question, load_beir, load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever, SearchOptions  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()

PROXIMITY_POOL = 30


def pair_share(query_terms: Sequence[str], doc_terms: Sequence[str], window: int) -> float:
    """The share of the query's adjacent term pairs (of two different terms) whose terms
    stand within ``window`` places of each other, in either order, in ``doc_terms``."""
    pairs = [(a, b) for a, b in zip(query_terms, query_terms[1:]) if a != b]
    if not pairs:
        return 0.0
    places: dict[str, list[int]] = {}
    for i, term in enumerate(doc_terms):
        places.setdefault(term, []).append(i)
    near = 0
    for a, b in pairs:
        seen_b = set(places.get(b, ()))
        if any(i + d in seen_b or i - d in seen_b for i in places.get(a, ())
               for d in range(1, window + 1)):
            near += 1
    return near / len(pairs)


def idf_coverage(query_idf: Mapping[str, float], doc_terms: set[str]) -> float | None:
    """The share of the query terms' idf mass that ``doc_terms`` hold (None below two terms
    or without idf)."""
    total = sum(query_idf.values())
    if len(query_idf) < 2 or total <= 0:
        return None
    return sum(idf for term, idf in query_idf.items() if term in doc_terms) / total


def feedback_vector(query: np.ndarray, found: Sequence[np.ndarray], beta: float) -> np.ndarray:
    """Rocchio: the unit query plus ``beta`` × the unit mean of ``found``, made unit again."""
    q = query / np.linalg.norm(query)
    if not found:
        return q.astype(np.float32)
    mean = np.mean(found, axis=0)
    moved = q + beta * mean / np.linalg.norm(mean)
    return (moved / np.linalg.norm(moved)).astype(np.float32)


class _Lever(HybridRetriever):
    """A hybrid retriever over another's indexes (``of``) with one query-time change."""

    def __init__(self, of: HybridRetriever, **params: Any):
        super().__init__(of.pages, of.keyword, of.graph, of.vector, of.settings,
                         expander=of.expander, vector_error=of.vector_error,
                         calibration_file=of._calibration_file)
        self.params = params
        self.query = ""
        self._terms: dict[str, list[str]] = {}

    def _search(self, query: str, options: SearchOptions) -> Any:
        self.query = query
        return super()._search(query, options)

    def page_terms(self, path: str) -> list[str]:
        """A page's index terms in order (title, headings and text; sections kept apart)."""
        found = self._terms.get(path)
        if found is None:
            page = self.pages[path]
            found = analyze(page.title, lang=page_language(page)) + ["\0"]
            for section in page.sections:
                found += analyze(f"{section.heading}\n{section.text}", lang=page_language(page))
                found.append("\0")
            self._terms[path] = found
        return found


class Proximity(_Lever):
    def _failure_bonus(self, candidates: dict, intent: Any) -> None:
        gamma, window = self.params["gamma"], self.params["window"]
        order = sorted(candidates, key=lambda p: -candidates[p].score)[:PROXIMITY_POOL]
        if order:
            terms = analyze(self.query, query=True)
            best = candidates[order[0]].score
            for path in order:
                candidates[path].score += gamma * best * pair_share(
                    terms, self.page_terms(path), window)
        super()._failure_bonus(candidates, intent)


class Coverage(_Lever):
    def _fit_weights(self, query: str, scored: Mapping[str, list[tuple[str, float]]],
                     weights: dict[str, float]) -> dict[str, float]:
        weights = super()._fit_weights(query, scored, weights)
        if not {"keyword", "vector"} <= set(weights) or not scored.get("keyword"):
            return weights
        index = self.keyword
        terms = [t for t in index.query_terms(query) if t in index.vocab.ids]
        ids = np.array([index.vocab.ids[t] for t in terms], dtype=np.int64)
        idf = dict(zip(terms, index.pages.idf(ids).tolist())) if terms else {}
        shares = [idf_coverage(idf, set(self.page_terms(path)))
                  for path, _ in scored["keyword"][:self.params["top"]]]
        if not shares or None in shares:
            return weights
        share = float(np.mean(shares))   # type: ignore[arg-type]
        total = weights["keyword"] + weights["vector"]
        kw = weights["keyword"] * share ** self.params["gamma"]
        return {**weights, "keyword": total * kw / (kw + weights["vector"]),
                "vector": total * weights["vector"] / (kw + weights["vector"])}


class Feedback(_Lever):
    def _search(self, query: str, options: SearchOptions) -> Any:
        first = super()._search(query, options)
        if self.vector is None or not options.use_vector or not first.results:
            return first
        table = self.vector.store._table(self.vector.model_version)  # type: ignore[attr-defined]
        q = self.vector.embed_query(query)
        found = []
        for result in first.results[:self.params["k"]]:
            rows = [table.index[(result.page, c)] for c in table.by_page.get(result.page, ())]
            if rows:
                chunks = table.vectors[rows]
                found.append(chunks[int(np.argmax(chunks @ q))])
        cache = self.vector._cache
        cache[query] = feedback_vector(q, found, self.params["beta"])
        self._backgrounds.pop(query, None)
        try:
            return super()._search(query, options)
        finally:
            cache[query] = q
            self._backgrounds.pop(query, None)


LEVERS: dict[str, Callable[[HybridRetriever], HybridRetriever]] = {
    "base": lambda r: r,
    "feedback1": lambda r: Feedback(r, k=1, beta=0.5),
    "feedback3": lambda r: Feedback(r, k=3, beta=0.5),
    "proximity2": lambda r: Proximity(r, gamma=0.2, window=2),
    "proximity4": lambda r: Proximity(r, gamma=0.1, window=4),
    "coverage1": lambda r: Coverage(r, gamma=1.0, top=1),
    "coverage2": lambda r: Coverage(r, gamma=2.0, top=1),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    parser.add_argument("--levers", default=",".join(LEVERS))
    args = parser.parse_args()
    names = [n for n in args.levers.split(",") if n]
    unknown = [n for n in names if n not in LEVERS]
    if unknown:
        parser.error(f"--levers: unknown {unknown}; choose from {', '.join(LEVERS)}")
    shared_corpora.require(CORPORA, "obsidian-help-queries.dev.jsonl", "scifact")
    settings = load_settings(args.workspace)
    wiki = wiki_retriever(Mindgraph(settings))
    sets = {"dev": load_questions(CORPORA / "obsidian-help-queries.dev.jsonl"),
            "held-out": load_questions(HELD_OUT)}
    data = load_beir(CORPORA / "scifact")
    sci = beir_retriever(settings, data, "scifact")
    graded = {q: {f"{d}.md": g for d, g in rel.items()} for q, rel in data.qrels.items()}
    claims = [Question(qid, text, tuple(f"{d}.md" for d, g in data.qrels[qid].items() if g > 0))
              for qid, text in data.queries.items()]
    for name in names:
        row = {key: figures(LEVERS[name](wiki), questions) for key, questions in sets.items()}
        row["scifact"] = figures(LEVERS[name](sci), claims, graded)
        print(line(name, row), flush=True)


if __name__ == "__main__":
    main()
