"""Vector-side levers of bench/bench_retrieval_levers.py: the vector side's weight, the pages it
ranks (same language, length-normalised, content words, translations pooled) and the model(s)
that vote."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mindgraph.bench.corpora import wiki_retriever  # noqa: E402
from mindgraph.bench.crosslingual import PagesOnly  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.retrieval.analyzer import analyze  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.twins import Twins  # noqa: E402
from mindgraph.retrieval.vector import VectorPageHit, VectorRetriever  # noqa: E402
from lever_support import CJK, rebuilt  # noqa: E402


class VectorFactor(HybridRetriever):
    """The vector side's weight × ``factor`` for questions in ``langs``."""

    factor = 1.0
    langs: Sequence[str] = CJK

    def _vector_factor(self, query: str) -> float:
        base = super()._vector_factor(query)
        return base * self.factor if self.query_language(query) in self.langs else base


class SameLanguageVector:
    """The vector retriever, but a question in one of ``langs`` ranks only the pages in its
    own language (when the vault has some): a multilingual model ranks a Chinese question's
    Japanese twin pages beside its Chinese ones, and they take the vector side's top."""

    def __init__(self, base: Any, pages: Mapping[str, Any], langs: Sequence[str] = CJK):
        self.base = base
        self.views = {}
        for lang in langs:
            mine = [p for p, page in pages.items() if page_language(page) == lang]
            if mine:
                self.views[lang] = base.within(mine)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def search(self, query: str, limit: int) -> list[Any]:
        view = self.views.get(self.base.query_language(query))
        return (view or self.base).search(query, limit)


class LengthNormalisedVector(SameLanguageVector):
    """The vector retriever with each page's cosine lowered by ``gamma`` × ln(its text's length
    / the median page's): a long page has more chunks, so more chances at a high best chunk."""

    def __init__(self, base: Any, pages: Mapping[str, Any], gamma: float):
        self.base, self.gamma = base, gamma
        lengths = {p: max(1, sum(len(s.text) for s in page.sections) + len(page.title))
                   for p, page in pages.items()}
        median = float(np.median(list(lengths.values())))
        self.scale = {p: float(np.log(n / median)) for p, n in lengths.items()}

    def search(self, query: str, limit: int) -> list[Any]:
        hits = self.base.search(query, limit * 2)
        moved = [replace(h, score=h.score - self.gamma * self.scale.get(h.path, 0.0))
                 for h in hits]
        return sorted(moved, key=lambda h: (-h.score, h.path))[:limit]


class ContentWordsVector(SameLanguageVector):
    """The vector retriever, but a Japanese or Chinese question is embedded as its content
    words only (the analyser's terms, stop words and question words out, joined)."""

    def __init__(self, base: Any):
        self.base = base

    def search(self, query: str, limit: int) -> list[Any]:
        if self.base.query_language(query) not in CJK:
            return self.base.search(query, limit)
        words = "".join(dict.fromkeys(analyze(query, query=True)))
        return self.base.search(words or query, limit)


class TwinPooledVector(SameLanguageVector):
    """The vector retriever, but for a Japanese or Chinese question each page in its language
    takes ``weight`` × the best cosine of its translations the same model embedded (the
    page's twins in ``langs``, twins.py) beside (1 − ``weight``) × its own (``weight`` None:
    the larger of the two): a multilingual model's cosine of one page is noisy, its twin's is
    a second reading of the same text. Pages in other languages keep their own score."""

    def __init__(self, base: Any, pages: Mapping[str, Any], weight: float | None,
                 langs: Sequence[str] = CJK):
        self.base, self.weight, self.langs = base, weight, langs
        self.twins = Twins(pages)

    def search(self, query: str, limit: int) -> list[Any]:
        lang = self.base.query_language(query)
        if lang not in self.langs or not self.twins.count:
            return self.base.search(query, limit)
        hits = self.base.search(query, limit * 3)
        own = {h.path: h for h in hits}
        others = [l for l in self.langs if l != lang]
        mine: set[str] = set()
        for h in hits:
            if self.twins.language.get(h.path) == lang:
                mine.add(h.path)
            else:
                twin = self.twins.twin(h.path, lang)
                if twin is not None:
                    mine.add(twin)
        needed = {p for p in mine if p not in own}
        for p in mine:
            needed |= {t for l in others if (t := self.twins.twin(p, l)) and t not in own}
        found = self.base.page_scores(query, sorted(needed)) if needed else {}
        score = {p: h.score for p, h in own.items()}
        score.update({p: s for p, s in found.items() if p not in score})
        out = [h for h in hits if h.path not in mine]
        for p in mine:
            twin = max((score.get(t, 0.0) for l in others
                        if (t := self.twins.twin(p, l))), default=0.0)
            mine_score = score.get(p, 0.0)
            if twin <= 0 or mine_score <= 0:
                pooled = mine_score
            elif self.weight is None:
                pooled = max(mine_score, twin)
            else:
                pooled = (1 - self.weight) * mine_score + self.weight * twin
            hit = own.get(p)
            if hit is None:
                if pooled <= 0:
                    continue
                hit = VectorPageHit(p, pooled, "", "")
            out.append(replace(hit, score=pooled))
        return sorted(out, key=lambda h: (-h.score, h.path))[:limit]


def paged_vector_lever(wrapper: Callable[..., Any], *args: Any
                       ) -> Callable[[HybridRetriever], HybridRetriever]:
    """The vector side wrapped by ``wrapper(vector, pages, *args)``."""
    def make(r: HybridRetriever) -> HybridRetriever:
        out = rebuilt(r)
        if r.vector is not None:
            out.vector = wrapper(r.vector, r.pages, *args)
        return out
    return make


def twin_vector_lever(weight: float | None) -> Callable[[HybridRetriever], HybridRetriever]:
    return paged_vector_lever(TwinPooledVector, weight)


class BothModelsVector(SameLanguageVector):
    """For a Japanese or Chinese question, each page's vector score is (1 − ``weight``) × the
    routed model's cosine (USE) + ``weight`` × MiniLM's, read from ``other`` (a workspace
    over the same vault embedded with MiniLM for every language: the routed store holds no
    MiniLM vectors of Japanese and Chinese sections). Both models' first pages are scored."""

    def __init__(self, base: Any, other: Any, weight: float, langs: Sequence[str] = CJK):
        self.base, self.other, self.weight, self.langs = base, other, weight, langs

    def search(self, query: str, limit: int) -> list[Any]:
        if self.base.query_language(query) not in self.langs:
            return self.base.search(query, limit)
        mine = {h.path: h for h in self.base.search(query, limit * 2)}
        theirs = {h.path: h for h in self.other.search(query, limit * 2)}
        paths = set(mine) | set(theirs)
        a = {p: h.score for p, h in mine.items()}
        a.update(self.base.page_scores(query, sorted(paths - set(mine))))
        b = {p: h.score for p, h in theirs.items()}
        b.update(self.other.page_scores(query, sorted(paths - set(theirs))))
        out = []
        for p in paths:
            hit = mine.get(p) or theirs[p]
            out.append(replace(hit, score=(1 - self.weight) * a.get(p, 0.0)
                               + self.weight * b.get(p, 0.0)))
        return sorted(out, key=lambda h: (-h.score, h.path))[:limit]

    def forget_queries(self) -> None:
        self.base.forget_queries()
        self.other.forget_queries()


_MINI: dict[str, Any] = {}


def both_models_lever(weight: float) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        if "vector" not in _MINI:
            ws = os.environ["MINILM_WS"]   # a workspace of the vault embedded with MiniLM alone
            _MINI["vector"] = wiki_retriever(Mindgraph(load_settings(ws)), embed=False).vector
        out = rebuilt(r)
        if r.vector is not None:
            other = _MINI["vector"]
            if getattr(r.vector, "pages", None) is not None:   # a cross-lingual set's pages
                other = other.within(list(r.vector.pages))
            out.vector = BothModelsVector(r.vector, other, weight)  # type: ignore
        return out
    return make


class MultilingualEverywhere(SameLanguageVector):
    """For a Japanese or Chinese question, the vector side is the multilingual model's (USE)
    over every page searched, English pages included, read from ``other`` (the vault
    embedded with use-multilingual-v3 for every language, ``USE_WS``): the routed store holds
    MiniLM vectors only of English pages, so today such a question meets them through MiniLM
    (its vectors of Japanese text are noise, its weight cut) or not at all. ``fallback``:
    only when the routed model would give way (USE holds under a tenth of the chunks
    searched: a Japanese or Chinese question over English pages), so a question over a
    vault with pages in its own language is answered as today. English questions keep
    MiniLM's."""

    def __init__(self, base: Any, other: Any, fallback: bool, langs: Sequence[str] = CJK):
        self.base, self.other, self.fallback, self.langs = base, other, fallback, langs

    def _chosen(self, query: str) -> Any:
        lang = self.base.query_language(query)
        if lang not in self.langs:
            return self.base
        if not self.fallback:
            return self.other
        order = self.base.provider.route_order(lang)
        counts = self.base.part_counts()
        own = order[0]
        if counts is None or not sum(counts) or counts[own] >= 0.1 * sum(counts):
            return self.base
        return self.other

    def search(self, query: str, limit: int) -> list[Any]:
        return self._chosen(query).search(query, limit)

    def page_scores(self, query: str, paths: Any) -> dict[str, float]:
        return self._chosen(query).page_scores(query, paths)

    def query_provider(self, query: str) -> Any:
        return self._chosen(query).query_provider(query)

    def embed_query(self, query: str) -> Any:
        return self._chosen(query).embed_query(query)

    def route_note(self, query: str) -> Any:
        chosen = self._chosen(query)
        return chosen.route_note(query) if chosen is self.base else None

    def forget_queries(self) -> None:
        self.base.forget_queries()
        self.other.forget_queries()


_USE: dict[str, Any] = {}


def multilingual_everywhere_lever(fallback: bool) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        if "vector" not in _USE:
            ws = os.environ["USE_WS"]   # the vault embedded with use-multilingual-v3 alone
            _USE["vector"] = wiki_retriever(Mindgraph(load_settings(ws)), embed=False).vector
        # a calibration file of its own: USE's levels are measured over its new pages (the
        # translator's dictionaries stay in the same folder)
        out = rebuilt(r)
        if r._calibration_file is not None:
            out._calibration_file = r._calibration_file.with_name("calibration-use-all.json")
        if r.vector is not None:
            use = _USE["vector"]
            other = VectorRetriever(use.provider, PagesOnly(use.store, r.pages),
                                    r.vector.languages)
            out.vector = MultilingualEverywhere(r.vector, other, fallback)  # type: ignore
        return out
    return make


def vector_lever(factor: float) -> Callable[[HybridRetriever], HybridRetriever]:
    return lambda r: rebuilt(r, cls=VectorFactor, factor=factor)


def same_language_lever(factor: float = 1.0) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        out = rebuilt(r, cls=VectorFactor, factor=factor)
        if r.vector is not None:
            out.vector = SameLanguageVector(r.vector, r.pages)  # type: ignore[assignment]
        return out
    return make


def length_lever(gamma: float) -> Callable[[HybridRetriever], HybridRetriever]:
    return paged_vector_lever(LengthNormalisedVector, gamma)


def content_words_lever(r: HybridRetriever) -> HybridRetriever:
    out = rebuilt(r)
    if r.vector is not None:
        out.vector = ContentWordsVector(r.vector)  # type: ignore[assignment]
    return out
