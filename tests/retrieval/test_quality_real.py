"""Keyword quality on the real corpora: the issue's targets, checked in CI."""

from __future__ import annotations

import pytest

from mindgraph.page.parse import parse_page
from mindgraph.page.vault import load_vault
from mindgraph.retrieval.datasets import load_beir, load_questions
from mindgraph.retrieval.keyword import KeywordIndex
from mindgraph.retrieval.metrics import mean, mrr_at, ndcg_at

pytestmark = pytest.mark.slow


def test_dev_questions_mrr_at_10_in_every_language(corpora):
    index = KeywordIndex.build(load_vault(corpora / "obsidian-help").pages.values())
    by_lang: dict[str, list[float]] = {}
    for q in load_questions(corpora / "obsidian-help-queries.dev.jsonl"):
        ranked = [h.path for h in index.search(q.query, 10)]
        by_lang.setdefault(q.lang, []).append(mrr_at(ranked, q.relevant, 10))
    overall = mean(v for values in by_lang.values() for v in values)
    assert overall >= 0.65
    for lang in ("en", "ja", "zh"):
        assert mean(by_lang[lang]) >= 0.6, (lang, mean(by_lang[lang]))


def test_scifact_ndcg_at_10(corpora):
    data = load_beir(corpora / "scifact")
    index = KeywordIndex.build(parse_page(f"# {d.title}\n\n{d.text}", f"{d.id}.md")
                               for d in data.documents)
    scores = [ndcg_at([h.path[:-3] for h in index.search(text, 10)], data.qrels[qid], 10)
              for qid, text in data.queries.items()]
    assert mean(scores) >= 0.67
