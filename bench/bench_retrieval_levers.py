"""Retrieval levers for issue 13's unmet targets, side by side (session 17).

    python bench/bench_retrieval_levers.py -C bench-out/oh --cross-lingual --ranks   # all
    python bench/bench_retrieval_levers.py -C bench-out/oh --levers title4 --no-scifact
    python bench/bench_retrieval_levers.py -C bench-out/oh --no-scifact \
        --questions bench/questions/obsidian-help-fresh23.jsonl --levers base,graph_in

This script registers the levers (``LEVERS``) and measures them; they live by the side they
change: keyword_levers.py, vector_levers.py, fusion_levers.py (fusion and boosts),
cjk_text_levers.py (Japanese and Chinese terms), feedback_levers.py, paraphrase_levers.py and
vault_adaptation.py (lever_support.py: what they share).

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
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_fusion import HELD_OUT, line  # noqa: E402
from mindgraph.bench.corpora import beir_retriever, wiki_retriever  # noqa: E402
from mindgraph.bench.crosslingual import (cross_lingual_questions, language_pages,  # noqa: E402
                                          language_retriever)
from mindgraph.bench.runner import DEPTH  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval.bm25 import BM25Params  # noqa: E402
from mindgraph.retrieval.definition import defined_term  # noqa: E402
from mindgraph.retrieval.datasets import Question, load_beir, load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever, SearchOptions  # noqa: E402
from mindgraph.retrieval.metrics import hit_at, mean, mrr_at, ndcg_at, recall_at  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)
from feedback_levers import LEVERS as FEEDBACK_LEVERS  # noqa: E402
from paraphrase_levers import LEVERS as PARAPHRASE_LEVERS  # noqa: E402
from vault_adaptation import LEVERS as ADAPT_LEVERS  # noqa: E402
from cjk_text_levers import chars_lever, choon_lever, vault_words_lever, zh_tags_lever  # noqa: E402
from fusion_levers import (Before22, CrossLingualGraph, GraphVariant, NamedTitle,  # noqa: E402
                           NamedTitleEarly, NeighbourWords, PerLanguageFusion,
                           ScoredWeakKeyword, UngatedSubwords, VaultNoiseGap, WeakKeywordOnly,
                           weak_lever)
from keyword_levers import (cjk_params_lever, keyword_lever, params_lever,  # noqa: E402
                            title_lever)
from lever_support import CJK, rebuilt, settings_lever  # noqa: E402
from vector_levers import (both_models_lever, content_words_lever, length_lever,  # noqa: E402
                           multilingual_everywhere_lever, same_language_lever,
                           twin_vector_lever, vector_lever)

CORPORA = shared_corpora.corpora()
AGENT = ROOT / "bench" / "questions" / "obsidian-help-agent-cjk.jsonl"

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
