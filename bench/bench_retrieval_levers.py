"""Retrieval levers for issue 13's unmet targets, side by side (session 17).

    python bench/bench_retrieval_levers.py -C bench-out/oh --cross-lingual --ranks   # all
    python bench/bench_retrieval_levers.py -C bench-out/oh --levers title4 --no-scifact
    python bench/bench_retrieval_levers.py -C bench-out/oh --no-scifact \
        --questions bench/questions/obsidian-help-fresh23.jsonl --levers base,graph_in

Each lever is the hybrid method of `mindgraph bench` over the same indexes and vectors (the
workspace's: the offline default routes Japanese and Chinese to USE) with one thing changed at
query time, so differences come from the lever alone (as bench/bench_fusion.py and
bench/bench_scifact_levers.py do). Two of them are product options since session 17:
``retrieval.multilingual_vector_factor`` (``usevec<f>``) and ``retrieval.keyword_only_penalty``
(``kwonly``; the ``weakkw…`` rows are variants of it); the rest gain nowhere without a loss elsewhere (README, "Retrieval levers for
issue 13's open targets"). Levers whose name starts with ``cjk`` change only Japanese and Chinese questions:
SciFact's English claims get the base's answers by construction (printed as ``= base``, not
run again).

- ``secsum<λ>``: BM25's page score takes its best section plus λ × the sum of the page's
  other matched sections (today: the best section alone, mixed with the whole-page score);
- ``title<w>`` / ``heading<w>``: the title (3 today) or heading (2) field counted w times, for
  every question (an index built over the same pages);
- ``reserve<n>``: each weighty retriever's first n pages (2 today) kept within the first 5;
- ``cjk_b<b>`` / ``cjk_k<k1>``: BM25's length normalisation b or saturation k1 for Japanese and
  Chinese questions (the index is the same: both are applied at query time);
- ``cjk_mix<m>``: the page/section mix of BM25 (``KeywordParams.page_mix``, 0.5) for them;
- ``cjk_title<w>``: the title field counted w times (3 today) in an index used for them;
- ``cjk_vec<f>``: the vector side's weight × f for them (USE's vectors under the default);
- ``cjk_samelang[_vec<f>]``: the vector side ranks only the pages in the question's language
  (a multilingual model puts a Chinese question's Japanese twins among its first pages, and
  one of them sets the vector side's top score), optionally with its weight × f;
- ``cjk_rrf``: reciprocal rank fusion (k 60) in place of the weighted sum for them;
- ``cjk_vecwords``: their question embedded as its content words only (the analyser's
  terms: particles, endings and question words out) for the vector side;
- ``usevec<f>``: ``retrieval.multilingual_vector_factor`` f (1.5 today): the vector side's
  weight × f when the multilingual model (USE) serves the query, whatever its language;
- ``weakkw…`` / ``kwonly``: a page the keyword side found whose vector score is missing or
  below r × the vector side's best (r 0.5; ``weakkw0.3`` / ``0.7``: r; ``kwonly``: r 0, a page
  missing from the vector side's ranking only) loses p of its fused score (``_p<p>``; 0.1
  unless named), only when the model serving the query knows its language (its vector factor
  is not below 1); ``weakkw0.5``, ``weakkw0.7_p0.5``, ``weakkw0.5_p0.2``: p 0.5 / 0.5 / 0.2
  for every question, whatever model serves it; ``weakkw_scored[_p0.05]``: r 0.5, p 0.1
  (0.05), trusted, a hit beyond the vector side's ranking judged by its own vector score
  (``page_scores``) and left alone when it has none (a page not embedded yet);
- ``veclen<γ>``: doc-length normalisation of the vector side: a page's best cosine − γ ×
  ln(its text's length / the median page's) (the keyword side has BM25's b already);
- ``rm3<w>`` / ``cjk_rm3<w>``: RM3-style feedback on the keyword side: the 10 terms that weigh
  most in BM25's first 3 pages (term share of the page × the page's normalised score × idf)
  searched again beside the query's own at weight w (every question / Japanese and Chinese);
- ``cjk_twinvec<w>`` / ``cjk_twinvec_max`` (session 18): for them, a page's vector score is
  (1 − w) × its own cosine + w × the best cosine of its Japanese or Chinese twin (the same
  page translated, same permalink; ``_max``: the larger of the two);
- ``cjk_bothvec<w>``: for them, (1 − w) × USE's cosine + w × MiniLM's, MiniLM's read from
  the workspace named by the environment variable ``MINILM_WS`` (the vault embedded with
  ``embedding: {languages: {}}``: the routed store holds no MiniLM vectors of their sections);
- ``cjk_use_everywhere`` / ``cjk_use_fallback`` (session 23): for them, the vector side is
  USE's over every page searched, English pages included, read from the workspace named by
  ``USE_WS`` (the vault embedded with ``embedding.model: use-multilingual-v3``); ``fallback``
  only when the routed model would give way (USE under a tenth of the chunks searched). Kept
  as ``embedding.cross_lingual_vectors`` (README);
- ``cjk_heading<w>``: the heading field counted w times (2 today) for them;
- ``reserve_anylang`` (session 23): a retriever's first pages are kept within the first five
  whatever their language, as before ``retrieval.reserve_same_language`` (on since session
  23: only those in the question's language, when the vault speaks it);
- ``named<b>`` / ``named1_<b>``: a page whose title's terms (at least two; ``named1_``: one
  is enough) are a run of the question's terms ("CSS snippets", 地图视图) gains b of its
  fused score, every question;
- ``choon``: a katakana word's final long-vowel mark dropped in pages and questions alike
  (フィルター / フィルタ, コンピューター / コンピュータ: both spellings are in the vault);
- ``embeds[<n>][_w<w>]`` / ``embeds_off`` (session 18): the keyword index built with each
  section's embeds of other notes expanded (``index.expand_embeds``; at most n characters of
  each, 2,000 unless named; their text weighing w, 1 unless named; ``_sec``: in the
  section's document only, not the whole page's) / not expanded;
- ``nearwords<w>[_f<c>]`` (session 18): BM25 also searches, at w × cosine, the words of the
  vector side's first 5 pages (in the question's language) that the question's own model puts
  nearest one of its words (cosine at least c, 0.6 unless named; two per word), for every
  question not in Japanese or Chinese (the English paraphrase misses);
- ``definition<b>`` (session 18): ``retrieval.definition_bonus`` b (0.2 today; 0: off): on a
  definition question
  ("what is a vault", 保管庫とは, 什么是保管库; retrieval/definition.py) a candidate page whose
  heading (or title) is the defined term gains b (b / 2 for a "What is X" heading); only a
  question ``definition.defined_term`` reads a subject from can move (``--definitions``
  counts them);

- ``untranslated_kw<f>`` (session 22): ``retrieval.untranslated_keyword_factor`` f (0.1
  today; 1: off): BM25's weight for a question over pages almost none of which are in its
  language when no dictionary translates its words for them (Japanese over Chinese pages);
- ``noisegap_vault`` (session 22): the noise filter's match height always the vault's
  calibrated gap (today a question over pages almost none of which are in its language
  takes its own best cosine's height when lower);
- ``xl_graph`` (session 22): the graph boost also for the questions ``untranslated_kw``
  weighs (today they get none); ``before22``: the three as before session 22;
- ``graph_…`` (session 23, ``GraphVariant``): the graph boost with other rules for which
  linked candidates lend and how much: ``graph_same`` today's rule (a check: nothing moves),
  ``graph_in`` only the candidates linking to the page, ``graph_in_out0.5`` / ``graph_in2``
  those the page links to at half / those linking to it at twice, ``graph_seeds<n>`` only the
  first n candidates (``graph_in_seeds5``: both), ``graph_rank`` a loan ÷ the lender's rank,
  ``graph_mutual`` links both ways only, ``graph_near<w>`` a link outside the lender's matched
  section at w, ``graph_sq`` each loan's share of the best squared, ``graph_full<f>`` full at
  f × the best's score, ``graph_spread`` a loan ÷ the lender's links in the pool;
- ``named_early<b>`` / ``named_exact_early<b>`` (session 23): ``named<b>``'s bonus given with
  the graph boost, before the reserved places (``exact``: the title's words as written);
- ``vprf_rocchio5`` / ``vprf_avg3`` / ``rm3_anserini`` / ``bm25plus`` / ``bm25f_title_b0``
  (session 23): pseudo-relevance feedback on the vector side (Pyserini's Rocchio and Average
  PRF over the dense side's own first pages) and on the keyword side (RM3 with Anserini's
  defaults), BM25+ (δ 1), and BM25F with the title-like fields not length-normalised, every
  parameter the literature's (bench/feedback_levers.py);
- ``cjk_subword_off`` / ``cjk_subword<w>`` / ``cjk_subword_chars<n>`` (session 23):
  ``retrieval.subword_weight`` 0 / w (0.5 today) / ``subword_chars`` n (4 today): a short Han
  word of the question that no page has on its own also searched as the vault's words that
  contain it (retrieval/subwords.py); ``cjk_subword_ungated``: whatever language the pages are
  in (today only when at least a tenth are in the question's);
- ``cjk_vaultwords`` (session 23): the vault's own vocabulary (``vault_words``: CJK runs of
  titles, aliases, headings and link targets that the segmenter cuts in two or more) made
  terms of their own wherever pages and questions spell them with whole words, as if jieba and
  MeCab knew them (not kept: it loses agent and cross-lingual questions; README "Issue 13's
  Chinese gap, session 23");
- ``inlink_kw<w>[_sec]`` / ``inlinkvec_max|mix`` / ``headvec_max|mix`` /
  ``clauses_max|mean`` (session 24, bench/paraphrase_levers.py): for the paraphrase
  questions, each page's inlink contexts (the sentences of other pages around a link to it:
  anchor text) as a BM25 field of weight w, or as extra vectors of the page (max-sim); each
  section's heading path and the title as extra vectors; a long question's clauses embedded
  one by one beside the whole (none kept: README, "Paraphrase questions"; ``= base`` on
  SciFact where the lever changes nothing: no links);
- ``cjk_chars<w>`` (session 23): each Han character of a content word also a term of its
  own (``CHAR_MARK`` + the character), in pages and questions, the question's at weight w
  (not kept: dev-ja-01 leaves the first 10, English questions move through BM25's average
  length, the questions over the English pages fall);
- ``adapt_a`` / ``adapt_b`` / ``adapt_ab[_l<λ>][_r<k>]`` (session 24): each model's query
  vectors mapped by a W learnt from the vault alone, no question labels (titles and headings
  → their sections: ``a``; the sentence around a ``[[link]]`` → the linked page: ``b``;
  λ of ‖W − I‖², 1 unless named; ``_r<k>``: W = I + U Vᵀ of rank k), the stored vectors
  unchanged (bench/vault_adaptation.py);

Prints one line per lever: dev and held-out hit@1 / R@5 / MRR@10 (en / ja / zh MRR@10),
each ``--questions`` file's hit@1 / R@5 / MRR@10 (each language's three, and each question
``style``'s MRR@10 when its lines name one), SciFact
nDCG@10, and with ``--cross-lingual`` the hybrid MRR@10 of the cross-lingual sets
(``dev>ja``: the dev questions not in Japanese over the Japanese pages only, answered by the
counterparts of their pages, as `mindgraph bench --cross-lingual ja` asks them). ``--ranks``
then lists, per lever, the dev, held-out (``--agent``, ``--questions``) questions whose relevant pages moved
against ``base`` (each relevant page's rank before → after; 0 = not in the first 10).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import re
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_fusion import HELD_OUT, line  # noqa: E402
from mindgraph.bench.corpora import beir_retriever, wiki_retriever  # noqa: E402
from mindgraph.bench.crosslingual import (PagesOnly, cross_lingual_questions,  # noqa: E402
                                          language_pages, language_retriever)
from mindgraph.bench.runner import DEPTH  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.retrieval.query_language import query_language_in  # noqa: E402
from mindgraph.retrieval.analyzer import analyze  # noqa: E402
from mindgraph.retrieval.bm25 import BM25Params  # noqa: E402
from mindgraph.retrieval.definition import defined_term  # noqa: E402
from mindgraph.retrieval.datasets import Question, load_beir, load_questions  # noqa: E402
from mindgraph.graph.build import ENRICHED_PREFIX, EXTRACTED  # noqa: E402
from mindgraph.retrieval.hybrid import GRAPH_POOL, HybridRetriever, SearchOptions  # noqa: E402
from mindgraph.retrieval.keyword import KeywordIndex, KeywordParams, max_per_group  # noqa: E402
from mindgraph.retrieval.metrics import hit_at, mean, mrr_at, ndcg_at, recall_at  # noqa: E402
from mindgraph.retrieval.twins import Twins  # noqa: E402
from mindgraph.retrieval.vector import VectorPageHit, VectorRetriever  # noqa: E402
import mindgraph.retrieval.analyzer as _analyzer  # noqa: E402
import mindgraph.text.cjk as _cjk  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)
from feedback_levers import LEVERS as FEEDBACK_LEVERS  # noqa: E402
from paraphrase_levers import LEVERS as PARAPHRASE_LEVERS  # noqa: E402
from vault_adaptation import LEVERS as ADAPT_LEVERS  # noqa: E402

CORPORA = shared_corpora.corpora()
CJK = ("ja", "zh")
AGENT = ROOT / "bench" / "questions" / "obsidian-help-agent-cjk.jsonl"
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


class VectorFactor(HybridRetriever):
    """The vector side's weight × ``factor`` for questions in ``langs``."""

    factor = 1.0
    langs: Sequence[str] = CJK

    def _vector_factor(self, query: str) -> float:
        base = super()._vector_factor(query)
        return base * self.factor if self.query_language(query) in self.langs else base


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


_CHOON = {"on": False}
KATAKANA_ONLY = re.compile("^[\u30a1-\u30fa\u30fc]+$")


def _choon_terms(original: Callable[..., tuple[str, ...]]) -> Callable[..., tuple[str, ...]]:
    """The analyser's CJK word terms with a katakana word's final long-vowel mark dropped when
    the lever is on (JIS Z 8301: フィルター / フィルタ, コンピューター / コンピュータ, both
    spellings in the vault), in pages and questions alike."""
    def terms(word: Any) -> tuple[str, ...]:
        out = original(word)
        if not _CHOON["on"]:
            return out
        return tuple(t[:-1] if len(t) >= 4 and t.endswith("ー") and KATAKANA_ONLY.match(t)
                     else t for t in out)
    terms.patched = True  # type: ignore[attr-defined]
    return terms


class SwitchedIndex(KeywordIndex):
    """An index built, and searched, inside ``switch()`` (the analyser changed for the time
    being: the same pages and parameters)."""

    switch: Callable[[], Any]

    @classmethod
    def over(cls, base: KeywordIndex, pages: Any, switch: Callable[[], Any]
             ) -> "SwitchedIndex":
        with switch():
            built = KeywordIndex.build(pages, base.params)
        out = cls.__new__(cls)
        out.__dict__.update(built.__dict__)
        out.switch = switch
        return out

    def search(self, *args: Any, **kw: Any) -> list[Any]:
        with self.switch():
            return super().search(*args, **kw)

    def page_scores(self, *args: Any, **kw: Any) -> dict[str, float]:
        with self.switch():
            return super().page_scores(*args, **kw)


@contextlib.contextmanager
def _choon_on() -> Iterator[None]:
    _CHOON["on"] = True
    try:
        yield
    finally:
        _CHOON["on"] = False


_ZH_TAGS: dict[str, frozenset[str]] = {}


def _zh_word_tags(original: Callable[..., Any]) -> Callable[..., Any]:
    """jieba's word classes, with ``_ZH_TAGS["on"]`` function words too while it is set."""
    def word(surface: str, tag: str) -> Any:
        function, noun, parts = original(surface, tag)
        if not function and tag in _ZH_TAGS.get("on", frozenset()):
            return True, noun, ()
        return function, noun, parts
    word.patched = True  # type: ignore[attr-defined]
    return word


def _zh_tags_on(tags: frozenset[str]) -> Callable[[], Any]:
    @contextlib.contextmanager
    def switch() -> Iterator[None]:
        if not getattr(_cjk._zh_word, "patched", False):
            _cjk._zh_word = _zh_word_tags(_cjk._zh_word)
        _ZH_TAGS["on"] = tags
        _cjk._zh_node.cache_clear()
        _cjk.words.cache_clear()
        try:
            yield
        finally:
            _ZH_TAGS.pop("on", None)
            _cjk._zh_node.cache_clear()
            _cjk.words.cache_clear()
    return switch


def zh_tags_lever(tags: str) -> Callable[[HybridRetriever], HybridRetriever]:
    """Chinese words of jieba's ``tags`` (d adverb, r pronoun, c conjunction, p preposition,
    m numeral, q classifier, f direction, t time) stop words too, in pages and questions."""
    return lambda r: rebuilt(r, SwitchedIndex.over(r.keyword, r.pages.values(),
                                                   _zh_tags_on(frozenset(tags.split()))))


def choon_lever(r: HybridRetriever) -> HybridRetriever:
    if not getattr(_analyzer._word_terms, "patched", False):   # once, when first asked for
        _analyzer._word_terms = _choon_terms(_analyzer._word_terms)
    return rebuilt(r, SwitchedIndex.over(r.keyword, r.pages.values(), _choon_on))


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


def rebuilt(base: HybridRetriever, keyword: KeywordIndex | None = None,
            cls: type[HybridRetriever] = HybridRetriever, **attrs: Any) -> HybridRetriever:
    """A retriever over ``base``'s pages, graph and vectors with ``keyword`` (or base's)."""
    out = cls(base.pages, keyword or base.keyword, base.graph, base.vector, base.settings,
              expander=base.expander, vector_error=base.vector_error,
              calibration_file=base._calibration_file)
    for key, value in attrs.items():
        setattr(out, key, value)
    return out


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


_VAULT_WORDS: dict[str, frozenset[str]] = {}
VAULT_WORD_CHARS = 10


def vault_words(pages: Any) -> frozenset[str]:
    """The vault's own vocabulary: each CJK run (at most ``VAULT_WORD_CHARS`` characters) of
    a page's title, aliases, headings and link targets that its language's segmenter cuts
    into two words or more (页面预览 → 页面|预览), the first and last of them content words
    (not 什么是, の数式), normalised as the analyser reads text."""
    found: set[str] = set()
    for page in pages:
        lang = page_language(page)
        hint = lang if lang in CJK else None
        names = [page.title, *page.aliases, *(s.heading for s in page.sections)]
        for link in page.links:
            names += [link.target.rsplit("/", 1)[-1].removesuffix(".md"),
                      link.heading or "", link.alias or ""]
        for name in names:
            for run in _cjk.CJK_RUN.findall(_analyzer.normalize(name)):
                if 2 <= len(run) <= VAULT_WORD_CHARS:
                    run_lang = _cjk.run_language(run, hint)
                    cut = _cjk.words(run, run_lang) if run_lang in CJK else ()
                    # whole words, beginning and ending with a content word (not 什么是)
                    if len(cut) > 1 and not cut[0].function and not cut[-1].function \
                            and cut[0].start == 0 and cut[-1].end == len(run):
                        found.add(run)
    return frozenset(found)


def _vault_word_terms(original: Callable[..., None]) -> Callable[..., None]:
    """The analyser's CJK run terms, plus each vault word (``_VAULT_WORDS["on"]``) that runs
    of two to five whole words of the run spell, while the lever is on."""
    def terms(run: str, lang: str, append: Callable[[str], None], query: bool) -> None:
        original(run, lang, append, query)
        known = _VAULT_WORDS.get("on")
        if not known or lang not in CJK:
            return
        cut = _cjk.words(run, lang)
        for i in range(len(cut)):
            for j in range(i + 1, min(i + 5, len(cut))):
                phrase = run[cut[i].start:cut[j].end]
                if phrase in known:
                    append(phrase)
    terms.patched = True  # type: ignore[attr-defined]
    return terms


def vault_words_lever(r: HybridRetriever) -> HybridRetriever:
    """Vault words (``vault_words``: titles, aliases, headings, link targets) are terms of
    their own wherever pages and questions spell them with whole words, as if the segmenters
    knew them (jieba's add_word; MeCab has no such call at run time, so the analyser
    does it for both)."""
    known = vault_words(r.pages.values())

    @contextlib.contextmanager
    def switch() -> Iterator[None]:
        if not getattr(_analyzer._cjk_terms, "patched", False):
            _analyzer._cjk_terms = _vault_word_terms(_analyzer._cjk_terms)
        _VAULT_WORDS["on"] = known
        try:
            yield
        finally:
            _VAULT_WORDS.pop("on", None)
    return rebuilt(r, SwitchedIndex.over(r.keyword, r.pages.values(), switch))


CHAR_MARK = "字:"       # a character term: never a word's (the analyser's hold no colon)
_CHARS: dict[str, bool] = {}


def _char_word_terms(original: Callable[..., tuple[str, ...]]
                     ) -> Callable[..., tuple[str, ...]]:
    """The analyser's terms of a CJK word, plus each Han character of a content word as a
    term of its own (``CHAR_MARK`` + the character) while the lever is on."""
    def terms(word: Any) -> tuple[str, ...]:
        out = original(word)
        if not _CHARS.get("on") or not out:
            return out
        return (*out, *(CHAR_MARK + c for c in dict.fromkeys(word.text)
                        if _HAN_CHAR.match(c)))
    terms.patched = True  # type: ignore[attr-defined]
    return terms


_HAN_CHAR = re.compile(_cjk.HAN_CHAR)


@contextlib.contextmanager
def _chars_on() -> Iterator[None]:
    if not getattr(_analyzer._word_terms, "patched", False):
        _analyzer._word_terms = _char_word_terms(_analyzer._word_terms)
    _CHARS["on"] = True
    try:
        yield
    finally:
        _CHARS.pop("on", None)


class CharIndex(SwitchedIndex):
    """Words and their Han characters in one index; a question's characters weigh
    ``char_weight`` against its words' 1."""

    char_weight = 0.3

    def query_terms(self, query: str) -> list[str]:
        return [t for t in super().query_terms(query) if not t.startswith(CHAR_MARK)]

    def _char_extra(self, query: str, extra: Any) -> dict[str, float]:
        with self.switch():
            chars = [t for t in dict.fromkeys(analyze(query, query=True))
                     if t.startswith(CHAR_MARK)]
        out = dict(extra or {})
        for term in chars:
            out.setdefault(term, self.char_weight)
        return out

    def search(self, query: str, limit: int = 10, extra: Any = None, concepts: Any = ()
               ) -> list[Any]:
        return super().search(query, limit, self._char_extra(query, extra), concepts)

    def page_scores(self, query: str, paths: Any, extra: Any = None, concepts: Any = ()
                    ) -> dict[str, float]:
        return super().page_scores(query, paths, self._char_extra(query, extra), concepts)


def chars_lever(weight: float) -> Callable[[HybridRetriever], HybridRetriever]:
    """Han characters of content words indexed beside the words (pages and questions), the
    question's at ``weight``."""
    def make(r: HybridRetriever) -> HybridRetriever:
        index = CharIndex.over(r.keyword, r.pages.values(), _chars_on)
        index.char_weight = weight
        return rebuilt(r, index)
    return make


class UngatedSubwords(HybridRetriever):
    """Sub-word lookups whatever language the pages are in (today only when at least a
    tenth of them are in the query's: retrieval/subwords.py)."""

    def _subword_terms(self, query: str) -> dict[str, str]:
        if self.settings.subword_weight <= 0:
            return {}
        return self.keyword.subword_terms(query, self.settings.subword_chars)


def settings_lever(**changes: Any) -> Callable[[HybridRetriever], HybridRetriever]:
    """Other ``retrieval`` settings over the same indexes."""
    def make(r: HybridRetriever) -> HybridRetriever:
        out = rebuilt(r)
        out.settings = replace(r.settings, **changes)
        return out
    return make


def vector_lever(factor: float) -> Callable[[HybridRetriever], HybridRetriever]:
    return lambda r: rebuilt(r, cls=VectorFactor, factor=factor)


def weak_lever(ratio: float, penalty: float) -> Callable[[HybridRetriever], HybridRetriever]:
    """``WeakKeywordOnly`` when the model serving the query knows its language."""
    return lambda r: rebuilt(r, cls=WeakKeywordOnly, ratio=ratio, penalty=penalty,
                             trusted=True)


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


LEVERS: dict[str, Callable[[HybridRetriever], HybridRetriever]] = {
    "base": lambda r: r,
    "secsum0.1": keyword_lever(section_sum=0.1),
    "secsum0.3": keyword_lever(section_sum=0.3),
    "title4": params_lever(title=4.0),
    "heading3": params_lever(heading=3.0),
    "heading1": params_lever(heading=1.0),
    "heading4": params_lever(heading=4.0),
    "title5": params_lever(title=5.0),
    "title4_heading3": params_lever(title=4.0, heading=3.0),
    "reserve3": settings_lever(reserve_top=3),
    "reserve1": settings_lever(reserve_top=1),
    "cjk_b0.4": keyword_lever(langs=CJK, bm25=BM25Params(k1=1.2, b=0.4)),
    "cjk_b0.9": keyword_lever(langs=CJK, bm25=BM25Params(k1=1.2, b=0.9)),
    "cjk_k0.8": keyword_lever(langs=CJK, bm25=BM25Params(k1=0.8, b=0.75)),
    "cjk_k2.0": keyword_lever(langs=CJK, bm25=BM25Params(k1=2.0, b=0.75)),
    "cjk_mix0.3": keyword_lever(langs=CJK, page_mix=0.3),
    "cjk_mix0.7": keyword_lever(langs=CJK, page_mix=0.7),
    "cjk_title2": title_lever(2.0),
    "cjk_title5": title_lever(5.0),
    "cjk_vec0.5": vector_lever(0.5),
    "cjk_vec1.5": vector_lever(1.5),
    "usevec1": settings_lever(multilingual_vector_factor=1.0),
    "usevec1.25": settings_lever(multilingual_vector_factor=1.25),
    "usevec2": settings_lever(multilingual_vector_factor=2.0),
    "weakkw0.5": lambda r: rebuilt(r, cls=WeakKeywordOnly, ratio=0.5, penalty=0.5),
    "weakkw0.7_p0.5": lambda r: rebuilt(r, cls=WeakKeywordOnly, ratio=0.7, penalty=0.5),
    "weakkw0.5_p0.2": lambda r: rebuilt(r, cls=WeakKeywordOnly, ratio=0.5, penalty=0.2),
    "weakkw_p0.2": weak_lever(0.5, 0.2),
    "weakkw_p0.1": weak_lever(0.5, 0.1),
    "weakkw_p0.05": weak_lever(0.5, 0.05),
    "weakkw0.3": weak_lever(0.3, 0.1),
    "weakkw0.7": weak_lever(0.7, 0.1),
    "kwonly": weak_lever(0.0, 0.1),
    "usevec1.5": settings_lever(multilingual_vector_factor=1.5),
    "kwonly_on": settings_lever(keyword_only_penalty=0.1),
    "kwonly_off": settings_lever(keyword_only_penalty=0.0),
    "weakkw_scored": lambda r: rebuilt(r, cls=ScoredWeakKeyword),
    "weakkw_scored_p0.05": lambda r: rebuilt(r, cls=ScoredWeakKeyword, penalty=0.05),
    "cjk_samelang": same_language_lever(),
    "cjk_samelang_vec1.5": same_language_lever(1.5),
    "cjk_rrf": lambda r: rebuilt(r, cls=PerLanguageFusion),
    "cjk_vecwords": content_words_lever,
    "veclen0.01": length_lever(0.01),
    "veclen0.03": length_lever(0.03),
    "rm3_0.2": keyword_lever(feedback=0.2),
    "cjk_rm3_0.3": keyword_lever(langs=CJK, feedback=0.3),
    "cjk_twinvec_max": twin_vector_lever(None),
    "cjk_twinvec0.5": twin_vector_lever(0.5),
    "cjk_twinvec0.3": twin_vector_lever(0.3),
    "named0.05": lambda r: rebuilt(r, cls=NamedTitle, bonus=0.05),
    "named0.1": lambda r: rebuilt(r, cls=NamedTitle, bonus=0.1),
    "named0.2": lambda r: rebuilt(r, cls=NamedTitle, bonus=0.2),
    "named1_0.1": lambda r: rebuilt(r, cls=NamedTitle, bonus=0.1, min_terms=1),
    "choon": choon_lever,
    "zhpos_drcp": zh_tags_lever("d r c p"),
    "zhpos_all": zh_tags_lever("d r c p m q f t"),
    "cjk_bothvec0.2": both_models_lever(0.2),
    "cjk_bothvec0.35": both_models_lever(0.35),
    "cjk_use_everywhere": multilingual_everywhere_lever(False),
    "cjk_use_fallback": multilingual_everywhere_lever(True),
    "cjk_heading1": cjk_params_lever(heading=1.0),
    "cjk_heading3": cjk_params_lever(heading=3.0),
    "cjk_heading4": cjk_params_lever(heading=4.0),
    "nearwords0.3": lambda r: rebuilt(r, cls=NeighbourWords),
    "nearwords0.5": lambda r: rebuilt(r, cls=NeighbourWords, weight=0.5),
    "nearwords0.3_f0.7": lambda r: rebuilt(r, cls=NeighbourWords, floor=0.7),
    "embeds": params_lever(embed_chars=2000),
    "embeds_off": params_lever(embed_chars=0),
    "embeds500": params_lever(embed_chars=500),
    "embeds_w0.5": params_lever(embed_chars=2000, embed=0.5),
    "embeds_sec": params_lever(embed_chars=2000, embed_page=0.0),
    "embeds500_sec": params_lever(embed_chars=500, embed_page=0.0),
    "definition0": settings_lever(definition_bonus=0.0),
    "definition0.1": settings_lever(definition_bonus=0.1),
    "definition0.3": settings_lever(definition_bonus=0.3),
    "untranslated_kw1": settings_lever(untranslated_keyword_factor=1.0),
    "untranslated_kw0.3": settings_lever(untranslated_keyword_factor=0.3),
    "untranslated_kw0": settings_lever(untranslated_keyword_factor=0.0),
    "noisegap_vault": lambda r: rebuilt(r, cls=VaultNoiseGap),
    "xl_graph": lambda r: rebuilt(r, cls=CrossLingualGraph),
    "cjk_subword_off": settings_lever(subword_weight=0.0),
    "cjk_subword0.3": settings_lever(subword_weight=0.3),
    "cjk_subword1": settings_lever(subword_weight=1.0),
    "cjk_subword_chars1": settings_lever(subword_chars=1),
    "cjk_subword_chars2": settings_lever(subword_chars=2),
    "cjk_subword_ungated": lambda r: rebuilt(r, cls=UngatedSubwords),
    "cjk_vaultwords": vault_words_lever,
    "cjk_chars0.1": chars_lever(0.1),
    "cjk_chars0.3": chars_lever(0.3),
    "before22": lambda r: rebuilt(r, cls=Before22, settings=replace(
        r.settings, untranslated_keyword_factor=1.0)),
    "graph_same": lambda r: rebuilt(r, cls=GraphVariant),
    "graph_in": lambda r: rebuilt(r, cls=GraphVariant, outbound=0.0),
    "graph_in_out0.5": lambda r: rebuilt(r, cls=GraphVariant, outbound=0.5),
    "graph_seeds3": lambda r: rebuilt(r, cls=GraphVariant, seeds=3),
    "graph_seeds5": lambda r: rebuilt(r, cls=GraphVariant, seeds=5),
    "graph_rank": lambda r: rebuilt(r, cls=GraphVariant, by_rank=True),
    "graph_mutual": lambda r: rebuilt(r, cls=GraphVariant, mutual=True),
    "graph_in_seeds5": lambda r: rebuilt(r, cls=GraphVariant, outbound=0.0, seeds=5),
    "graph_near0.5": lambda r: rebuilt(r, cls=GraphVariant, far=0.5),
    "graph_near0": lambda r: rebuilt(r, cls=GraphVariant, far=0.0),
    "graph_full2": lambda r: rebuilt(r, cls=GraphVariant, full=2.0),
    "graph_full3": lambda r: rebuilt(r, cls=GraphVariant, full=3.0),
    "graph_sq": lambda r: rebuilt(r, cls=GraphVariant, power=2.0),
    "graph_sq_full2": lambda r: rebuilt(r, cls=GraphVariant, power=2.0, full=2.0),
    "graph_in2": lambda r: rebuilt(r, cls=GraphVariant, inbound=2.0),
    "named_early0.05": lambda r: rebuilt(r, cls=NamedTitleEarly, bonus=0.05),
    "named_early0.1": lambda r: rebuilt(r, cls=NamedTitleEarly, bonus=0.1),
    "named_exact_early0.1": lambda r: rebuilt(r, cls=NamedTitleEarly, bonus=0.1, exact=True),
    "graph_spread": lambda r: rebuilt(r, cls=GraphVariant, spread=True),
    "graph_spread_full0.5": lambda r: rebuilt(r, cls=GraphVariant, spread=True, full=0.5),
    "reserve_anylang": settings_lever(reserve_same_language=False),
    **FEEDBACK_LEVERS,
    **PARAPHRASE_LEVERS,
    **ADAPT_LEVERS,
}


def ranked(retriever: HybridRetriever, questions: Sequence[Question]) -> list[list[str]]:
    out = []
    for question in questions:
        if retriever.vector is not None:
            retriever.vector.forget_queries()
        response = retriever.search(question.query, SearchOptions(top_k=DEPTH),
                                    use_cache=False)
        out.append([r.page for r in response.results])
    return out


def scores(questions: Sequence[Question], rankings: list[list[str]],
           graded: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, float]:
    rows = [(q, hit_at(r, q.relevant, 1), recall_at(r, q.relevant, 5),
             mrr_at(r, q.relevant, DEPTH), ndcg_at(r, graded[q.id] if graded else q.relevant,
                                                   DEPTH))
            for q, r in zip(questions, rankings)]
    out = {"hit1": mean(x[1] for x in rows), "recall5": mean(x[2] for x in rows),
           "mrr10": mean(x[3] for x in rows), "ndcg10": mean(x[4] for x in rows)}
    for lang in sorted({q.lang for q in questions if q.lang}):
        out[f"hit1_{lang}"] = mean(x[1] for x in rows if x[0].lang == lang)
        out[f"recall5_{lang}"] = mean(x[2] for x in rows if x[0].lang == lang)
        out[f"mrr10_{lang}"] = mean(x[3] for x in rows if x[0].lang == lang)
    for style in sorted({str(q.extra["style"]) for q in questions if "style" in q.extra}):
        out[f"mrr10_style_{style}"] = mean(x[3] for x in rows
                                           if x[0].extra.get("style") == style)
    return out


def question_file_cell(key: str, got: Mapping[str, float]) -> str:
    """A --questions file's hit@1/R@5/MRR@10, then each language's (en, ja, zh) three, then
    the MRR@10 of each question style (its lines' ``style``) when they name one."""
    langs = " ".join(f"{lang} {got[f'hit1_{lang}']:.3f}/{got[f'recall5_{lang}']:.3f}/"
                     f"{got[f'mrr10_{lang}']:.3f}"
                     for lang in ("en", "ja", "zh") if f"mrr10_{lang}" in got)
    styles = " ".join(f"{k.removeprefix('mrr10_style_')} {v:.3f}"
                      for k, v in got.items() if k.startswith("mrr10_style_"))
    return (f"{key} {got['hit1']:.3f}/{got['recall5']:.3f}/{got['mrr10']:.3f} ({langs})"
            + (f" [MRR@10 by style: {styles}]" if styles else ""))


def cross_cell(key: str, got: Mapping[str, float]) -> str:
    """A cross-lingual set's MRR@10, then each question language's (en / ja / zh)."""
    langs = "/".join(f"{got[f'mrr10_{lang}']:.3f}" if f"mrr10_{lang}" in got else "-"
                     for lang in ("en", "ja", "zh"))
    return f"{key} {got['mrr10']:.3f} ({langs})"


def first_rank(ranking: list[str], relevant: Sequence[str]) -> int:
    return next((i for i, page in enumerate(ranking, 1) if page in relevant), 0)


def places(ranking: list[str], relevant: Sequence[str]) -> str:
    """Each relevant page's rank in the first 10 (0: not there), slash-separated."""
    return "/".join(str(ranking.index(p) + 1 if p in ranking else 0) for p in relevant)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    parser.add_argument("--levers", default=",".join(LEVERS))
    parser.add_argument("--no-scifact", action="store_true")
    parser.add_argument("--cross-lingual", action="store_true",
                        help="also the cross-lingual sets: dev and held-out questions over "
                             "the Japanese-, Chinese- and English-only pages (hybrid MRR@10 "
                             "of all their questions)")
    parser.add_argument("--definitions", action="store_true",
                        help="count the definition questions (retrieval/definition.py) of "
                             "the dev and held-out sets, and list them")
    parser.add_argument("--agent", action="store_true",
                        help="also bench/questions/obsidian-help-agent-cjk.jsonl (24 ja/zh "
                             "questions phrased as an agent asks), over the whole vault and, "
                             "with --cross-lingual, over each language's pages")
    parser.add_argument("--questions", action="append", type=Path, default=[],
                        metavar="FILE",
                        help="also this JSONL question file (repeatable; e.g. bench/questions/"
                             "obsidian-help-fresh23.jsonl), over the whole vault and, with "
                             "--cross-lingual, over each language's pages; printed under its "
                             "file name, with each language's hit@1/R@5/MRR@10")
    parser.add_argument("--ranks", action="store_true",
                        help="list the questions whose first relevant page moved")
    args = parser.parse_args()
    names = [n for n in args.levers.split(",") if n]
    unknown = [n for n in names if n not in LEVERS]
    if unknown:
        parser.error(f"--levers: unknown {unknown}; choose from {', '.join(LEVERS)}")
    if "base" not in names:
        names.insert(0, "base")
    shared_corpora.require(CORPORA, "obsidian-help-queries.dev.jsonl",
                           *(() if args.no_scifact else ("scifact",)))
    settings = load_settings(args.workspace)
    wiki = wiki_retriever(Mindgraph(settings))
    sets = {"dev": load_questions(CORPORA / "obsidian-help-queries.dev.jsonl"),
            "held-out": load_questions(HELD_OUT)}
    extra = {**({"agent": load_questions(AGENT)} if args.agent else {}),
             **{path.stem: load_questions(path) for path in args.questions}}
    sci = claims = graded = None
    if not args.no_scifact:
        data = load_beir(CORPORA / "scifact")
        sci = beir_retriever(settings, data, "scifact")
        graded = {q: {f"{d}.md": g for d, g in rel.items()} for q, rel in data.qrels.items()}
        claims = [Question(qid, text, tuple(f"{d}.md" for d, g in data.qrels[qid].items()
                                            if g > 0))
                  for qid, text in data.queries.items()]
    if args.definitions:
        for key, questions in sets.items():
            found = [q for q in questions if defined_term(q.query) is not None]
            print(f"{key}: {len(found)} of {len(questions)} questions are definition questions"
                  + "".join(f"\n  {q.id} {q.query} → {defined_term(q.query)}" for q in found))
    cross: dict[str, tuple[HybridRetriever, list[Question]]] = {}
    if args.cross_lingual:
        for lang in ("ja", "zh", "en"):
            target = language_pages(wiki.pages, lang)
            over = language_retriever(settings, wiki, target)
            for key, questions in {**sets, **extra}.items():
                kept, _ = cross_lingual_questions(questions, wiki.pages, target, lang)
                cross[f"{key}>{lang}"] = (over, kept)
    base_ranks: dict[str, list[list[str]]] = {}
    base_sci: dict[str, float] | None = None
    moved: dict[str, list[str]] = {}
    for name in names:
        lever = LEVERS[name](wiki)
        row: dict[str, dict[str, float]] = {}
        for key, questions in sets.items():
            rankings = ranked(lever, questions)
            row[key] = scores(questions, rankings)
            if name == "base":
                base_ranks[key] = rankings
            else:
                moved[name] = moved.get(name, []) + [
                    f"{q.id} {places(b, q.relevant)}→{places(r, q.relevant)}"
                    for q, b, r in zip(questions, base_ranks[key], rankings)
                    if places(b, q.relevant) != places(r, q.relevant)]
        text = line(name, row)
        for key, questions in extra.items():
            rankings = ranked(lever, questions)
            got = scores(questions, rankings)
            if name == "base":
                base_ranks[key] = rankings
            else:
                moved[name] = moved.get(name, []) + [
                    f"{q.id} {places(b, q.relevant)}→{places(r, q.relevant)}"
                    for q, b, r in zip(questions, base_ranks[key], rankings)
                    if places(b, q.relevant) != places(r, q.relevant)]
            text += (f" | agent {got['hit1']:.3f}/{got['recall5']:.3f}/{got['mrr10']:.3f} "
                     f"({got.get('mrr10_ja', 0):.3f}/{got.get('mrr10_zh', 0):.3f})"
                     if key == "agent" else f" | {question_file_cell(key, got)}")
        if cross:
            text += " | cross-lingual " + " ".join(
                cross_cell(key, scores(kept, ranked(LEVERS[name](over), kept)))
                for key, (over, kept) in cross.items())
        if sci is not None and claims is not None:
            lever_sci = LEVERS[name](sci) if not name.startswith("cjk") else sci
            if name != "base" and lever_sci is sci and base_sci is not None:
                text += " | scifact = base"     # the lever changes nothing there
            else:
                row["scifact"] = scores(claims, ranked(lever_sci, claims), graded)
                base_sci = base_sci or row["scifact"]
                text += f" | scifact nDCG@10 {row['scifact']['ndcg10']:.3f}"
        print(text, flush=True)
    if args.ranks:
        print("\nrelevant pages' ranks, base → lever (0: not in the first 10):")
        for name, items in moved.items():
            print(f"  {name}: {', '.join(items) if items else 'none moved'}")


if __name__ == "__main__":
    main()
