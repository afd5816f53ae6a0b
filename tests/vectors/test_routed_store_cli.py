"""`embedding.languages` through the real CLI (MiniLM for English, use-multilingual-v3 for
Japanese and Chinese): each model's vectors are stored at its own width, without the other
model's zeros (stores/routed.py), in the embedded store and in a real PostgreSQL; a killed
`embed` resumes; a workspace embedded in the older wide layout answers as before and is
upgraded by the next `embed`; a single-model workspace is stored exactly as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from killed_embed import embed_killed_after

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.stores.embedded import EmbeddedStore, model_file_name
from mindgraph.stores.routed import part_version
from mindgraph.vectors.chunking import chunker_for
from mindgraph.vectors.sync import sync_pages

pytestmark = pytest.mark.slow

ROUTED = "embedding: {languages: {ja: use-multilingual-v3, zh: use-multilingual-v3}}\n"
WIDE = ("local:routed(*=local:all-MiniLM-L6-v2-w8a8:384,ja+zh=local:use-multilingual-v3:512)"
        ":896")
PARTS = (part_version(WIDE, 0, 384), part_version(WIDE, 1, 512))
ENGLISH = "keep my vault the same on my phone and laptop"
JAPANESE = "スマートフォンとパソコンで保管庫を同じに保ちたい"


def write_wiki(root: Path, extra_notes: int = 0) -> None:
    wiki = root / "wiki"
    (wiki / "en").mkdir(parents=True)
    (wiki / "ja").mkdir()
    (wiki / "en" / "Sync.md").write_text("# Sync\n\nKeep your vault the same on every "
                                         "device: phone, tablet and computer.\n")
    (wiki / "en" / "Canvas.md").write_text("# Canvas\n\nDraw cards and arrows on an "
                                           "infinite board.\n")
    (wiki / "ja" / "同期.md").write_text("# 同期\n\nスマートフォン、タブレット、パソコンの"
                                         "すべての端末で保管庫を同じ状態に保ちます。\n")
    (wiki / "ja" / "キャンバス.md").write_text("# キャンバス\n\n無限のボードにカードと矢印を"
                                               "描きます。\n")
    for i in range(extra_notes):
        (wiki / "en" / f"Note {i}.md").write_text(
            f"# Note {i}\n\nText of note {i} about topic {i}.\n\n## Part\n\nMore on {i}.\n")
        (wiki / "ja" / f"ノート{i}.md").write_text(
            f"# ノート{i}\n\n話題{i}についてのノートです。\n\n## 詳しく\n\n{i}の続き。\n")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    write_wiki(tmp_path)
    (tmp_path / "mindgraph.yml").write_text("paths: {wiki: wiki, state: state}\n" + ROUTED)
    return tmp_path


def run(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


def searched(workspace: Path, query: str) -> list[tuple[str, float]]:
    out = run("search", "--hybrid", query, "-C", str(workspace), "--json")
    return [(r["page"], r["sources"]["vector"]["score"])
            for r in json.loads(out.stdout)["results"] if "vector" in r["sources"]]


def vector_files(workspace: Path) -> list[str]:
    return sorted(p.name for p in (workspace / "state" / "vectors" / "default").glob("*.npz"))


def test_routed_embed_and_search_store_each_model_at_its_own_width(workspace):
    report = json.loads(run("embed", "-C", str(workspace), "--json").stdout)
    assert report["model_version"] == WIDE and report["embedded"] == 4
    assert report["other_models"] == {}
    assert vector_files(workspace) == sorted(model_file_name(p) for p in PARTS)
    store = EmbeddedStore.for_state_dir(workspace / "state")
    assert store.model_versions() == {PARTS[0]: 2, PARTS[1]: 2}
    assert {len(r.vector) for p in PARTS for b in store.records(p) for r in b} == {384, 512}
    japanese, english = searched(workspace, JAPANESE), searched(workspace, ENGLISH)
    assert japanese[0][0] == "ja/同期.md" and all(p.startswith("ja/") for p, _ in japanese)
    assert english[0][0] == "en/Sync.md" and all(p.startswith("en/") for p, _ in english)
    again = json.loads(run("embed", "-C", str(workspace), "--json").stdout)
    assert (again["embedded"], again["unchanged"]) == (0, 4)


@pytest.mark.pg
def test_routed_embed_and_search_in_postgresql(workspace, pg_dsn, monkeypatch):
    import psycopg

    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    (workspace / "mindgraph.yml").write_text(
        "paths: {wiki: wiki, state: state}\n" + ROUTED +
        "store: {backend: pgvector, table: mg_test_routed}\n")
    try:
        report = json.loads(run("embed", "-C", str(workspace), "--json").stdout)
        assert report["model_version"] == WIDE and report["embedded"] == 4
        with psycopg.connect(pg_dsn) as conn:
            rows = conn.execute("SELECT model_version, dimension, count(*) FROM mg_test_routed "
                                "GROUP BY 1, 2 ORDER BY 2").fetchall()
            indexes = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = "
                                   "'mg_test_routed' AND indexdef LIKE '%hnsw%'").fetchall()
        assert rows == [(PARTS[0], 384, 2), (PARTS[1], 512, 2)]
        # one HNSW index per model, each of its own width
        assert sorted("(384)" in d for (d,) in indexes) == [False, True]
        assert any("(512)" in d for (d,) in indexes)
        japanese, english = searched(workspace, JAPANESE), searched(workspace, ENGLISH)
        assert japanese[0][0] == "ja/同期.md" and all(p.startswith("ja/") for p, _ in japanese)
        assert english[0][0] == "en/Sync.md" and all(p.startswith("en/") for p, _ in english)
        assert json.loads(run("embed", "-C", str(workspace), "--json").stdout)["embedded"] == 0
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mg_test_routed")


@pytest.fixture(params=["embedded", pytest.param("pgvector", marks=pytest.mark.pg)])
def backend(request, workspace, monkeypatch):
    """Each store in turn: (what it holds, that of the wide layout, that of the split one):
    its model files, or its table's model_versions."""
    if request.param == "embedded":
        def files() -> set[str]:
            return set(vector_files(workspace))

        yield files, {model_file_name(WIDE)}, {model_file_name(p) for p in PARTS}
        return
    import psycopg

    dsn = request.getfixturevalue("pg_dsn")
    monkeypatch.setenv("MINDGRAPH_PG_DSN", dsn)
    (workspace / "mindgraph.yml").write_text(
        "paths: {wiki: wiki, state: state}\n" + ROUTED +
        "store: {backend: pgvector, table: mg_test_upgrade}\n")

    def stored() -> set[str]:
        with psycopg.connect(dsn) as conn:
            return {m for (m,) in conn.execute(
                "SELECT DISTINCT model_version FROM mg_test_upgrade").fetchall()}

    yield stored, {WIDE}, set(PARTS)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS mg_test_upgrade")


def test_the_wide_layout_answers_as_before_and_is_upgraded_by_the_next_embed(workspace,
                                                                             backend):
    stored, wide_layout, split_layout = backend
    # what an older mindgraph stored: the routed provider's 896-wide vectors, one model
    from mindgraph.stores.factory import create_store

    mg = Mindgraph.open(workspace)
    provider = mg.embedding_provider()
    wide = create_store(mg.settings)                # not given the provider: the wide layout
    sync_pages([mg.vault().pages[p] for p in sorted(mg.vault().pages)], provider, wide,
               chunker_for(provider))
    wide.close()
    mg.close()
    assert stored() == wide_layout
    before = {q: searched(workspace, q) for q in (JAPANESE, ENGLISH)}
    assert stored() == wide_layout                  # a search writes nothing
    dry = json.loads(run("embed", "-C", str(workspace), "--json", "--dry-run").stdout)
    assert (dry["unchanged"], dry["other_models"]) == (4, {})
    assert stored() == wide_layout
    report = json.loads(run("embed", "-C", str(workspace), "--json").stdout)
    assert (report["embedded"], report["unchanged"], report["other_models"]) == (0, 4, {})
    assert stored() == split_layout
    after = {q: searched(workspace, q) for q in (JAPANESE, ENGLISH)}
    for q in before:
        assert [p for p, _ in after[q]] == [p for p, _ in before[q]]
        assert [s for _, s in after[q]] == pytest.approx([s for _, s in before[q]], abs=2e-4)


def test_a_single_model_workspace_is_stored_as_before(tmp_path):
    write_wiki(tmp_path)
    # `languages: {}` turns the default routing off: one model, MiniLM
    (tmp_path / "mindgraph.yml").write_text(
        "paths: {wiki: wiki, state: state}\nembedding: {languages: {}}\n")
    report = json.loads(run("embed", "-C", str(tmp_path), "--json").stdout)
    assert report["model_version"] == "local:all-MiniLM-L6-v2-w8a8:384"
    assert vector_files(tmp_path) == [model_file_name(report["model_version"])]
    mg = Mindgraph.open(tmp_path)
    try:
        assert type(mg.vector_store()) is EmbeddedStore      # not wrapped: nothing changes
    finally:
        mg.close()
    assert searched(tmp_path, ENGLISH)[0][0] == "en/Sync.md"


def test_a_killed_routed_embed_resumes_from_what_it_stored(tmp_path):
    write_wiki(tmp_path, extra_notes=80)
    (tmp_path / "mindgraph.yml").write_text("paths: {wiki: wiki, state: state}\n" + ROUTED)
    reported = embed_killed_after(tmp_path, 128, "routed", "RoutedEmbeddings", 0.3,
                                  timeout=300)
    store = EmbeddedStore.for_state_dir(tmp_path / "state")
    kept = {p: store.count(p) for p in PARTS}
    store.close()
    assert 64 <= sum(kept.values()) <= reported + 64

    rerun = json.loads(run("embed", "--json", "-C", str(tmp_path)).stdout)
    assert rerun["unchanged"] == sum(kept.values())
    assert rerun["embedded"] == rerun["chunks"] - sum(kept.values()) > 0
    again = json.loads(run("embed", "--json", "-C", str(tmp_path)).stdout)
    assert again["embedded"] == 0 and again["unchanged"] == rerun["chunks"] == 324
    assert searched(tmp_path, JAPANESE)[0][0] == "ja/同期.md"


def test_the_multilingual_model_serving_a_query_gets_more_vector_weight(workspace,
                                                                        monkeypatch):
    """`retrieval.multilingual_vector_factor` (1 by default; 1.5 here): the vector side weighs
    more when USE serves the query (the Japanese one here), by the model that answers, not the
    language; an English query, served by MiniLM, is ranked and scored exactly as with 1."""
    run("embed", "-C", str(workspace), "--json")
    both = ("キャンバスと端末", "canvas board on every device")     # two pages each

    def scored(query: str) -> list[tuple[str, float]]:
        out = run("search", "--hybrid", query, "-C", str(workspace), "--json")
        return [(r["page"], r["score"]) for r in json.loads(out.stdout)["results"]]

    monkeypatch.setenv("MINDGRAPH_RETRIEVAL__MULTILINGUAL_VECTOR_FACTOR", "1.5")
    default = {q: scored(q) for q in both}
    monkeypatch.setenv("MINDGRAPH_RETRIEVAL__MULTILINGUAL_VECTOR_FACTOR", "1")
    off = {q: scored(q) for q in both}
    assert len(default[both[1]]) == 2 and default[both[1]] == off[both[1]]
    (top, first), (second, weighted) = default[both[0]]
    assert [p for p, _ in off[both[0]]] == [top, second] == ["ja/キャンバス.md", "ja/同期.md"]
    # the page the keywords favour less (端末 alone) moves with the vector side's weight
    assert first == off[both[0]][0][1] == 1.0 and weighted != off[both[0]][1][1]
    monkeypatch.setenv("MINDGRAPH_RETRIEVAL__MULTILINGUAL_VECTOR_FACTOR", "0")
    bad = CliRunner().invoke(cli, ["search", "--hybrid", JAPANESE, "-C", str(workspace)])
    assert bad.exit_code != 0
    assert "retrieval.multilingual_vector_factor" in bad.output
