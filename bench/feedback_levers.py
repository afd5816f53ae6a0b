"""Pseudo-relevance feedback and BM25 variants as query-time levers (session 23, issue 13).

    python bench/bench_retrieval_levers.py -C WS --cross-lingual --agent \
        --levers base,vprf_rocchio5,vprf_avg3,rm3_anserini,bm25plus,bm25f_title_b0
    python bench/feedback_levers.py -C WS     # SciFact: each lever's side alone

Registered in bench/bench_retrieval_levers.py (``vprf_…``, ``rm3_anserini``, ``bm25plus``),
which measures them on every set in one run. Every parameter is the literature's, fixed before
any run, none chosen on our questions or on SciFact:

- ``vprf_rocchio5``: vector PRF as Pyserini reproduces it (Li et al., "Pseudo Relevance
  Feedback with Deep Language Models and Dense Retrievers: Successes and Pitfalls", TOIS 2023):
  the query's vector becomes 0.4 × itself + 0.6 × the mean of the vectors of the dense
  retriever's own first 5 results (here: each page's best chunk), and the vector side searches
  again with it; the keyword side is untouched. (Session 9's ``feedback`` took the *fused*
  first pages and moved the whole search.)
- ``vprf_avg3``: the same paper's Average PRF: the mean of the query's vector and the first 3
  results' vectors.
- ``rm3_anserini``: RM3 with Anserini's defaults (fbDocs 10, fbTerms 10, originalQueryWeight
  0.5): the feedback model is Σ over BM25's first 10 pages of P(t | page) × the page's score,
  its 10 heaviest terms kept and normalised to sum 1, mixed half and half with the query's own
  (each of its terms 1 / |q|). No idf in the term choice, as RM3 has none (the session 8 and
  17 ``rm3`` rows weighed terms by idf and took 3 pages). Questions whose keyword search
  carries translations or expansions (``extra`` / ``concepts``) are searched as before.
- ``bm25f_title_b0``: BM25F with a length normalisation per field (Robertson, Zaragoza &
  Taylor, "Simple BM25 extension to multiple weighted fields", CIKM 2004): today the weighted
  fields of a page or section (title ×3, folder, headings ×2, text) share one bag, its summed
  length normalised at b 0.75 (as Lucene's CombinedFieldQuery does); here the title-like fields
  (title, aliases, file name, folders) are not length-normalised at all (b 0: a name's length
  says nothing of verbosity) and the rest is normalised by its own length against its own
  average, the per-field tfs summed before k1's saturation. Questions whose keyword search
  carries translations or expansions are searched as before.
- ``qtf`` (session 25, from bench/bench_peers.py): a term the question repeats weighs its
  count (BM25's query-term frequency with k3 = ∞, as bm25s / LlamaIndex's BM25Retriever count
  it; today each distinct term weighs 1): fresh24-zh-07 asks for Logseq twice, and
  LlamaIndex ranks its page 2nd where mindgraph's keyword side misses it.
- ``bm25plus``: BM25+ (Lv & Zhai, "Lower-bounding term frequency normalization", CIKM 2011)
  with their δ = 1: every matched term adds idf × δ on top of BM25's saturated tf, so a long
  document matching a term is never scored as if it nearly did not.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.retrieval.analyzer import analyze  # noqa: E402
from mindgraph.retrieval.bm25 import SparseBM25  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.keyword import (KeywordIndex, max_per_group,  # noqa: E402
                                         page_fields)
from mindgraph.retrieval.vector import VectorRetriever  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path)

RM3_DOCS, RM3_TERMS, RM3_ORIGINAL = 10, 10, 0.5      # Anserini's -rm3 defaults
BM25PLUS_DELTA = 1.0                                  # Lv & Zhai 2011


def _rebuilt(base: HybridRetriever, keyword: KeywordIndex | None = None) -> HybridRetriever:
    return HybridRetriever(base.pages, keyword or base.keyword, base.graph, base.vector,
                           base.settings, expander=base.expander,
                           vector_error=base.vector_error,
                           calibration_file=base._calibration_file)


# -- vector PRF ------------------------------------------------------------------------------

def chunk_vector(store: Any, model_version: str, query: np.ndarray, page: str,
                 chunk_id: str) -> np.ndarray | None:
    """A stored chunk's unit vector laid out as ``query`` is: for a routed store (one block
    per model, a query filling one), in the query's block of the wide vector."""
    blocks = getattr(store, "blocks", None)
    if blocks is not None and model_version == store.model_version:
        filled = [i for i, (a, b) in enumerate(blocks) if np.any(query[a:b])]
        if len(filled) != 1:
            return None
        a, b = blocks[filled[0]]
        table = store.inner._table(store.parts[filled[0]])
        row = None if table is None else table.index.get((page, chunk_id))
        if row is None:
            return None
        wide = np.zeros(len(query), dtype=np.float32)
        wide[a:b] = np.asarray(table.vectors[[row]][0], dtype=np.float32)
        return wide
    table = store._table(model_version)
    row = None if table is None else table.index.get((page, chunk_id))
    return None if row is None else np.asarray(table.vectors[[row]][0], dtype=np.float32)


class FeedbackVector(VectorRetriever):
    """The vector retriever with each query's vector moved Rocchio's way toward its own first
    ``k`` results' best chunks: ``alpha`` × query + ``beta`` × their mean (then unit)."""

    def __init__(self, base: VectorRetriever, k: int, alpha: float, beta: float):
        self.__dict__.update(base.__dict__)
        self.base, self.k, self.alpha, self.beta = base, k, alpha, beta
        self._moved: dict[Any, np.ndarray] = {}

    def within(self, *args: Any, **kw: Any) -> "FeedbackVector":
        return FeedbackVector(self.base.within(*args, **kw), self.k, self.alpha, self.beta)

    def forget_queries(self) -> None:
        self.base.forget_queries()
        self._moved.clear()

    def embed_query(self, query: str) -> np.ndarray:
        moved = self._moved.get(query)
        if moved is None:
            q = np.asarray(self.base.embed_query(query), dtype=np.float32)
            found = [v for v in (chunk_vector(self.store, self.model_version, q, h.path,
                                              h.chunk_id)
                                 for h in self.base.search(query, self.k)) if v is not None]
            moved = q
            if found:
                mixed = self.alpha * q + self.beta * np.mean(found, axis=0)
                moved = (mixed / np.linalg.norm(mixed)).astype(np.float32)
            self._moved[query] = moved
        return moved


def vector_prf_lever(k: int, alpha: float, beta: float
                     ) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        out = _rebuilt(r)
        if r.vector is not None:
            out.vector = FeedbackVector(r.vector, k, alpha, beta)
        return out
    return make


# -- RM3 -------------------------------------------------------------------------------------

class RM3Index(KeywordIndex):
    """The same index (arrays shared) answering a plain query with its RM3 expansion."""

    def __init__(self, base: KeywordIndex, pages: Mapping[str, Any]):
        self.__dict__.update(base.__dict__)
        self.base, self.page_map = base, pages
        self._terms: dict[str, Counter[str]] = {}
        self._expanded: dict[str, dict[str, float]] = {}

    def _scores(self, query: str, extra: Mapping[str, float] | None = None,
                concepts: Sequence[Any] = ()) -> Any:
        if extra or concepts or not query:
            return super()._scores(query, extra, concepts)
        weights = self.expansion(query)
        if not weights:
            return super()._scores(query)
        # an empty query string: every term, the query's own too, weighed by ``weights``
        return super()._scores("", weights)

    def expansion(self, query: str) -> dict[str, float]:
        """Term → weight of the RM3 query, scaled so that a query term weighs at least 1."""
        found = self._expanded.get(query)
        if found is not None:
            return found
        own = self.query_terms(query)
        first = self.base.search(query, RM3_DOCS)
        feedback: Counter[str] = Counter()
        for hit in first:
            counts = self._page_terms(hit.path)
            total = sum(counts.values()) or 1
            for term, n in counts.items():
                if any(c.isalnum() for c in term):   # Anserini keeps word terms only
                    feedback[term] += n / total * hit.score
        kept = dict(feedback.most_common(RM3_TERMS))
        mass = sum(kept.values())
        weights: dict[str, float] = {}
        if own and mass > 0:
            for term in own:
                weights[term] = RM3_ORIGINAL / len(own)
            for term, w in kept.items():
                weights[term] = weights.get(term, 0.0) + (1 - RM3_ORIGINAL) * w / mass
            scale = 1.0 / (RM3_ORIGINAL / len(own))
            weights = {t: w * scale for t, w in weights.items()}
        self._expanded[query] = weights
        return weights

    def _page_terms(self, path: str) -> Counter[str]:
        found = self._terms.get(path)
        if found is None:
            page = self.page_map[path]
            lang = page_language(page)
            found = Counter(analyze(page.title, lang=lang))
            for section in page.sections:
                found.update(analyze(f"{section.heading}\n{section.text}", lang=lang))
            self._terms[path] = found
        return found


def rm3_lever(r: HybridRetriever) -> HybridRetriever:
    return _rebuilt(r, RM3Index(r.keyword, r.pages))


# -- BM25+ -----------------------------------------------------------------------------------

class BM25Plus(SparseBM25):
    """BM25 with Lv & Zhai's lower bound: a matched term adds idf × ``delta`` more."""

    delta = BM25PLUS_DELTA

    def scores(self, term_ids: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        out = super().scores(term_ids, weights)
        if self._n_alive == 0 or len(term_ids) == 0:
            return out
        term_ids = np.asarray(term_ids, dtype=np.int64)
        weights = np.ones(len(term_ids)) if weights is None else np.asarray(weights, float)
        qw = self.idf(term_ids) * weights
        keep = qw > 0
        term_ids, qw = term_ids[keep], qw[keep]
        offset = 0
        for segment in (self._base_csc, self._delta_matrix()):
            if segment.n_rows:
                cols = term_ids < segment.n_cols
                found, tf, counts = segment.columns(term_ids[cols])
                which = np.repeat(qw[cols], counts) * (tf > 0)
                out += np.bincount(found + offset, which * self.delta, minlength=self.n_rows)
            offset += segment.n_rows
        out[~self._alive[: self.n_rows]] = 0.0
        return out


def _plus(index: SparseBM25) -> SparseBM25:
    out = copy.copy(index)
    out.__class__ = BM25Plus
    return out


# -- query term frequency ---------------------------------------------------------------------

class QueryTermFrequencyIndex(KeywordIndex):
    """A term the question repeats weighs its count, not 1 (BM25 with k3 = ∞, as bm25s,
    LlamaIndex's BM25Retriever, and Lucene's summed duplicate clauses score it)."""

    def _scores(self, query: str, extra: Mapping[str, float] | None = None,
                concepts: Sequence[Any] = ()):
        counts = Counter(analyze(query, query=True))
        repeated = {t: float(n) for t, n in counts.items() if n > 1}
        if not repeated:
            return super()._scores(query, extra, concepts)
        once = [t for t, n in counts.items() if n == 1]
        weighted = {**repeated, **{t: w for t, w in (extra or {}).items() if t not in repeated}}
        self.query_terms = lambda _query: once      # the rest come in as weighted extras
        try:
            return super()._scores(query, weighted, concepts)
        finally:
            del self.query_terms


def qtf_lever(r: HybridRetriever) -> HybridRetriever:
    index = copy.copy(r.keyword)
    index.__class__ = QueryTermFrequencyIndex
    return _rebuilt(r, index)


def bm25plus_lever(r: HybridRetriever) -> HybridRetriever:
    index = copy.copy(r.keyword)
    index.pages, index.sections = _plus(r.keyword.pages), _plus(r.keyword.sections)
    return _rebuilt(r, index)


# -- BM25F, title-like fields not length-normalised -------------------------------------------

class TitleUnnormalisedIndex(KeywordIndex):
    """The same index's idf and page/section mix, its scores BM25F's with b 0 for the
    title-like fields and the index's b for the rest (over a second index of the rest)."""

    def __init__(self, base: KeywordIndex, pages: Mapping[str, Any]):
        self.__dict__.update(base.__dict__)
        self.base = base
        p = base.params
        self.rest = KeywordIndex.build(pages.values(), replace(p, title=0.0, folder=0.0))
        n = len(self.rest._paths)
        self.title_tf: dict[str, np.ndarray] = {}      # term → weighted tf of each page id
        for path, page in pages.items():
            pid = self.rest._pid[path]
            head = page_fields(page)
            lang = page_language(page)
            counts = Counter(analyze(head["title"], lang=lang))
            weighted = {t: c * p.title for t, c in counts.items()}
            for t, c in Counter(analyze(head["folder"], lang=lang)).items():
                weighted[t] = weighted.get(t, 0.0) + c * p.folder
            for term, tf in weighted.items():
                self.title_tf.setdefault(term, np.zeros(n))[pid] += tf
        self.pid_map = np.array([base._pid[path] for path in self.rest._paths], dtype=np.int64)
        self.row_map = np.array([base.sections._row_of.get(key, -1) if key is not None else -1
                                 for key in self.rest.sections._keys], dtype=np.int64)

    def _field_scores(self, rows: SparseBM25, idf_of: SparseBM25, known: list[str],
                      weights: np.ndarray) -> np.ndarray:
        k1, b = rows.params.k1, rows.params.b
        out = np.zeros(rows.n_rows)
        alive = rows._alive[: rows.n_rows]
        if rows._n_alive == 0:
            return out
        avglen = rows._total_len / rows._n_alive
        norm = 1.0 - b + b * rows._lengths[: rows.n_rows] / avglen
        groups = rows.groups
        base_ids = np.array([self.base.vocab.ids[t] for t in known], dtype=np.int64)
        idf = idf_of.idf(base_ids)
        for term, w, term_idf in zip(known, weights, idf):
            if term_idf <= 0:
                continue
            tf = np.zeros(rows.n_rows)
            rest_id = self.rest.vocab.ids.get(term)
            if rest_id is not None:
                offset = 0
                for segment in (rows._base_csc, rows._delta_matrix()):
                    if segment.n_rows and rest_id < segment.n_cols:
                        found, values, _ = segment.columns(np.array([rest_id]))
                        tf[found + offset] += values
                    offset += segment.n_rows
                tf /= norm
            title = self.title_tf.get(term)
            if title is not None:
                tf += title[groups]
            out += w * term_idf * tf * (k1 + 1.0) / (tf + k1)
        out[~alive] = 0.0
        return out

    def _scores(self, query: str, extra: Mapping[str, float] | None = None,
                concepts: Sequence[Any] = ()) -> Any:
        if extra or concepts:
            return self.base._scores(query, extra, concepts)
        known = [t for t in self.query_terms(query) if t in self.base.vocab.ids]
        if not known or not self.hashes:
            return None
        weights = np.ones(len(known))
        page_rows = self._field_scores(self.rest.pages, self.base.pages, known, weights)
        section_rows = self._field_scores(self.rest.sections, self.base.sections, known,
                                          weights)
        n_pids = len(self.rest._paths)
        page_score = np.zeros(n_pids)
        hit = page_rows > 0
        page_score[self.rest.pages.groups[hit]] = page_rows[hit]
        best = np.zeros(n_pids)
        best_row = np.full(n_pids, -1, dtype=np.int64)
        matched = np.flatnonzero(section_rows > 0)
        if len(matched):
            scores, groups = section_rows[matched], self.rest.sections.groups[matched]
            max_per_group(best, groups, scores)
            top = scores == best[groups]
            max_per_group(best_row, groups[top], matched[top])
        # into the base index's page ids and section rows (the same pages, another order)
        n_base = len(self.base._paths)
        page_out, best_out = np.zeros(n_base), np.zeros(n_base)
        row_out = np.full(n_base, -1, dtype=np.int64)
        page_out[self.pid_map] = page_score
        best_out[self.pid_map] = best
        row_out[self.pid_map] = np.where(best_row >= 0, self.row_map[best_row], -1)
        mix = self.params.page_mix
        combined = (mix * page_out / max(page_out.max(), 1e-12)
                    + (1 - mix) * best_out / max(best_out.max(), 1e-12))
        return combined, page_out, best_out, row_out


def bm25f_lever(r: HybridRetriever) -> HybridRetriever:
    return _rebuilt(r, TitleUnnormalisedIndex(r.keyword, r.pages))


LEVERS: dict[str, Callable[[HybridRetriever], HybridRetriever]] = {
    "vprf_rocchio5": vector_prf_lever(5, 0.4, 0.6),
    "vprf_avg3": vector_prf_lever(3, 0.25, 0.75),
    "rm3_anserini": rm3_lever,
    "bm25plus": bm25plus_lever,
    "bm25f_title_b0": bm25f_lever,
    "qtf": qtf_lever,
}


def main() -> None:
    """SciFact nDCG@10 of the side each lever changes, alone: the vector side for ``vprf``,
    the keyword side (BM25 alone, no fusion) for the others."""
    from mindgraph.bench.corpora import beir_retriever
    from mindgraph.config import load_settings
    from mindgraph.retrieval.datasets import load_beir
    from mindgraph.retrieval.metrics import mean, ndcg_at

    parser = argparse.ArgumentParser(description=main.__doc__)
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    args = parser.parse_args()
    corpora = shared_corpora.corpora()
    shared_corpora.require(corpora, "scifact")
    data = load_beir(corpora / "scifact")
    sci = beir_retriever(load_settings(args.workspace), data, "scifact")
    graded = {q: {f"{d}.md": g for d, g in rel.items()} for q, rel in data.qrels.items()}

    def ndcg(search: Callable[[str], list[Any]], fresh: Callable[[], None]) -> float:
        out = []
        for qid, text in data.queries.items():
            fresh()
            out.append(ndcg_at([h.path for h in search(text)], graded[qid], 10))
        return mean(out)

    assert sci.vector is not None, "SciFact is not embedded: run `mindgraph bench` once"
    sides = {"vector alone: base": sci.vector,
             "vector alone: vprf_rocchio5": FeedbackVector(sci.vector, 5, 0.4, 0.6),
             "vector alone: vprf_avg3": FeedbackVector(sci.vector, 3, 0.25, 0.75)}
    for name, vector in sides.items():
        print(f"{name:32} {ndcg(lambda q: vector.search(q, 10), vector.forget_queries):.3f}")
    indexes = {"keyword alone: base": sci.keyword,
               "keyword alone: rm3_anserini": RM3Index(sci.keyword, sci.pages),
               "keyword alone: bm25plus": bm25plus_lever(sci).keyword,
               "keyword alone: bm25f_title_b0": TitleUnnormalisedIndex(sci.keyword, sci.pages)}
    for name, index in indexes.items():
        print(f"{name:32} {ndcg(lambda q: index.search(q, 10), lambda: None):.3f}")


if __name__ == "__main__":
    main()
