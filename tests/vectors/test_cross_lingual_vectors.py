"""`embedding.cross_lingual_vectors`: a Chinese question over English pages, through the CLI.

With the default routing (MiniLM for English, use-multilingual-v3 for Japanese and Chinese)
English pages carry MiniLM vectors only, so a Chinese question meets them by keywords (its
words translated) and not by meaning. With the option, USE also embeds every English section
(a second vector each, chunk ids ending in ``@xl``), and the question's USE vector meets
them. A real workspace: obsidian-help's English Publish pages and Japanese Sync pages;
heldout-zh-07 asks, in Chinese, how to customise a Publish site (its page's English
translation is "Customize your site"). Turned off again, `embed` removes the second vectors.
Both stores: the embedded one and PostgreSQL + pgvector.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

pytestmark = pytest.mark.slow

HELD_OUT = Path(__file__).resolve().parents[2] / "bench" / "questions" / \
    "obsidian-help-heldout.jsonl"
ANSWER = "en/Obsidian Publish/Customize your site.md"
TABLE = "mg_test_cross_lingual"


def run(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def question() -> str:
    lines = HELD_OUT.read_text(encoding="utf-8").splitlines()
    return next(q["query"] for q in map(json.loads, lines) if q["id"] == "heldout-zh-07")


@pytest.fixture(params=["embedded", pytest.param("pgvector", marks=pytest.mark.pg)])
def workspace(request, tmp_path, corpora, monkeypatch) -> Path:
    for folder in ("en/Obsidian Publish", "ja/Obsidian Sync"):
        shutil.copytree(corpora / "obsidian-help" / folder, tmp_path / "wiki" / folder)
    store = ""
    if request.param == "pgvector":
        monkeypatch.setenv("MINDGRAPH_PG_DSN", request.getfixturevalue("pg_dsn"))
        store = f"store: {{backend: pgvector, table: {TABLE}}}\n"
    (tmp_path / "store.yml").write_text(store)
    yield tmp_path
    if request.param == "pgvector":
        import psycopg

        with psycopg.connect(request.getfixturevalue("pg_dsn"), autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {TABLE}")


def configure(workspace: Path, on: bool) -> None:
    (workspace / "mindgraph.yml").write_text(
        "paths: {wiki: wiki, state: state}\n"
        f"embedding: {{cross_lingual_vectors: {str(on).lower()}}}\n"
        + (workspace / "store.yml").read_text())


def search(workspace: Path, query: str) -> list[dict]:
    out = run("search", "--hybrid", query, "-C", str(workspace), "--json", "-n", "5")
    return json.loads(out.stdout)["results"]


def test_a_chinese_question_meets_english_pages_by_the_multilingual_model(workspace,
                                                                           question):
    configure(workspace, on=True)
    first = json.loads(run("embed", "-C", str(workspace), "--json").stdout)
    results = search(workspace, question)
    assert results[0]["page"] == ANSWER, [r["page"] for r in results]
    assert results[0]["sources"]["vector"]["model"] == "use-multilingual-v3"
    assert json.loads(run("embed", "-C", str(workspace), "--json").stdout)["embedded"] == 0

    configure(workspace, on=False)          # the second vectors go, nothing else is embedded
    off = json.loads(run("embed", "-C", str(workspace), "--json").stdout)
    assert off["embedded"] == 0 and off["deleted_chunks"] > 0
    assert off["chunks"] == first["chunks"] - off["deleted_chunks"]
    results = search(workspace, question)
    pages = [r["page"] for r in results]
    assert ANSWER in pages and pages[0] != ANSWER, pages
    found = next(r for r in results if r["page"] == ANSWER)
    assert "vector" not in found["sources"]      # English pages: no USE vectors to meet
