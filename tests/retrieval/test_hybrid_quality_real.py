"""Hybrid retrieval on the real vault with the offline defaults: the issue's targets that are
met stay met (slow: the whole vault is embedded once, ~30 s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.retrieval.datasets import load_questions
from mindgraph.retrieval.hybrid import SearchOptions
from mindgraph.retrieval.metrics import hit_at, mean, mrr_at, recall_at

pytestmark = pytest.mark.slow
HELD_OUT = Path(__file__).resolve().parents[2] / "bench" / "questions" / \
    "obsidian-help-heldout.jsonl"
METHODS = {"keyword": SearchOptions(use_vector=False, graph_boost=False, expansion=False),
           "vector": SearchOptions(use_keyword=False, graph_boost=False, expansion=False),
           "hybrid": SearchOptions()}


@pytest.fixture(scope="module")
def vault(corpora, tmp_path_factory):
    state = tmp_path_factory.mktemp("state")
    mg = Mindgraph(settings_from_dict({"paths": {"wiki": str(corpora / "obsidian-help"),
                                                 "state": str(state)}},
                                      base_dir=state.parent))
    mg.embed()
    return mg


@pytest.fixture(scope="module")
def retriever(vault):
    return vault.hybrid_retriever()


def scores(retriever, questions, method):
    rows = []
    for q in questions:
        ranked = [r.page for r in retriever.search(q.query, METHODS[method],
                                                   use_cache=False).results]
        rows.append((hit_at(ranked, q.relevant, 1), recall_at(ranked, q.relevant, 5),
                     mrr_at(ranked, q.relevant, 10)))
    return tuple(mean(r[i] for r in rows) for i in range(3))


def test_dev_questions(retriever, corpora):
    questions = load_questions(corpora / "obsidian-help-queries.dev.jsonl")
    hit1, recall5, mrr = scores(retriever, questions, "hybrid")
    # issue 13: hit@1 >= 0.85 and MRR@10 >= 0.88 met (0.850 / 0.880, 0.800 / 0.855 before the
    # fitted weights and the graph boost by score); recall@5 0.929, 0.95 asked (not met;
    # 0.904 before the Japanese questions' English twin search, retrieval/twins.py)
    assert hit1 >= 0.85 and mrr >= 0.885, (hit1, recall5, mrr)
    assert recall5 >= 0.925, recall5
    japanese = [q for q in questions if q.lang == "ja"]
    assert scores(retriever, japanese, "hybrid")[1] == 1.0      # dev-ja-01 in the top 5
    assert mrr > scores(retriever, questions, "keyword")[2]
    assert mrr > scores(retriever, questions, "vector")[2]


def test_held_out_questions(retriever):
    questions = load_questions(HELD_OUT)
    hit1, recall5, mrr = scores(retriever, questions, "hybrid")
    # 0.887 / 0.963 / 0.916 (0.875 / 0.950 / 0.914 before): no worse than before
    assert hit1 >= 0.875 and recall5 >= 0.95 and mrr >= 0.91, (hit1, recall5, mrr)
    english = [q for q in questions if q.lang == "en"]
    hybrid_en = scores(retriever, english, "hybrid")[2]
    assert hybrid_en > scores(retriever, english, "keyword")[2]
    assert hybrid_en > scores(retriever, english, "vector")[2]


def test_english_questions_over_the_japanese_and_chinese_pages(vault, retriever, corpora):
    """The default routes Japanese and Chinese to USE (README, Offline models): English
    questions over the Japanese-only pages reach the cross-lingual target, 0.70 (MiniLM alone
    0.691 dev, 0.640 held-out); measured 0.758 / 0.772, over the Chinese pages 0.772 / 0.796."""
    from mindgraph.bench.crosslingual import (cross_lingual_questions, language_pages,
                                              language_retriever)

    for lang, floor in (("ja", 0.75), ("zh", 0.765)):
        target = language_pages(retriever.pages, lang)
        questions, _ = cross_lingual_questions(
            load_questions(corpora / "obsidian-help-queries.dev.jsonl"), retriever.pages,
            target, lang)
        english = [q for q in questions if q.lang == "en"]
        over = language_retriever(vault.settings, retriever, target)
        assert scores(over, english, "hybrid")[2] >= floor, lang


def test_japanese_and_chinese_questions_over_each_others_pages(vault, retriever):
    """No dictionary translates between the two: BM25 weighs 0.1 of itself there, the noise
    filter takes the question's own best cosine as a match's height, no graph boost (README,
    "Japanese and Chinese questions over each other's pages"). Held-out MRR@10 measured 0.829
    (Japanese over the Chinese pages; 0.490 before) and 0.833 (Chinese over the Japanese; 0.705)."""
    from mindgraph.bench.crosslingual import (cross_lingual_questions, language_pages,
                                              language_retriever)

    for lang, asked in (("zh", "ja"), ("ja", "zh")):
        target = language_pages(retriever.pages, lang)
        questions, _ = cross_lingual_questions(load_questions(HELD_OUT), retriever.pages,
                                               target, lang)
        mine = [q for q in questions if q.lang == asked]
        over = language_retriever(vault.settings, retriever, target)
        assert scores(over, mine, "hybrid")[2] >= 0.78, (asked, lang)
