"""A tenant cannot time whether another searched a word: a Japanese or Chinese query's
words were cut through caches every identity of a server shares, so a search asked before
by anyone answered faster (its analysis 64 µs instead of 238: bench/bench_query_cache.py).
A query's words are now cut afresh for each answer: a second tenant's identical search
reads nothing the first left in those caches."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app
from mindgraph.text import cjk

from scopes_support import TOKENS, set_tokens, write_workspace

# words no note has: the answers are empty, so only the query's own words are cut
QUERIES = ["ぬらりひょんの妖怪辞典はどこですか", "魑魅魍魉的图鉴在哪里"]


@pytest.fixture
def server(tmp_path, monkeypatch):
    set_tokens(monkeypatch)
    root = write_workspace(tmp_path)
    assert CliRunner().invoke(cli, ["-C", str(root), "ingest"]).exit_code == 0
    return TestClient(create_app(Mindgraph.open(root)), base_url="http://127.0.0.1:8765")


def _shared_hits() -> int:
    return sum(f.cache_info().hits for f in (cjk.words, cjk._ja_node, cjk._zh_node))


@pytest.mark.parametrize("query", QUERIES)
def test_a_query_another_tenant_asked_reads_nothing_it_left_in_a_shared_cache(server, query):
    def search(who: str) -> dict:
        answer = server.get("/search", params={"q": query},
                            headers={"Authorization": f"Bearer {TOKENS[who]}"})
        assert answer.status_code == 200, answer.text
        return answer.json()

    first = search("alice")                                       # tenant acme
    before = _shared_hits()
    second = search("carol")                                      # tenant globex, same words
    assert _shared_hits() == before
    assert first["count"] == second["count"] == 0
