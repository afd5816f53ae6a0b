"""Two-stage hybrid retrieval: the answer an agent gets, explained.

Stage 1: the intent router picks the mix; keyword (BM25) and vector retrieval run (in parallel
when the vector side waits on a server), each over-fetching max(top_k × 3, overfetch) pages
(each page represented by its best section); their scores are fused per page (weighted sum
of top-normalised scores, or RRF).
Stage 2: a 1-hop graph boost for candidates linked to at least two other candidates; a bonus for
troubleshooting pages on failure queries; on a definition question ("what is a vault") a bonus
for the candidates whose heading names the defined term (definition.py); recency by real dates
(recency.py: decay when the vault is dated, a boost of the newest matches when the query asks
for what is new); each weighty retriever's top pages (and those naming a defined term) kept
within the first results; then the minimum score, which never wipes out everything. Pass 2
(query expansion) runs only when the top score is low or the query names several concepts,
within a time bound.

Every result says which retrievers found it (rank and score in each) and which boosts applied;
the response carries the intent, expanded queries, an interpretation, follow-ups, a
``degradation`` list (vector store down → keyword-only, ...) and timings.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import heapq
import re
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from ..config import RetrievalSettings
from ..errors import QuotaExceeded, failure_note, in_general_terms, note_around
from ..graph.build import ENRICHED_PREFIX, EXTRACTED, KnowledgeGraph
from ..page.language import page_language
from ..page.model import Page
from ..providers.embedding.base import compresses_cosines, model_languages
from ..text.cjk import one_query
from .calibration import (MIN_PAGES, NOISE_SHARE, SAMPLE, SUMMARY_MIN_PAGES, Calibration,
                          background, calibration, drop_vector_noise, spread)
from .definition import name_defined_term
from .expand import QueryExpander, split_concepts
from .fusion import FUSIONS, NORMALIZERS, reserve_shares, spread_weights
from .keyword import Concept, KeywordIndex
from .native import NativeSearch, app_url
from .present import (follow_ups, interpretation, language_weight, snippet_for,
                      weak_interpretation)
from .query_language import query_language_in, vault_languages
from .recency import Recency, asks_for_recent
from .rerank import LLMReranker
from .results import Candidate, HybridResponse, HybridResult, SearchOptions
from .router import Intent, IntentRouter
from .subwords import speaks
from .translate import MIN_SHARE, QueryTranslator
from .twins import Twins, twin_ranking
from .vector import VectorRetriever, model_name
from .weakvector import penalise_unbacked

FAILURE_WORDS = ("troubleshoot", "error", "issue", "problem", "fix", "faq", "故障", "排除",
                 "トラブル", "エラー", "問題", "错误", "问题")
# a retriever whose weight is under this share of its own and BM25's (fusion.reserve_shares)
# reserves nothing (MiniLM on Japanese: noise)
RESERVE_MIN_SHARE = 0.2
GRAPH_POOL = 30           # the candidates the graph boost looks at (and among)
_POOL = cf.ThreadPoolExecutor(max_workers=4, thread_name_prefix="mindgraph-retrieval")
ANSWER_CACHE_SIZE = 512
# a search for fewer results is ranked as one for this many, then cut (every retrieval figure
# in the README is measured at 10): `-n 3` shows the first 3 of `-n 10`, not another order
RANK_DEPTH = 10
NO_TERMS = "the query has no letters or digits (only symbols or emoji): nothing was searched"
_HAS_WORD = re.compile(r"[^\W_]")
__all__ = ["HybridResponse", "HybridResult", "HybridRetriever", "SearchOptions"]


class HybridRetriever:
    """Keyword + vector + graph over one wiki."""

    def __init__(self, pages: Mapping[str, Page], keyword: KeywordIndex,
                 graph: KnowledgeGraph | None, vector: VectorRetriever | None,
                 settings: RetrievalSettings = RetrievalSettings(),
                 expander: QueryExpander | None = None, reranker: LLMReranker | None = None,
                 vector_error: str | None = None, vector_note: str | None = None,
                 calibration_file: Path | None = None, native: NativeSearch | None = None):
        self.pages = pages
        self.keyword = keyword
        self.graph = graph
        self.vector = vector
        self.vector_error = vector_error
        self.vector_note = vector_note     # e.g. changed pages not embedded yet
        self.settings = settings
        self.router = IntentRouter(settings.intents, (settings.keyword_weight,
                                                      settings.vector_weight))
        self.expander = expander or QueryExpander()
        self.recency = Recency(pages, settings.recency, settings.recency_lambda,
                               settings.evergreen_tags, settings.evergreen_pages,
                               settings.recency_lambdas)
        self.reranker = reranker
        self.native = native              # note apps' own search (native.py), if any
        self._native_pages: dict[tuple[str, str], str] = {}
        # Answers for this exact state of the indexes (a new state builds a new retriever);
        # agents repeat themselves, and a repeat costs a dictionary lookup.
        self._answers: OrderedDict[tuple[str, SearchOptions], HybridResponse] = OrderedDict()
        self._answers_lock = threading.Lock()
        self._calibration_file = calibration_file
        self._calibrations: dict[str, Calibration] = {}   # per model that served queries
        self._sample: list[str] | None = None
        self._backgrounds: dict[str, float] = {}
        self._translator: QueryTranslator | None = None
        self._twins: Twins | None = None
        self._languages: Counter[str] | None = None

    # -- the answer ----------------------------------------------------------------------
    def search(self, query: str, options: SearchOptions = SearchOptions(),
               use_cache: bool = True) -> HybridResponse:
        """Answer ``query`` (from the answer cache when this exact query was answered before)."""
        key = (query, options)
        if use_cache:
            started = time.perf_counter()
            with self._answers_lock:
                hit = self._answers.get(key)
                if hit is not None:
                    self._answers.move_to_end(key)
            if hit is not None:
                return replace(hit, cached=True, timings_ms={"total": _ms(started)})
        with one_query():       # the query's runs cut once, for this answer only
            response = self._search(query, options)
        if use_cache and not any(_TRANSIENT in d for d in response.degradation
                                 for _TRANSIENT in ("timed out", "failed")):
            with self._answers_lock:
                self._answers[key] = response
                while len(self._answers) > ANSWER_CACHE_SIZE:
                    self._answers.popitem(last=False)
        return response

    def _search(self, query: str, options: SearchOptions) -> HybridResponse:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        degradation: list[str] = [self.vector_note] if self.vector_note and \
            options.use_vector and self.vector is not None else []
        intent = self.router.route(query)
        timings["route"] = _ms(started)
        lang = self.query_language(query)
        if not _HAS_WORD.search(query):
            # "", "?!", an emoji: a vector of it is noise near every page (a query of stop
            # words such as "IT" is still searched, by meaning)
            timings["total"] = _ms(started)
            return HybridResponse(query, lang, intent, (), (),
                                  *self._explain_top([], lang, intent), (NO_TERMS,), timings)
        # ranked as for at least RANK_DEPTH results, then cut: the first 3 of a search for 3
        # are the first 3 of a search for 10 (the pools, hence the scores, depend on it)
        depth = max(options.top_k, RANK_DEPTH)
        fetch = max(depth * 3, self.settings.overfetch)
        shares: dict[str, float] = {}
        # once a query: its fusion and its results' matched terms both read them (a Han
        # query's words are segmented and looked up in the vault's words for each)
        subwords = self._subword_terms(query)
        candidates = self._stage1(query, intent, fetch, options, timings, degradation,
                                  shares=shares, subwords=subwords)
        picks = self._reserve_picks(candidates, shares, lang) if options.reserve else []
        expanded: list[str] = []
        top = max((c.score for c in candidates.values()), default=0.0)
        if options.expansion and self._wants_expansion(query, top):
            expanded = self._pass2(query, intent, fetch, options, candidates, timings,
                                   degradation)
        t = time.perf_counter()
        # not for the vector method alone (it is ranked as it is), nor on a query for what is
        # new, whose pages are admitted by their dates rather than their words
        zero = self._background(query) if options.use_keyword and \
            self.settings.drop_vector_noise and not asks_for_recent(query) else None
        noise = None if zero is None else \
            zero + NOISE_SHARE * self._noise_gap(query, candidates, zero)
        if noise is not None:
            drop_vector_noise(candidates, noise)
        if options.use_keyword:
            self.recency.add_newest(query, candidates, self.keyword,
                                    self.router.weights(intent,
                                                        self.settings.blend_intent_weights)[0])
        if options.graph_boost and self.graph is not None and self._boosts_graph(query):
            self._graph_boost(candidates, intent)
        self._failure_bonus(candidates, intent)
        named = name_defined_term(query, candidates, self.pages, self.settings.definition_bonus,
                                  self.settings.min_score, lang)[:self.settings.reserve_top]
        by_date = self.recency.apply(query, candidates)
        # the sections naming a defined term first: the retrievers' own picks would push them
        # out of the first places the bonus gave them
        reserved = [p for p in dict.fromkeys(named + picks) if p not in by_date]
        self._prefer_language(candidates, lang,
                              depth + self.settings.reserve_within + 1, reserved)
        self._reserve(candidates, reserved)
        timings["stage2"] = _ms(t)
        # after the reserved places: a keyword pick the vector side does not back may lose its
        # place (release notes BM25 reserved on paraphrases: the measured gain, README)
        if options.use_keyword and self.vector is not None and \
                self._vector_factor(query) >= 1 and not self._fills_missing(query):
            vector = self.vector
            penalise_unbacked(candidates, self.settings.keyword_only_penalty,
                              lambda paths: vector.page_scores(query, paths))
        # a page the twin ranking found has the words of the query's translation
        similarities = [c.sources["vector"]["score"] for c in candidates.values()
                        if "vector" in c.sources]
        weak = None         # the best similarity of results that are all noise by meaning
        if options.use_keyword and similarities and not any(
                "keyword" in c.sources or "twin" in c.sources for c in candidates.values()):
            _note(degradation, f"no page contains the query's words: these results are by "
                               f"meaning alone (best similarity {max(similarities):.2f})")
            # the noise filter kept them only because it keeps at least one page: the first
            # is no match to announce ("qwertzuiop flibbertigibbet" → 'Credits', 0.20)
            if noise is None and zero is None and options.use_keyword and \
                    self.settings.drop_vector_noise and not asks_for_recent(query):
                noise = self._summary_noise(query)      # a vault too small to calibrate
            if noise is not None and max(similarities) < noise:
                weak = max(similarities)
        reranks = options.rerank and self.reranker is not None
        results = self._finish(query, candidates, depth if reranks else options.top_k,
                               degradation, subwords)
        if reranks and len(results) > 1:
            t = time.perf_counter()
            results, note = self.reranker.rerank(query, results, self.settings.rerank_top,
                                                 self.settings.rerank_timeout_s, _POOL)
            if note:
                _note(degradation, note)
            timings["rerank"] = _ms(t)
            results = results[:options.top_k]
        timings["total"] = _ms(started)
        return HybridResponse(query, lang, intent, tuple(results), tuple(expanded),
                              *self._explain_top(results, lang, intent, weak),
                              tuple(degradation), timings)

    # -- stage 1 --------------------------------------------------------------------------
    def _stage1(self, query: str, intent: Intent, fetch: int, options: SearchOptions,
                timings: dict[str, float], degradation: list[str],
                tag: str = "query", shares: dict[str, float] | None = None,
                subwords: dict[str, str] | None = None) -> dict[str, Candidate]:
        calls: dict[str, Callable[[], list[tuple[str, float, str | None]]]] = {}
        started = time.perf_counter()
        native = self.native.start(query, fetch) if options.use_native and \
            self.native is not None else None
        if options.use_keyword:
            extra, concepts = self._keyword_query(query, degradation)
            if self._twin_weight(query) > 0 and not extra and not concepts:
                calls["twin"] = lambda: self._twin_hits(query, fetch)
            concepts = concepts + self.keyword.subword_concepts(
                self._subword_terms(query) if subwords is None else subwords,
                self.settings.subword_weight)
            calls["keyword"] = lambda: [(h.path, h.score, h.section_id)
                                        for h in self.keyword.search(query, fetch, extra,
                                                                     concepts)]
        if options.use_vector:
            if self.vector is None:
                why = self.vector_error or "no vector store configured"
                _note(degradation, note_around(why, "vector retrieval unavailable ({}): "
                                                         "keyword-only"))
            else:
                calls["vector"] = lambda: [(h.path, h.score, h.section_id)
                                           for h in self.vector.search(query, fetch)]
        # In parallel when the vector search waits on a server (a remote model or pgvector):
        # keyword search runs during the round trip. With the local model and the embedded
        # store both are CPU work in this process, and threads only add GIL hand-offs:
        # on the vault, never-seen queries took 4.55 ms median (p95 6.9) in parallel and
        # 4.44 ms (p95 5.7) in turn (python bench/bench_stage1.py --queries 1800).
        parallel = ("vector" in calls and self.vector.waits_on_io  # type: ignore[union-attr]
                    and not self.vector.is_cached(query))  # type: ignore[union-attr]
        rankings: dict[str, list[tuple[str, float, str | None]]] = {}
        for name, (outcome, elapsed) in _run_all(calls, parallel).items():
            if isinstance(outcome, QuotaExceeded):  # the caller's own limit (a cloud query
                raise outcome                       # embedding): said to it, not degraded
            if isinstance(outcome, Exception):  # a failing retriever never fails the search
                _note(degradation, failure_note(f"{name} retrieval", outcome,
                                                "results come from the other retrievers"))
                continue
            rankings[name] = outcome
            timings[name if tag == "query" else f"{name}:{tag}"] = elapsed
        if native is not None:
            found = self.native.finish(native, started, self.pages,  # type: ignore[union-attr]
                                       self._native_pages, degradation)
            if found is not None:
                rankings["native"] = found
                timings["native" if tag == "query" else f"native:{tag}"] = _ms(started)
        rankings = {k: [r for r in v if r[0] in self.pages] for k, v in rankings.items()}
        served = self._served_model(query, tag, degradation) if "vector" in rankings else None
        keyword_w, vector_w = self.router.weights(intent, self.settings.blend_intent_weights)
        weights = {"keyword": keyword_w * self._keyword_factor(query),
                   "vector": vector_w * self._vector_factor(query)}
        if "vector" not in rankings:
            weights = {"keyword": 1.0}
        if "keyword" not in rankings and "vector" in rankings:
            weights = {"vector": 1.0}
        if "native" in rankings:
            weights["native"] = self.native.weight  # type: ignore[union-attr]
        if rankings.get("twin"):
            weights["twin"] = weights.get("keyword", 0.0) * self._twin_weight(query)
        else:
            rankings.pop("twin", None)
        if shares is not None:
            shares.update(reserve_shares({name: weights.get(name, 0.0) for name in rankings}))
        fusion = FUSIONS[options.fusion or self.settings.fusion]
        normalization, fill = self._fusion_fit(query, rankings)
        kwargs: dict[str, Any] = {"k": self.settings.rrf_k} if fusion is FUSIONS["rrf"] else \
            {"normalize": NORMALIZERS[normalization],
             "floors": self._floors(query, rankings, normalization)}
        scored = {k: [(p, s) for p, s, _ in v] for k, v in rankings.items()}
        if self.settings.spread_weights and fusion is FUSIONS["weighted"]:
            weights = self._fit_weights(query, scored, weights)
        if fill and len(scored) == 2:
            self._fill_missing(query, scored, degradation)
        fused = fusion(scored, weights, **kwargs)
        candidates: dict[str, Candidate] = {}
        for name in ("keyword", "vector", "native", "twin"):
            for rank, (path, score, section) in enumerate(rankings.get(name, []), 1):
                cand = candidates.setdefault(path, Candidate(score=fused.get(path, 0.0)))
                cand.sources[name] = {"rank": rank, "score": round(float(score), 4)}
                if name == "vector" and served:
                    cand.sources[name]["model"] = served
                if cand.section_id is None or (name == "vector" and intent.name != "location"
                                               and "keyword" not in cand.sources):
                    cand.section_id = section
                if tag not in cand.found_by:
                    cand.found_by.append(tag)
        return candidates

    def _served_model(self, query: str, tag: str, degradation: list[str]) -> str | None:
        """The name of the model whose vectors answered ``query`` (with one model per
        language; None with one model), saying why when it is not the query's own."""
        vector = self.vector
        if vector is None or getattr(vector.provider, "route_order", None) is None:
            return None
        try:
            served = model_name(vector.query_provider(query).model_version)
            note = vector.route_note(query) if tag == "query" else None
        except Exception:   # the vector side's own failure is reported by its search
            return None
        if note:
            _note(degradation, note)
        return served

    def _twin_weight(self, query: str) -> float:
        """The weight of the twin ranking for ``query``'s language, against BM25's 1
        (``retrieval.twin_weights``; 0 for a language not named there)."""
        return float(self.settings.twin_weights.get(self.query_language(query), 0.0))

    def _twin_hits(self, query: str, fetch: int) -> list[tuple[str, float, str | None]]:
        """For a Chinese or Japanese question in a vault of translated pages: BM25 of its
        English translation over the English pages, each credited to its twin in the
        question's language (twins.py); [] otherwise."""
        lang = self.query_language(query)
        if self._twins is None:
            self._twins = Twins(self.pages)
        if not self._twins.count:
            return []
        english = self.translator.english_terms(query)
        if not english:
            return []
        return twin_ranking(self.keyword.search("", fetch * 4, english), self._twins, lang,
                            fetch)

    def query_language(self, query: str) -> str:
        """``query``'s language in these pages (query_language.py): one decision for the
        answer's language, the twin ranking and the translation of its words."""
        return query_language_in(query, self.page_languages)

    def page_languages(self) -> Counter[str]:
        """How many pages are written in each language (read on first use, for a query of
        Han alone: query_language.py). A retriever serves one state of the pages (a change
        builds a new one, as for its answer cache); a count of another number of pages is
        read again."""
        counts = self._languages
        if counts is None or sum(counts.values()) != len(self.pages):
            counts = self._languages = vault_languages(self.pages.values())
        return counts

    @property
    def translator(self) -> QueryTranslator:
        """What translates a question's words for BM25 (built on first use)."""
        if self._translator is None:
            self._translator = QueryTranslator(self.pages, self.keyword, cache_dir=(
                self._calibration_file.parent if self._calibration_file else None),
                page_languages=self.page_languages)
        return self._translator

    def _subword_terms(self, query: str) -> dict[str, str]:
        """The vault's words a short Han word of ``query`` no page has is also searched as
        (retrieval/subwords.py; ``retrieval.subword_weight``), when the vault speaks the
        query's language: {霜冻: 霜}."""
        if self.settings.subword_weight <= 0:
            return {}
        found = self.keyword.subword_terms(query, self.settings.subword_chars)
        if found and not speaks(self.query_language(query), self.page_languages()):
            return {}
        return found

    def _keyword_query(self, query: str, degradation: list[str]
                       ) -> tuple[dict[str, float], list[Concept]]:
        """What BM25 searches for beside the query's own terms: its words' translations when
        almost no page is in its language (retrieval/translate.py;
        ``retrieval.translate_queries``), one concept per word."""
        if not self.settings.translate_queries:
            return {}, []
        try:
            added = self.translator.added_words(query)
            terms = self.translator.added_terms(query)
            concepts = self.translator.added_concepts(query)
        except Exception as exc:   # a missing or changed dictionary: search untranslated
            _note(degradation, note_around(in_general_terms(exc), "query translation failed "
                                           "({}); keyword search used the query's own words "
                                           "only"))
            return {}, []
        if added:
            shown = ", ".join(added[:8]) + (", ..." if len(added) > 8 else "")
            _note(degradation, f"almost no page is in the query's language: keyword search "
                               f"also looked for its words in "
                               f"{'/'.join(self.translator.languages(query))}"
                               f" ({shown})")
        return terms, concepts

    def _levels(self, query: str) -> Calibration:
        """A typical query's background and best cosine on this vault (calibration.py), for
        the model that embeds ``query`` (with one model per language, each has its own)."""
        served = self.vector.query_provider(query).model_version  # type: ignore[union-attr]
        found = self._calibrations.get(served)
        if found is None:
            found = self._calibrations[served] = calibration(
                self.vector, self.pages, self._calibration_file,  # type: ignore[arg-type]
                served=served)
        return found

    def _background(self, query: str) -> float | None:
        """The query's zero point: the median cosine of a fixed sample of pages to it (None
        without vectors, in a vault too small to calibrate, or when the vector side fails)."""
        if self.vector is None:
            return None
        found = self._backgrounds.get(query)
        if found is None:
            try:
                if self._levels(query).gap <= 0:
                    return None
                if self._sample is None:
                    self._sample = spread(list(self.pages), SAMPLE)
                found = background(self.vector, query, self._sample)
            except Exception:   # a refinement: the vector side's own failure is reported
                return None
            if len(self._backgrounds) >= ANSWER_CACHE_SIZE:
                self._backgrounds.clear()
            self._backgrounds[query] = found
        return found

    def _summary_noise(self, query: str) -> float | None:
        """The noise level of ``query`` for the summary alone, in a vault under MIN_PAGES
        (from SUMMARY_MIN_PAGES): measured as in a calibrated vault, from every page, but
        nothing is dropped or ranked by it. Without it a small vault named a best match
        for nonsense ("blargle fnord wibble" → 'Bases syntax › Boolean operators' on 10
        Help pages; bench/bench_small_vault_weak.py)."""
        if self.vector is None or not SUMMARY_MIN_PAGES <= len(self.pages) < MIN_PAGES:
            return None
        try:
            served = self.vector.query_provider(query).model_version
            levels = calibration(self.vector, self.pages, self._calibration_file,
                                 served=served, min_pages=SUMMARY_MIN_PAGES)
            if levels.gap <= 0:
                return None
            zero = background(self.vector, query, spread(list(self.pages), SAMPLE))
        except Exception:   # a refinement: the vector side's own failure is reported
            return None
        return zero + NOISE_SHARE * levels.gap

    def _fusion_fit(self, query: str, rankings: Mapping[str, Any]) -> tuple[str, bool]:
        """The normalisation and whether to fill missing scores, for this query's model: the
        configured ones, but for a model whose cosines crowd into a narrow band
        (``retrieval.compressed_cosine_fusion``) ``calibrated`` in place of ``max`` and the
        missing scores filled. Under ``max`` such a model gives its whole pool nearly its
        top's score (multilingual-e5-small: the 30th page 0.974 of the first), so a page
        BM25 ranks first and the model left out of its 30 fell below pages both found. With
        ``embedding.languages: {ja: e5, zh: e5}``, held-out Japanese / Chinese hybrid MRR@10
        0.900 / 0.904 → 0.946 / 0.915, dev equal (README, Fusion options)."""
        normalization, fill = self.settings.normalization, self.settings.fill_missing_scores
        if not (self.settings.compressed_cosine_fusion and "vector" in rankings
                and len(rankings) >= 2 and self.vector is not None):
            return normalization, fill
        try:
            compressed = compresses_cosines(self.vector.query_provider(query))
        except Exception:   # the vector side's own failure is reported by its search
            return normalization, fill
        if not compressed:
            return normalization, fill
        return ("calibrated" if normalization == "max" else normalization), True

    def _fills_missing(self, query: str) -> bool:
        """Whether this query's fusion gives the pages one retriever missed the other's actual
        score (``_fusion_fit``): then the vector side has already weighed the keyword hits it
        did not rank, and ``keyword_only_penalty`` would count its verdict twice."""
        return self._fusion_fit(query, ("keyword", "vector"))[1]

    def _floors(self, query: str, rankings: Mapping[str, Any],
                normalization: str) -> dict[str, float]:
        """Each retriever's floor for the normaliser: with ``calibrated`` normalisation, the
        query's background for the vector side (calibration.py)."""
        zero = self._background(query) if "vector" in rankings and \
            normalization == "calibrated" else None
        return {} if zero is None else {"vector": zero}

    def _fit_weights(self, query: str, scored: Mapping[str, list[tuple[str, float]]],
                     weights: dict[str, float]) -> dict[str, float]:
        """The mix fitted to this query's rankings (fusion.spread_weights): the vector side's
        fall measured from the query's background, BM25's from 0. On the dev / held-out
        questions MRR@10 0.868 → 0.880 / 0.918 → 0.916, hit@1 0.825 → 0.850 / 0.887 = 0.887,
        SciFact nDCG@10 0.723 → 0.724 (README, Fusion options)."""
        if len(scored) < 2:
            return weights
        zero = self._background(query) if "vector" in scored else None
        return spread_weights(scored, weights, {} if zero is None else {"vector": zero},
                              ("keyword", "vector", "twin"))

    def _fill_missing(self, query: str, scored: dict[str, list[tuple[str, float]]],
                      degradation: list[str]) -> None:
        """Give every page either retriever found the other's actual score for it too."""
        union = {p for ranking in scored.values() for p, _ in ranking}
        lookups = {"keyword": self.keyword.page_scores, "vector": self.vector.page_scores}
        for name, ranking in scored.items():
            missing = union - {p for p, _ in ranking}
            if not missing:
                continue
            try:
                found = lookups[name](query, missing)  # type: ignore[operator]
            except Exception as exc:  # the fill is a refinement: never fail the search
                _note(degradation, failure_note(f"{name} scores of the other retriever's "
                                                f"pages", exc, "fused without them"))
                continue
            ranking.extend(sorted(found.items(), key=lambda item: -item[1]))

    def _vector_factor(self, query: str) -> float:
        """Less vector weight for a query in a language the embedding model was not trained
        on (all-MiniLM-L6-v2 knows English only: its vectors of Japanese text are noise), or
        over pages in such a language (an English question over a vault of Japanese pages:
        MiniLM's vectors of the pages are noise then).

        With one model per language, more vector weight when a multilingual model serves the
        query (``retrieval.multilingual_vector_factor``): decided by the model whose vectors
        answer, not by the question's language."""
        if self.vector is None:
            return 1.0
        try:
            provider = self.vector.query_provider(query)
        except Exception:   # the vector side's own failure is reported by its search
            return 1.0
        languages = model_languages(provider)
        if languages is None:
            routed = getattr(self.vector.provider, "route_order", None) is not None
            return self.settings.multilingual_vector_factor if routed else 1.0
        needed = {self.query_language(query), *self.translator.languages(query)}
        if needed <= set(languages):
            return 1.0
        return self.settings.unsupported_language_vector_factor

    def _noise_gap(self, query: str, candidates: Mapping[str, Candidate], zero: float
                   ) -> float:
        """How far a match stands above ``query``'s zero point: the gap measured on the
        vault (calibration.py), from pseudo-queries in the pages' own languages. A question
        over pages almost none of which are in its language meets them only across
        languages, where every cosine is lower: its own best page's height is its gap when
        lower (a Japanese question over a Chinese vault had its right page, the vector side's
        first, dropped as noise with every other page the keyword side did not find)."""
        gap = self._levels(query).gap
        if self.translator.shares.get(self.query_language(query), 0.0) >= MIN_SHARE:
            return gap
        best = max((c.sources["vector"]["score"] for c in candidates.values()
                    if "vector" in c.sources), default=zero + gap)
        return min(gap, max(best - zero, 0.0))

    def _boosts_graph(self, query: str) -> bool:
        """Whether ``query``'s candidates get the graph boost: not when BM25 was discounted
        for want of a translation (``_keyword_factor``). The candidates are then the vector
        side's, and the pages many of them link to (the glossary, the CLI, the settings) were
        lifted over them: cross-lingual MRR@10 of Japanese questions over the Chinese pages
        dev / held-out 0.722 / 0.788 → 0.778 / 0.829, Chinese over the Japanese pages 0.722 /
        0.832 → 0.722 / 0.833 (README Benchmarks, "Japanese and Chinese questions over each
        other's pages")."""
        return self._keyword_factor(query) >= 1

    def _keyword_factor(self, query: str) -> float:
        """Less BM25 weight for a query over pages almost none of which are in its language
        when no dictionary translates its words for them (a Japanese question over a Chinese
        vault: BM25 matches only the Han words both languages happen to write alike) and the
        model serving the vector side knows the query's language
        (``retrieval.untranslated_keyword_factor``)."""
        factor = self.settings.untranslated_keyword_factor
        if factor >= 1 or self.vector is None or not self.settings.translate_queries:
            return 1.0
        try:
            lang = self.query_language(query)
            if self.translator.shares.get(lang, 0.0) >= MIN_SHARE or \
                    self.translator.languages(query):
                return 1.0
            languages = model_languages(self.vector.query_provider(query))
        except Exception:   # the vector side's own failure is reported by its search
            return 1.0
        return factor if languages is None or lang in languages else 1.0

    def _wants_expansion(self, query: str, top: float) -> bool:
        mode = self.settings.expansion
        if mode == "off":
            return False
        return mode == "always" or top < self.settings.expansion_threshold or bool(
            split_concepts(query))

    def _pass2(self, query: str, intent: Intent, fetch: int, options: SearchOptions,
               candidates: dict[str, Candidate], timings: dict[str, float],
               degradation: list[str]) -> list[str]:
        t = time.perf_counter()
        # in this context: the caller's quota is charged for the LLM call (quotas/)
        job = _POOL.submit(contextvars.copy_context().run, self.expander.expand_noted, query)
        try:
            extra, note = job.result(timeout=self.settings.expansion_timeout_s)
        except cf.TimeoutError:
            _note(degradation, f"query expansion timed out after "
                               f"{self.settings.expansion_timeout_s:g} s; pass 1 results only")
            return []
        except QuotaExceeded:       # the caller's own limit: said to it, not degraded
            raise
        except Exception as exc:
            _note(degradation, f"query expansion failed ({type(exc).__name__}); "
                               f"pass 1 results only")
            return []
        if note:
            _note(degradation, note)
        for sub in extra:
            found = self._stage1(sub, intent, fetch, options, timings, degradation, tag=sub)
            for path, cand in found.items():
                mine = candidates.get(path)
                if mine is None:
                    # A page only an expansion found enters below the original's best.
                    cand.score *= 0.9
                    candidates[path] = cand
                    continue
                mine.score = max(mine.score, 0.9 * cand.score)
                for name, value in cand.sources.items():
                    mine.sources.setdefault(name, value)
                mine.found_by.extend(x for x in cand.found_by if x not in mine.found_by)
        timings["expansion"] = _ms(t)
        return extra

    # -- stage 2 --------------------------------------------------------------------------
    def _graph_boost(self, candidates: dict[str, Candidate], intent: Intent) -> None:
        """Up to ``graph_boost`` for each of the first ``GRAPH_POOL`` candidates, in proportion
        to the scores of the candidates it links with, as a share of the best score (full
        when they add up to the best's): a page among strong candidates gains, one linked only
        to weak ones (a hub that links to everything) gains little. The former rule, +0.1
        for two linked candidates of any score, lifted hubs over pages with few links; the
        share measured 0.855 → 0.868 dev and 0.914 → 0.918 held-out MRR@10 (README)."""
        boost = self.settings.graph_boost * intent.profile.graph
        if boost <= 0 or not candidates:
            return
        order = sorted(candidates, key=lambda p: -candidates[p].score)
        pool = set(order[:GRAPH_POOL])
        best = candidates[order[0]].score
        if best <= 0:
            return
        linked = self._linked_within(pool)
        lifts = {}
        for path in pool:
            neighbours = linked[path] - {path}
            mass = sum(candidates[n].score for n in neighbours) / best
            if neighbours and self._clears_cutoff(candidates[path]):
                lifts[path] = (boost * min(1.0, mass), len(neighbours))
        for path, (lift, linked) in lifts.items():   # from the scores before any lift
            if lift > 0:
                candidates[path].score += lift
                candidates[path].boosts["graph"] = round(lift, 4)
                # the graph ranks nothing: it says how many candidates the page links with
                candidates[path].sources.setdefault("graph", {"linked": linked})

    def _clears_cutoff(self, cand: Candidate) -> bool:
        """A boost reorders pages retrieval found; it never carries a page over the minimum
        score by itself (a page the vector side alone found far below the best, near
        several hubs, was lifted over the cutoff by the graph boost)."""
        return cand.score >= self.settings.min_score

    def _reserve_picks(self, candidates: dict[str, Candidate], shares: Mapping[str, float],
                       lang: str = "other") -> list[str]:
        """The pages to keep near the top: the ``reserve_top`` best of each retriever that
        carries real weight, as ranked for the query itself (before any expansion); those in
        another language than the query's ``lang`` left out when the vault speaks it
        (``retrieval.reserve_same_language``): a page the language preference put below the
        query's own would be lifted back over it."""
        top = self.settings.reserve_top
        picks: list[str] = []
        for name, share in shares.items():
            if top <= 0 or share < RESERVE_MIN_SHARE:   # e.g. MiniLM on Japanese: noise
                continue
            ranked = sorted((p for p, c in candidates.items()
                             if 0 < c.sources.get(name, {}).get("rank", 0) <= top),
                            key=lambda p: candidates[p].sources[name]["rank"])
            picks.extend(p for p in ranked if p not in picks)
        if picks and self._reserves_own_language_only(lang):
            picks = [p for p in picks if page_language(self.pages[p]) == lang]
        return picks

    def _reserves_own_language_only(self, lang: str) -> bool:
        return self.settings.reserve_same_language and lang != "other" and \
            self.settings.other_language_factor < 1.0 and speaks(lang, self.page_languages())

    def _reserve(self, candidates: dict[str, Candidate], picks: list[str]) -> None:
        """Keep ``picks`` within the first ``reserve_within`` results.

        Fusion favours pages that both retrievers found: a page one of them ranks first but
        the other missed gets only that one's share and can fall out of the answer entirely
        (a paraphrase whose words the page does not use, found by meaning alone). Picks that
        fell below take the last places of the first ``reserve_within``, with scores between
        their neighbours' (the lift is shown as the ``reserved`` boost), so the order stays
        the order of the scores and the pages above them keep their places; the pages that
        make room are the lowest of those that were not picked. On the dev and
        held-out questions top 2 within 5 raised recall@5 0.879 → 0.904 and 0.938 → 0.963
        and never changed hit@1 (README)."""
        within = self.settings.reserve_within
        if not picks or within <= 0 or len(candidates) <= within:
            return
        order = sorted(candidates, key=lambda p: (-candidates[p].score, p))
        chosen = [p for p in picks if p in candidates][:within]
        top = set(chosen) | set([p for p in order if p not in chosen][:within - len(chosen)])
        tail = [p for p in order if p not in top]
        if not tail:
            return
        # Picks ranked below a page that leaves the first places: a pick already there is
        # never pushed out by a late one (a non-pick gives up its place instead).
        after = order.index(tail[0])
        late = [p for p in chosen if order.index(p) > after]
        if not late:
            return
        head = [p for p in order[:after] if p in top]
        low = candidates[tail[0]].score
        # with no kept page above them, the picks go just above the best page left out
        high = candidates[head[-1]].score if head else low + 0.01
        for j, path in enumerate(late):
            cand = candidates[path]
            lifted = max(cand.score, low + (high - low) * (len(late) - j) / (len(late) + 1))
            cand.boosts["reserved"] = round(lifted - cand.score, 4)
            cand.score, cand.tier = lifted, 1
        for path in tail:
            candidates[path].tier = 2       # equal scores: reserved pages go first

    def _prefer_language(self, candidates: dict[str, Candidate], lang: str, keep: int,
                         picks: list[str]) -> None:
        """Pages in another language than the query's are multiplied by
        ``retrieval.other_language_factor``: in a vault with translations, an English
        question wants the English page, not its Chinese twin with the same English title.

        A page's language is read (which reads its text) only for the pages that can still
        place among the first ``keep`` and for ``picks`` (whose scores ``_reserve`` reads):
        going down the scores, once ``keep`` pages scored at least s after the factor, a page
        scoring below s before it stays below them whatever its language, so its score is
        left as it was; the order of the first ``keep`` and every pick's score are exactly
        those of factoring every candidate (the answer has at most ``keep`` - 1 places
        before ``_reserve``'s first page left out)."""
        factor = self.settings.other_language_factor
        if factor >= 1.0 or lang == "other":
            return
        needed = keep + len(picks)
        placed: list[float] = []        # a min-heap of the best ``needed`` scores after it
        for path in sorted(candidates, key=lambda p: -candidates[p].score):
            cand = candidates[path]
            if len(placed) == needed and 0.0 <= cand.score < placed[0] and path not in picks:
                continue
            weight = language_weight(self.pages[path], lang, factor)
            if weight < 1.0:
                cut = cand.score * (1.0 - weight)
                cand.score -= cut
                cand.boosts["other_language"] = round(-cut, 4)
            if len(placed) < needed:
                heapq.heappush(placed, cand.score)
            elif cand.score > placed[0]:
                heapq.heapreplace(placed, cand.score)

    def _linked_within(self, pool: set[str]) -> dict[str, set[str]]:
        """Each page of ``pool`` → the pages of ``pool`` it links to or is linked from (real
        links and enrichment's, not shared tags). Read from the pool's own links out, so the
        cost follows the candidates' links, not the in-links of a hub (at 100,000 notes a page
        linked from thousands); a link into the pool is some pool page's link out."""
        graph = self.graph
        assert graph is not None
        linked: dict[str, set[str]] = {path: set() for path in pool}
        for path in pool:
            for target, key, data in graph.out_links(path):
                if target in linked and (data["kind"] == EXTRACTED
                                         or key.startswith(ENRICHED_PREFIX)):
                    linked[path].add(target)
                    linked[target].add(path)
        return linked

    def _failure_bonus(self, candidates: dict[str, Candidate], intent: Intent) -> None:
        bonus = intent.profile.failure_pages
        if bonus <= 0:
            return
        for path, cand in candidates.items():
            if not self._clears_cutoff(cand):
                continue
            page = self.pages[path]
            kind = str(page.frontmatter.get("type", "")).lower()
            name = (page.title + " " + path).lower()
            if kind == "troubleshooting" or any(w in name for w in FAILURE_WORDS):
                cand.score += bonus
                cand.boosts["failure_page"] = bonus

    # -- presentation --------------------------------------------------------------------
    def _finish(self, query: str, candidates: dict[str, Candidate], top_k: int,
                degradation: list[str], subwords: dict[str, str]) -> list[HybridResult]:
        ranked = sorted(candidates.items(), key=lambda kv: (-kv[1].score, kv[1].tier, kv[0]))
        kept = [(p, c) for p, c in ranked if c.score >= self.settings.min_score]
        if ranked and not kept:
            _note(degradation, f"no result scored above the minimum "
                               f"{self.settings.min_score:g}; showing the best ones anyway")
            kept = ranked[:min(3, top_k)]
        terms = [*self.keyword.query_terms(query), *subwords]
        results = []
        for path, cand in kept[:top_k]:
            page = self.pages[path]
            section = page.section(cand.section_id) if cand.section_id else None
            results.append(HybridResult(
                page=path, title=page.title, section_id=cand.section_id,
                heading=section.heading if section else "",
                snippet=snippet_for(page, cand.section_id, terms,
                                    self.keyword.embedded.get((path, cand.section_id or ""), ())),
                score=cand.score,
                sources=cand.sources, boosts=cand.boosts, found_by=tuple(cand.found_by),
                url=app_url(page)))
        return results

    def _explain_top(self, results: list[HybridResult], lang: str, intent: Intent,
                     weak: float | None = None) -> tuple[str, tuple[str, ...]]:
        """The summary line and the follow-ups; ``weak``: the best similarity when no result
        has the query's words and all are below the vector side's noise level."""
        if not results:
            return ({"ja": "該当するページは見つかりませんでした。", "zh": "没有找到相关页面。"}
                    .get(lang, "No page matches."), ())
        top = results[0]
        if weak is not None:
            return weak_interpretation(lang, top.title, top.heading, weak), ()
        page = self.pages[top.page]
        neighbours: list[str] = []
        if self.graph is not None and top.page in self.graph:
            near = [n for n in sorted(self.graph.neighbours(top.page))
                    if n in self.pages and n != top.page]
            neighbours = [self.pages[n].title for n in self._first_in_language(near, lang, 2)]
        sections = [s.heading for s in page.sections if s.heading and s.heading != top.heading]
        return (interpretation(lang, top.title, top.heading, intent.name),
                tuple(follow_ups(lang, top.title, neighbours, sections)))

    def _first_in_language(self, paths: list[str], lang: str, count: int) -> list[str]:
        """The first ``count`` of ``paths`` with pages in ``lang`` first (a Chinese answer
        names Chinese titles), the others after them, each group in its order. A page's
        language is read only until ``count`` are found: the top page of a tag shared by
        thousands of pages has thousands of neighbours, and reading a page's language reads
        its text."""
        if lang == "other":
            return paths[:count]
        same: list[str] = []
        for path in paths:
            if page_language(self.pages[path]) == lang:
                same.append(path)
                if len(same) == count:
                    return same
        return (same + [p for p in paths if p not in same])[:count]


def _run_all(calls: Mapping[str, Callable[[], Any]], parallel: bool
             ) -> dict[str, tuple[Any, float]]:
    """Each call's result (or the exception it raised) and its milliseconds."""
    if parallel and len(calls) > 1:
        jobs = {name: _POOL.submit(contextvars.copy_context().run, _timed_outcome, call)
                for name, call in calls.items()}
        return {name: job.result() for name, job in jobs.items()}
    return {name: _timed_outcome(call) for name, call in calls.items()}


def _timed_outcome(fn: Callable[[], Any]) -> tuple[Any, float]:
    try:
        return _timed(fn)
    except Exception as exc:
        return exc, 0.0


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    return fn(), _ms(started)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1e3


def _note(degradation: list[str], message: str) -> None:
    if message not in degradation:
        degradation.append(message)
