"""Keyword-side levers of bench/bench_retrieval_levers.py: the same BM25 index scoring a
question another way (field weights, length normalisation, section sums, RM3 feedback)."""

from __future__ import annotations

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
from mindgraph.retrieval.query_language import query_language_in  # noqa: E402
from mindgraph.retrieval.analyzer import analyze  # noqa: E402
from mindgraph.retrieval.bm25 import BM25Params  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.keyword import KeywordIndex  # noqa: E402
from lever_support import CJK, rebuilt  # noqa: E402

FEEDBACK_PAGES, FEEDBACK_TERMS = 3, 10


class LeverIndex(KeywordIndex):
    """The same index (arrays shared, nothing copied) scoring a query another way."""

    def __init__(self, base: KeywordIndex, *, langs: Sequence[str] | None = None,
                 bm25: BM25Params | None = None, page_mix: float | None = None,
                 section_sum: float = 0.0, other: KeywordIndex | None = None,
                 feedback: float = 0.0, pages: Mapping[str, Any] | None = None,
                 languages: Callable[[], Counter[str]] = Counter):
        self.__dict__.update(base.__dict__)
        self.lever_languages = languages   # the vault's, for the product's query language
        self.base = base
        self.langs = langs            # None: every query
        self.other = other            # another index answering the chosen queries
        self.section_sum = section_sum
        self.feedback = feedback
        self.page_map = pages or {}
        self._terms: dict[str, Counter[str]] = {}
        if bm25 is not None:
            self.sections = copy.copy(base.sections)
            self.pages = copy.copy(base.pages)
            self.sections.params = self.pages.params = bm25
        if page_mix is not None:
            self.params = replace(base.params, page_mix=page_mix)

    def _chosen(self, query: str) -> bool:
        return self.langs is None or (
            bool(query) and query_language_in(query, self.lever_languages) in self.langs)

    def search(self, query: str, limit: int = 10, extra: Mapping[str, float] | None = None,
               concepts: Sequence[Any] = ()) -> list[Any]:
        if not self._chosen(query):
            return self.base.search(query, limit, extra, concepts)
        if self.other is not None:
            return self.other.search(query, limit, extra, concepts)
        if self.feedback > 0 and not extra and not concepts:
            first = super().search(query, FEEDBACK_PAGES)
            added = self._feedback_terms(query, first)
            if added:
                return super().search(query, limit, added)
        return super().search(query, limit, extra, concepts)

    def page_scores(self, query: str, paths: Any, extra: Any = None, concepts: Any = ()
                    ) -> dict[str, float]:
        if not self._chosen(query):
            return self.base.page_scores(query, paths, extra, concepts)
        if self.other is not None:
            return self.other.page_scores(query, paths, extra, concepts)
        return super().page_scores(query, paths, extra, concepts)

    def _feedback_terms(self, query: str, first: list[Any]) -> dict[str, float]:
        own = set(self.query_terms(query))
        if not first:
            return {}
        top = max(h.score for h in first)
        weight: Counter[str] = Counter()
        for hit in first:
            counts = self._page_terms(hit.path)
            total = sum(counts.values()) or 1
            for term, n in counts.items():
                if term not in own:
                    weight[term] += n / total * hit.score / top
        ids = [self.vocab.ids[t] for t in weight if t in self.vocab.ids]
        idf = dict(zip([t for t in weight if t in self.vocab.ids],
                       self.pages.idf(np.array(ids, dtype=np.int64)).tolist())) if ids else {}
        ranked = sorted(((w * idf.get(t, 0.0), t) for t, w in weight.items()), reverse=True)
        chosen = [(s, t) for s, t in ranked[:FEEDBACK_TERMS] if s > 0]
        if not chosen:
            return {}
        best = chosen[0][0]
        return {t: self.feedback * s / best for s, t in chosen}

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

    def _scores(self, query: str, extra: Mapping[str, float] | None = None,
                concepts: Sequence[Any] = ()) -> Any:
        scored = super()._scores(query, extra, concepts)
        if scored is None or self.section_sum <= 0:
            return scored
        _, page_score, best, best_row = scored
        # the page's matched sections summed (the same rows BM25 scored), best one counted once
        weighted = dict.fromkeys(self.query_terms(query), 1.0)
        for term, weight in (extra or {}).items():
            weighted.setdefault(term, weight)
        known = [(self.vocab.ids[t], w) for t, w in weighted.items() if t in self.vocab.ids]
        ids = np.array([i for i, _ in known], dtype=np.int64)
        rows = self.sections.scores(ids, np.array([w for _, w in known]) if extra else None)
        groups = self._concept_ids(concepts)
        if groups:
            rows = rows + self.sections.concept_scores(groups)
        total = np.bincount(self.sections.groups, weights=rows, minlength=len(best))
        summed = best + self.section_sum * (total[:len(best)] - best)
        mix = self.params.page_mix
        combined = (mix * page_score / max(page_score.max(), 1e-12)
                    + (1 - mix) * summed / max(summed.max(), 1e-12))
        return combined, page_score, summed, best_row


def keyword_lever(**kw: Any) -> Callable[[HybridRetriever], HybridRetriever]:
    return lambda r: rebuilt(r, LeverIndex(r.keyword, pages=r.pages,
                                          languages=r.page_languages, **kw))


def title_lever(weight: float) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        other = KeywordIndex.build(r.pages.values(), replace(r.keyword.params, title=weight))
        return rebuilt(r, LeverIndex(r.keyword, langs=CJK, other=other,
                                     languages=r.page_languages))
    return make


def cjk_params_lever(**changes: Any) -> Callable[[HybridRetriever], HybridRetriever]:
    """Japanese and Chinese questions through an index built with other ``KeywordParams``."""
    def make(r: HybridRetriever) -> HybridRetriever:
        other = KeywordIndex.build(r.pages.values(), replace(r.keyword.params, **changes))
        return rebuilt(r, LeverIndex(r.keyword, langs=CJK, other=other,
                                     languages=r.page_languages))
    return make


def params_lever(**changes: Any) -> Callable[[HybridRetriever], HybridRetriever]:
    """Every question through an index built with other ``KeywordParams`` (field weights)."""
    return lambda r: rebuilt(r, KeywordIndex.build(r.pages.values(),
                                                   replace(r.keyword.params, **changes)))
