"""Ranking metrics by hand-computed examples, and the benchmark loaders."""

import math

import pytest

from mindgraph.errors import InputError
from mindgraph.retrieval.datasets import load_beir, load_questions
from mindgraph.retrieval.metrics import hit_at, mrr_at, ndcg_at, recall_at


def test_metrics():
    ranked = ["x", "a", "y", "b"]
    assert hit_at(ranked, {"a"}, 1) == 0.0 and hit_at(ranked, {"a"}, 2) == 1.0
    assert recall_at(ranked, {"a", "b", "c"}, 5) == pytest.approx(2 / 3)
    assert mrr_at(ranked, {"b", "a"}, 10) == 0.5
    assert mrr_at(ranked, {"b"}, 3) == 0.0
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at(ranked, {"a": 1, "b": 1}, 10) == pytest.approx(expected)
    assert ndcg_at(["a"], {"a": 2, "b": 1}, 10) == pytest.approx(2 / (2 + 1 / math.log2(3)))
    assert ndcg_at(ranked, {}, 10) == 0.0


def test_loaders_read_the_real_files(corpora):
    data = load_beir(corpora / "scifact")
    assert len(data.documents) == 5183 and len(data.queries) == 300
    assert sum(len(v) for v in data.qrels.values()) == 339
    questions = load_questions(corpora / "obsidian-help-queries.dev.jsonl")
    assert len(questions) == 40 and {q.lang for q in questions} == {"en", "ja", "zh"}
    assert all(q.relevant for q in questions)


def test_bad_question_lines_name_the_file_and_line(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "1", "query": "x", "relevant": []}\n{"id": "2"}\n')
    with pytest.raises(InputError, match=r"q.jsonl:2: missing query, relevant"):
        load_questions(path)
    path.write_text("not json\n")
    with pytest.raises(InputError, match=r"q.jsonl:1: not valid JSON"):
        load_questions(path)
