"""bench/bench_scale_query.py's stand-in vectors follow the workspace's real provider: with the
default routing (MiniLM, USE for Japanese and Chinese) each chunk's vector is made of its own
model's sentence vectors and lands in that model's part of the real store, which `serve` and
hybrid search then use; with ``embedding: {languages: {}}`` everything is MiniLM's as before."""

import pytest

from bench_script_support import load_script
from mindgraph.core import Mindgraph
from mindgraph.stores.routed import part_version
from mindgraph.vectors.chunking import chunker_for

NOTES = {
    "Sync.md": "# Sync\n\nSync keeps your notes up to date on every device you sign in on.\n",
    "Canvas.md": "# Canvas\n\nCanvas is an infinite board for laying out notes and images.\n",
    "同期.md": "# 同期\n\n同期を使うと、すべての端末でノートが最新に保たれます。\n",
    "画布.md": "# 画布\n\n画布是一块无限的白板，可以摆放笔记和图片。\n",
}
POOL = 300          # sentences of the stand-in pool, embedded once per model for the test


@pytest.fixture
def scale_query(corpora, tmp_path, monkeypatch):
    # the corpora the fixture found, wherever the checkout is (a clone in /tmp has no
    # ../shared/corpora beside it): bench_vectors reads them when it is first imported
    monkeypatch.setenv("MINDGRAPH_CORPORA", str(corpora))
    script = load_script("bench_scale_query")
    monkeypatch.setattr(script.sys.modules["bench_ann"], "CACHE", tmp_path / "cache")
    import bench_vectors
    monkeypatch.setattr(bench_vectors, "CORPORA", corpora)
    return script


def _workspace(tmp_path, config: str):
    ws = tmp_path / "ws"
    (ws / "wiki").mkdir(parents=True)
    for name, text in NOTES.items():
        (ws / "wiki" / name).write_text(text, encoding="utf-8")
    (ws / "mindgraph.yml").write_text(config, encoding="utf-8")
    return ws


def test_routed_default_fills_each_models_part_with_its_own_sentences(scale_query, tmp_path):
    ws = _workspace(tmp_path, "")
    report = scale_query.prepare(ws, pool_limit=POOL)
    mg = Mindgraph.open(ws)
    try:
        provider, store = mg.embedding_provider(), mg.vector_store()
        assert report["model_version"] == provider.model_version
        assert provider.model_version.startswith("local:routed(")
        assert report["chunks"] == store.count(provider.model_version) == 4
        # each model's part holds its own pages, at its own width
        minilm = part_version(provider.model_version, 0, 384)
        use = part_version(provider.model_version, 1, 512)
        inner = store.inner
        assert set(inner.hashes(minilm)) == {"Sync.md", "Canvas.md"}
        assert set(inner.hashes(use)) == {"同期.md", "画布.md"}
        assert provider.model_version not in inner.model_versions()   # no wide rows
        # a stored vector is the stand-in of its chunk's text from its own model's pool
        stand_in = scale_query.RealisticVectors(provider, POOL)
        chunker = chunker_for(provider)
        plan_texts = {p.path: chunker.chunk_page(p)[0] for p in mg.vault().pages.values()}
        for page, route, width in (("Sync.md", 0, 384), ("同期.md", 1, 512),
                                   ("画布.md", 1, 512)):
            chunk = plan_texts[page]
            want = scale_query.realistic_for([chunk.text], stand_in.pool(route))[0]
            assert want.shape == (width,)
            part = part_version(provider.model_version, route, width)
            hit = inner.query(want, 1, part)[0]
            assert hit.page == page and hit.score == pytest.approx(1.0, abs=1e-3)
        # the two pools are different models' vectors of the same sentences
        assert stand_in.pool(0)[1].shape[1] == 384 and stand_in.pool(1)[1].shape[1] == 512
        # hybrid search over it uses the vector retriever (what bench_scale's serve needs)
        answer = mg.smart_search("同期 端末", 5)
        assert any(stage.split(":")[0] == "vector" for stage in answer.timings_ms), \
            (answer.timings_ms, answer.degradation)
    finally:
        mg.close()
    # run again: nothing left to embed
    assert "store_fill_and_index_s" not in scale_query.prepare(ws, pool_limit=POOL)


def test_minilm_only_setup_keeps_the_minilm_stand_ins(scale_query, tmp_path):
    ws = _workspace(tmp_path, "embedding:\n  languages: {}\n")
    report = scale_query.prepare(ws, pool_limit=POOL)
    assert report["model_version"] == "local:all-MiniLM-L6-v2-w8a8:384"
    assert report["chunks"] == 4
    mg = Mindgraph.open(ws)
    try:
        store = mg.vector_store()
        assert set(store.model_versions()) == {report["model_version"]}
        pool = scale_query.sentence_vectors(None, POOL)
        for page in mg.vault().pages.values():
            chunk = chunker_for(mg.embedding_provider()).chunk_page(page)[0]
            want = scale_query.realistic_for([chunk.text], pool)[0]
            hit = store.query(want, 1, report["model_version"])[0]
            assert hit.page == page.path and hit.score == pytest.approx(1.0, abs=1e-3)
    finally:
        mg.close()
