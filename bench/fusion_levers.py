"""Fusion and boost levers of bench/bench_retrieval_levers.py: how the retrievers' pages are
merged (keyword-only penalties, rank fusion per language), the graph boost's variants, a
named-title bonus, neighbour words and sub-word gating."""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.retrieval.analyzer import analyze  # noqa: E402
from mindgraph.graph.build import ENRICHED_PREFIX, EXTRACTED  # noqa: E402
from mindgraph.retrieval.hybrid import GRAPH_POOL, HybridRetriever, SearchOptions  # noqa: E402
import mindgraph.retrieval.analyzer as _analyzer  # noqa: E402
from lever_support import CJK, rebuilt  # noqa: E402


class WeakKeywordOnly(HybridRetriever):
    """A page the keyword side found with no vector score (not among the vector side's pages)
    or one below ``ratio`` × the vector side's best loses ``penalty`` of its fused score
    (release notes naming a paraphrase's words; ``trusted``: only when the model serving the
    query knows its language; README, "Retrieval levers for issue 13's open targets")."""

    ratio, penalty, trusted = 0.5, 0.5, False

    def _finish(self, query: str, candidates: dict[str, Any], top_k: int, *args: Any,
                **kw: Any) -> Any:
        vec = [c.sources["vector"]["score"] for c in candidates.values()
               if "vector" in c.sources]
        if vec and not (self.trusted and self._vector_factor(query) < 1):
            best = max(vec)
            for cand in candidates.values():
                if "keyword" not in cand.sources:
                    continue
                score = cand.sources.get("vector", {}).get("score")
                if score is None or score < self.ratio * best:
                    cand.score *= 1 - self.penalty
        return super()._finish(query, candidates, top_k, *args, **kw)


class ScoredWeakKeyword(HybridRetriever):
    """``WeakKeywordOnly`` (trusted), but a keyword hit beyond the vector side's ranking is
    judged by its own vector score (``VectorRetriever.page_scores``), and a page without
    vectors (not embedded yet: score 0) or whose score could not be read is left alone."""

    ratio, penalty = 0.5, 0.1

    def _finish(self, query: str, candidates: dict[str, Any], top_k: int, *args: Any,
                **kw: Any) -> Any:
        vec = [c.sources["vector"]["score"] for c in candidates.values()
               if "vector" in c.sources]
        if vec and self.vector is not None and self._vector_factor(query) >= 1:
            best = max(vec)
            missing = [p for p, c in candidates.items()
                       if "keyword" in c.sources and "vector" not in c.sources]
            try:
                found = self.vector.page_scores(query, missing)
            except Exception:
                found = {}
            for path, cand in candidates.items():
                if "keyword" not in cand.sources:
                    continue
                score = cand.sources.get("vector", {}).get("score", found.get(path))
                if score and score < self.ratio * best:
                    cand.score *= 1 - self.penalty
        return super()._finish(query, candidates, top_k, *args, **kw)


class VaultNoiseGap(HybridRetriever):
    """The noise filter's match height always the vault's calibrated gap (before session 22:
    a question over pages almost none of which are in its language did not take its own best
    cosine's height when lower)."""

    def _noise_gap(self, query: str, candidates: Any, zero: float) -> float:
        return self._levels(query).gap


class CrossLingualGraph(HybridRetriever):
    """The graph boost for every question (before session 22: also for a question over pages
    almost none of which are in its language whose words no dictionary translates for them,
    where BM25 weighs ``untranslated_keyword_factor`` of itself)."""

    def _boosts_graph(self, query: str) -> bool:
        return True


class Before22(VaultNoiseGap, CrossLingualGraph):
    """Session 22's three changes to fusion undone (its reading of Simplified characters
    stays: alone it moves no figure)."""


class GraphVariant(HybridRetriever):
    """The graph boost (``HybridRetriever._graph_boost``) with other rules for which linked
    candidates count and how much (session 23). Today every link counts both ways, from any
    of the first ``GRAPH_POOL`` candidates, at the linked candidate's score: the boost is
    full once they add up to the best's, so on dev-en-24 each of the first eight pages gets
    the full +0.2 and it separates none of them.

    - ``inbound`` / ``outbound``: the weight of a candidate that links to the page (cites
      it) / that the page links to (a hub listing strong pages gains by its own links);
    - ``seeds``: only the first ``seeds`` candidates lend a boost;
    - ``by_rank``: a candidate lends its score ÷ its rank (the first lends all of it);
    - ``mutual``: only candidates linked both ways count;
    - ``far``: the weight of a written link outside the section that matched the linking
      page (its candidate's section): a link in the passage that answers the query says
      more than one in a "see also" list elsewhere on the page;
    - ``full``: the lent scores' sum (as a share of the best's) at which the boost is full
      (1 today; session 7 measured 0.5–3 under its default);
    - ``power``: each lent score taken as (its share of the best's) ** power: with 2, two
      candidates at half the best's score lend 0.5, not 1, so weak neighbours add up less;
    - ``spread``: a candidate's loan divided among the pool pages it is linked with
      (PageRank's out-degree: a page linked with ten candidates vouches less for each)."""

    inbound, outbound, seeds, by_rank, mutual, far = 1.0, 1.0, GRAPH_POOL, False, False, 1.0
    full, power, spread = 1.0, 1.0, False

    def _graph_boost(self, candidates: dict[str, Any], intent: Any) -> None:
        boost = self.settings.graph_boost * intent.profile.graph
        if boost <= 0 or not candidates or self.graph is None:
            return
        order = sorted(candidates, key=lambda p: -candidates[p].score)[:GRAPH_POOL]
        best = candidates[order[0]].score
        if best <= 0:
            return
        rank = {p: i for i, p in enumerate(order, 1)}
        # page → the pool pages it links, each at the link's weight (``far`` or 1)
        cites: dict[str, dict[str, float]] = {p: {} for p in order}
        for path in order:
            matched = candidates[path].section_id
            for target, key, data in self.graph.out_links(path):
                if target in rank and target != path and (
                        data["kind"] == EXTRACTED or key.startswith(ENRICHED_PREFIX)):
                    near = data["kind"] != EXTRACTED or any(
                        s.get("section") == matched for s in data.get("sources", ()))
                    weight = 1.0 if near else self.far
                    cites[path][target] = max(cites[path].get(target, 0.0), weight)
        degree = Counter({p: len(c) for p, c in cites.items()})
        for path, cited in cites.items():
            degree.update(cited.keys())     # its links in, from the pages that cite it
        lifts = {}
        for path in order:
            lent: dict[str, float] = {}
            for other in order[:self.seeds]:
                if other == path:
                    continue
                into, out = cites[other].get(path, 0.0), cites[path].get(other, 0.0)
                weight = min(into, out) if self.mutual else max(
                    self.inbound * into, self.outbound * out)
                if weight > 0:
                    share = max(candidates[other].score, 0.0) / best
                    lent[other] = weight * share ** self.power / (
                        rank[other] if self.by_rank else 1) / (
                        degree[other] if self.spread else 1)
            if lent and self._clears_cutoff(candidates[path]):
                lifts[path] = (boost * min(1.0, sum(lent.values()) / self.full), len(lent))
        for path, (lift, linked) in lifts.items():
            if lift > 0:
                candidates[path].score += lift
                candidates[path].boosts["graph"] = round(lift, 4)
                candidates[path].sources.setdefault("graph", {"linked": linked})


class NamedTitle(HybridRetriever):
    """A page whose title the question names (the title's terms, at least ``min_terms`` of
    them, a run of the question's terms: "CSS snippets", 地图视图) gains ``bonus`` of its
    fused score; a one-word title counts only when ``min_terms`` is 1."""

    bonus, min_terms = 0.1, 2
    _titles: dict[str, tuple[str, ...]] | None = None

    def _named(self, query: str) -> set[str]:
        if self._titles is None:
            self._titles = {p: tuple(analyze(page.title, lang=page_language(page)))
                            for p, page in self.pages.items()}
        terms = tuple(analyze(query, query=True))
        text = " " + " ".join(terms) + " "
        return {p for p, t in self._titles.items()
                if len(t) >= self.min_terms and " " + " ".join(t) + " " in text}

    def _finish(self, query: str, candidates: dict[str, Any], top_k: int, *args: Any,
                **kw: Any) -> Any:
        for path in self._named(query) & candidates.keys():
            candidates[path].score *= 1 + self.bonus
        return super()._finish(query, candidates, top_k, *args, **kw)


class NamedTitleEarly(NamedTitle):
    """``NamedTitle``'s bonus given with the graph boost, before the reserved places
    (session 23; ``named…`` gave it last, so a named page overtook a reserved one: dev-en-24's
    CSS snippets 6th → 1st pushed its Glossary out of the first five)."""

    _query = ""
    exact = False      # the title's words as written (lower-cased), not its stems

    def _named(self, query: str) -> set[str]:
        if not self.exact:
            return super()._named(query)
        if self._titles is None:
            self._titles = {p: self._words(page.title, page_language(page))
                            for p, page in self.pages.items()}
        text = " " + " ".join(self._words(query, None)) + " "
        return {p for p, t in self._titles.items()
                if len(t) >= self.min_terms and " " + " ".join(t) + " " in text}

    @staticmethod
    def _words(text: str, lang: str | None) -> tuple[str, ...]:
        """Words as written, lower-cased; Japanese and Chinese (no spaces, no stems) by the
        analyser's terms, as ``NamedTitle`` reads them."""
        if lang in CJK or (lang is None and re.search("[\u3040-\u30ff\u4e00-\u9fff]", text)):
            return tuple(analyze(text, lang=lang) if lang else analyze(text, query=True))
        return tuple(re.findall(r"\w+", text.lower()))

    def _stage1(self, query: str, *args: Any, **kw: Any) -> Any:
        if kw.get("tag", "query") == "query":
            self._query = query
        return super()._stage1(query, *args, **kw)

    def _failure_bonus(self, candidates: dict[str, Any], intent: Any) -> None:
        for path in self._named(self._query) & candidates.keys():
            if self._clears_cutoff(candidates[path]):
                candidates[path].score *= 1 + self.bonus
        super()._failure_bonus(candidates, intent)

    def _finish(self, query: str, candidates: dict[str, Any], top_k: int, *args: Any,
                **kw: Any) -> Any:
        return HybridRetriever._finish(self, query, candidates, top_k, *args, **kw)


class PerLanguageFusion(HybridRetriever):
    """RRF (k = ``settings.rrf_k``) in place of the weighted fusion for Japanese and Chinese."""

    def _search(self, query: str, options: SearchOptions) -> Any:
        if self.query_language(query) in CJK:
            options = replace(options, fusion="rrf")
        return super()._search(query, options)


_LETTERS = re.compile(r"[a-z][a-z'-]+[a-z]")


class NeighbourWords(HybridRetriever):
    """BM25 also searches, at ``weight`` × cosine, the words of the vector side's first
    ``top`` pages that the query's own model puts nearest one of the query's words (cosine
    at least ``floor``; ``per_word`` of them per query word, words whose stem the query has
    left out): the vault's own word for a paraphrase ("relocate" → "move"), drawn only from
    pages the vector side already judged near, not from the whole vocabulary (session 18's
    English paraphrase misses; MiniLM's nearest words over the whole vault were noise)."""

    top, floor, weight, per_word = 5, 0.6, 0.3, 2

    def _keyword_query(self, query: str, degradation: list[str]) -> Any:
        extra, concepts = super()._keyword_query(query, degradation)
        if extra or concepts or self.vector is None or self.query_language(query) in CJK:
            return extra, concepts
        try:
            return self._neighbours(query), concepts
        except Exception:   # the vector side failing leaves BM25 as it was
            return extra, concepts

    def _neighbours(self, query: str) -> dict[str, float]:
        own = {w: _analyzer.analyze(w) for w in set(_LETTERS.findall(query.lower()))}
        own = {w: t for w, t in own.items() if t}
        stems = {t for terms in own.values() for t in terms}
        lang = self.query_language(query)
        found: dict[str, str] = {}
        for hit in self.vector.search(query, self.top):  # type: ignore[union-attr]
            page = self.pages.get(hit.path)
            if page is None or page_language(page) != lang:
                continue
            text = " ".join([page.title, *(f"{s.heading} {s.text}" for s in page.sections)])
            for word in set(_LETTERS.findall(text.lower())):
                terms = _analyzer.analyze(word)
                if len(terms) == 1 and terms[0] not in stems and terms[0] in self.keyword.vocab.ids:
                    found[word] = terms[0]
        if not own or not found:
            return {}
        provider = self.vector.query_provider(query)  # type: ignore[union-attr]
        asked, offered = list(own), list(found)
        vectors = self._embedded(provider, asked + offered)
        near = vectors[:len(asked)] @ vectors[len(asked):].T
        out: dict[str, float] = {}
        for row in near:
            for i in np.argsort(-row)[:self.per_word]:
                if row[i] >= self.floor:
                    term = found[offered[i]]
                    out[term] = max(out.get(term, 0.0), self.weight * float(row[i]))
        return out

    def _embedded(self, provider: Any, words: list[str]) -> np.ndarray:
        cache = _WORD_VECTORS.setdefault(provider.model_version, {})
        missing = [w for w in words if w not in cache]
        for start in range(0, len(missing), 256):
            batch = missing[start:start + 256]
            vectors = np.asarray(provider.embed_queries(batch), dtype=np.float32)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            cache.update(zip(batch, vectors))
        return np.vstack([cache[w] for w in words])


_WORD_VECTORS: dict[str, dict[str, np.ndarray]] = {}


class UngatedSubwords(HybridRetriever):
    """Sub-word lookups whatever language the pages are in (today only when at least a
    tenth of them are in the query's: retrieval/subwords.py)."""

    def _subword_terms(self, query: str) -> dict[str, str]:
        if self.settings.subword_weight <= 0:
            return {}
        return self.keyword.subword_terms(query, self.settings.subword_chars)


def weak_lever(ratio: float, penalty: float) -> Callable[[HybridRetriever], HybridRetriever]:
    """``WeakKeywordOnly`` when the model serving the query knows its language."""
    return lambda r: rebuilt(r, cls=WeakKeywordOnly, ratio=ratio, penalty=penalty,
                             trusted=True)
