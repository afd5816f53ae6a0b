"""One embedding model per language (``embedding.languages``): each model owns a block of the
vector, so vectors of two models are never compared; a query falls back to the model that has
vectors where it searches; calibration is measured per model.

The fast tests route between two real hashing embedders; the slow ones run MiniLM and
multilingual-e5-small through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.graph.build import KnowledgeGraph
from mindgraph.page.parse import parse_page
from mindgraph.providers.embedding.hashing import HashingEmbedder
from mindgraph.providers.embedding.routed import RoutedEmbeddings
from mindgraph.retrieval.hybrid import HybridRetriever
from mindgraph.retrieval.keyword import KeywordIndex
from mindgraph.retrieval.vector import VectorRetriever
from mindgraph.stores.embedded import EmbeddedStore
from mindgraph.vectors.chunking import chunker_for
from mindgraph.vectors.sync import sync_pages


def routed() -> RoutedEmbeddings:
    return RoutedEmbeddings(HashingEmbedder(64), {"ja": HashingEmbedder(32)})


def embedded(tmp_path: Path, texts: dict[str, str], provider) -> tuple[dict, EmbeddedStore]:
    pages = {path: parse_page(text, path) for path, text in texts.items()}
    store = EmbeddedStore.for_state_dir(tmp_path / "state")
    sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider))
    return pages, store


def test_each_text_fills_only_its_languages_block():
    provider = routed()
    assert provider.dimension == 96
    assert provider.model_version == "local:routed(*=hashing:v1:64,ja=hashing:v1:32):96"
    docs = provider.embed_documents(["Sync your notes between devices",
                                     "デバイス間でノートを同期する"])
    assert np.allclose(np.linalg.norm(docs[0, :64]), 1) and not docs[0, 64:].any()
    assert np.allclose(np.linalg.norm(docs[1, 64:]), 1) and not docs[1, :64].any()
    english, japanese = provider.embed_queries(["sync notes", "ノートを同期"])
    # within a model its own cosine; across models exactly 0, never a comparison
    own = HashingEmbedder(64).embed_queries(["sync notes"])[0]
    mine = HashingEmbedder(64).embed_documents(["Sync your notes between devices"])[0]
    assert float(english @ docs[0]) == pytest.approx(float(own @ mine), abs=1e-6)
    assert float(english @ docs[1]) == 0.0 and float(japanese @ docs[0]) == 0.0
    assert float(japanese @ docs[1]) > 0.3


def test_a_query_falls_back_to_the_model_that_has_vectors_where_it_searches(tmp_path):
    provider = routed()
    pages, store = embedded(tmp_path, {
        "sync.md": "# 同期\n\nObsidian Sync は、すべてのデバイスの間でノートを同じ状態に保つための"
                   "公式のサービスです。\n\n## 設定\n\n```\nsync --vault notes --device laptop "
                   "--interval 60 --log sync.log\n```\n",
        "publish.md": "# 公開\n\nノートをウェブサイトとして世界に公開するための公式のサービスです。\n"},
        provider)
    vector = VectorRetriever(provider, store)
    assert vector.query_provider("ノートを同期") is provider.members[1]
    # an English query over Japanese pages only: its own model has no vectors here (the
    # code block of a Japanese page is embedded by the page's model), so the Japanese one
    # embeds it (before: every page scored exactly 0)
    hits = vector.search("Obsidian Sync", 5)
    assert hits[0].path == "sync.md" and hits[0].score > 0.1
    assert vector.query_provider("Obsidian Sync") is provider.members[1]


def test_calibration_is_measured_for_each_model(tmp_path):
    provider = routed()
    texts = {}
    for i in range(40):
        texts[f"en/p{i}.md"] = f"# Topic {i} alpha{i}\n\n## Part\n\nWords about alpha{i} and beta.\n"
        texts[f"ja/p{i}.md"] = f"# はなし{i}\n\n## ぶぶん\n\n第{i}の話題について書きます。\n"
    pages, store = embedded(tmp_path, texts, provider)
    calibration_file = tmp_path / "calibration.json"
    retriever = HybridRetriever(pages, KeywordIndex.build(pages.values()),
                                KnowledgeGraph.build(pages), VectorRetriever(provider, store),
                                calibration_file=calibration_file)
    english = retriever._levels("alpha3 words")
    japanese = retriever._levels("話題について")
    # one set of levels per model, each from the pseudo-queries that model embeds
    keys = sorted(json.loads(calibration_file.read_text()))
    assert [k.rsplit("|", 1)[1] for k in keys] == ["hashing:v1:32", "hashing:v1:64"]
    assert english != japanese and english.gap > 0 and japanese.gap > 0
    results = retriever.search("alpha3 words").results
    assert results[0].page == "en/p3.md"


def test_languages_must_name_local_models(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "mindgraph.yml").write_text(
        "paths: {wiki: wiki, state: state}\nembedding: {languages: {ja: e5-large}}\n")
    result = CliRunner().invoke(cli, ["embed", "-C", str(tmp_path), "--dry-run"])
    assert result.exit_code != 0
    assert "mindgraph.yml" in result.output and "embedding.languages.ja" in result.output
    assert "multilingual-e5-small" in result.output and "Traceback" not in result.output
    (tmp_path / "mindgraph.yml").write_text(
        "paths: {wiki: wiki, state: state}\n"
        "embedding: {provider: hashing, languages: {ja: multilingual-e5-small}}\n")
    result = CliRunner().invoke(cli, ["embed", "-C", str(tmp_path)])
    assert result.exit_code != 0 and "embedding.provider local" in result.output


@pytest.mark.slow
def test_minilm_for_english_and_e5_for_japanese_through_the_cli(tmp_path):
    wiki = tmp_path / "wiki"
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
    (tmp_path / "mindgraph.yml").write_text(
        "paths: {wiki: wiki, state: state}\n"
        "embedding: {languages: {ja: multilingual-e5-small, zh: multilingual-e5-small}}\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["embed", "-C", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["model_version"] == ("local:routed(*=local:all-MiniLM-L6-v2-w8a8:384,"
                                       "ja+zh=local:multilingual-e5-small-w8a8:384):768")

    def found_by_vector(query: str) -> list[str]:
        out = runner.invoke(cli, ["search", "--hybrid", query, "-C", str(tmp_path), "--json"])
        assert out.exit_code == 0, out.output
        return [r["page"] for r in json.loads(out.output)["results"] if "vector" in r["sources"]]

    # each query meets only the sections of its own language's model
    japanese = found_by_vector("スマートフォンとパソコンで保管庫を同じに保ちたい")
    english = found_by_vector("keep my vault the same on my phone and laptop")
    assert japanese[:1] == ["ja/同期.md"] and all(p.startswith("ja/") for p in japanese)
    assert english[:1] == ["en/Sync.md"] and all(p.startswith("en/") for p in english)


def test_a_views_fallback_model_is_decided_over_its_own_pages(tmp_path):
    # An identity whose view holds no Japanese page, in a workspace where another tenant's
    # or scope's pages are Japanese: its Japanese query falls back to the English model over
    # its own pages, as if those other pages did not exist (asked over every page, the query
    # went to the Japanese model and found nothing: the answer told the pages were there).
    from mindgraph.stores.routed import for_provider

    provider = routed()
    texts = {"acme/handbook.md": "# Handbook\n\nThe acme handbook covers the merger "
                                 "approval and the board meeting.\n",
             "globex/merger.md": "# 合併\n\n取締役会は来月に合併を承認する予定です。\n"}
    pages = {path: parse_page(text, path) for path, text in texts.items()}
    store = for_provider(EmbeddedStore.for_state_dir(tmp_path / "state"), provider)
    sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider))
    query = "合併の承認はいつですか"
    for view_first in (True, False):     # whoever asks first, each gets its own answer
        owner = VectorRetriever(provider, store)
        acme = owner.within({"acme/handbook.md"})
        askers = (acme, owner) if view_first else (owner, acme)
        answers = {id(r): [h.path for h in r.search(query, 5)] for r in askers}
        assert answers[id(owner)][0] == "globex/merger.md"
        assert owner.query_provider(query) is provider.members[1]
        assert answers[id(acme)] == ["acme/handbook.md"]
        assert acme.query_provider(query) is provider.members[0]
        assert acme.is_cached(query) and owner.is_cached(query)


def test_a_model_whose_first_vectors_come_later_is_searched_after_forget_models(tmp_path):
    # A long-running server over English pages only: a Japanese query falls back to the
    # English model; once a Japanese page is embedded as the core syncs it, the core calls
    # forget_models and the query (in the workspace and in every view) goes to its own model
    from mindgraph.stores.routed import for_provider

    provider = routed()
    store = for_provider(EmbeddedStore.for_state_dir(tmp_path / "state"), provider)
    english = parse_page("# Handbook\n\nThe handbook covers the merger approval.\n",
                         "handbook.md")
    sync_pages([english], provider, store, chunker_for(provider))
    owner = VectorRetriever(provider, store)
    view = owner.within({"handbook.md", "merger.md"})
    query = "合併の承認はいつですか"
    for retriever in (owner, view):
        assert retriever.query_provider(query) is provider.members[0]
    japanese = parse_page("# 合併\n\n取締役会は来月に合併を承認する予定です。\n", "merger.md")
    sync_pages([english, japanese], provider, store, chunker_for(provider))
    owner.forget_models()
    for retriever in (owner, view):
        assert retriever.query_provider(query) is provider.members[1]
        assert retriever.search(query, 5)[0].path == "merger.md"


class EnglishHashing(HashingEmbedder):
    """A hashing embedder that says it knows English only (as MiniLM does)."""

    languages = ("en",)


@pytest.fixture(params=["embedded", pytest.param("pgvector", marks=pytest.mark.pg)])
def routed_store(request, tmp_path):
    """An empty store of each kind, as the routed provider below needs it."""
    from mindgraph.stores.routed import for_provider

    provider = RoutedEmbeddings(EnglishHashing(64, name="english"),
                                {"ja": HashingEmbedder(256, name="multi")})
    if request.param == "embedded":
        inner = EmbeddedStore.for_state_dir(tmp_path / "state")
        yield provider, for_provider(inner, provider)
        return
    from mindgraph.stores.pgvector import PgVectorStore

    inner = PgVectorStore(request.getfixturevalue("pg_dsn"), table="mg_test_few_english")
    try:
        yield provider, for_provider(inner, provider)
    finally:
        inner.drop_table()
        inner.close()


def test_a_query_whose_model_holds_few_of_the_chunks_searched_uses_the_multilingual_one(
        routed_store):
    # A Japanese vault with one page written in English (its credits): the English model
    # holds 1 chunk of 13. An English question searched that one chunk (the vault's English
    # page first, every other page absent from the vector ranking); it now goes to the
    # multilingual model that embedded the rest, and says so. A view where English holds
    # its share keeps the English model.
    provider, store = routed_store
    texts = {"credits.md": "# Credits\n\nThanks to the translators and the testers.\n",
             "sync.md": "# 同期\n\nObsidian Sync は、すべてのデバイスの間でノートを同じ状態に"
                        "保つための公式のサービスです。\n"}
    for i in range(11):
        texts[f"p{i}.md"] = f"# はなし{i}\n\n第{i}の話題について書きます。\n"
    pages = {path: parse_page(text, path) for path, text in texts.items()}
    sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider))
    assert store.part_counts(provider.model_version) == (1, 12)
    assert store.part_counts(provider.model_version, pages={"credits.md", "sync.md"}) == (1, 1)
    assert store.count_within(provider.model_version) == 13

    vector = VectorRetriever(provider, store)
    query = "Obsidian Sync devices"
    assert vector.search(query, 3)[0].path == "sync.md"
    assert vector.query_provider(query) is provider.members[1]
    assert vector.route_note(query) == (
        "vectors by multi: only 1 of the 13 chunks searched carry english vectors (the model "
        "of English questions)")
    hybrid = HybridRetriever(pages, KeywordIndex.build(pages.values()),
                             KnowledgeGraph.build(pages), vector)
    answer = hybrid.search(query)
    assert answer.results[0].page == "sync.md"
    assert answer.results[0].sources["vector"]["model"] == "multi"
    assert any(d.startswith("vectors by multi: only 1 of the 13") for d in answer.degradation)

    view = vector.within({"credits.md", "sync.md"})       # English: half of what it sees
    assert view.query_provider(query) is provider.members[0]
    assert [h.path for h in view.search(query, 3)] == ["credits.md"]
    assert view.route_note(query) is None


def test_a_han_only_query_in_a_japanese_vault_is_embedded_by_the_japanese_model(tmp_path):
    # 「伏見稲荷」 has no kana: hybrid and keyword search read it as Japanese in a Japanese
    # vault (retrieval/query_language.py), but the vector side routed it to the Chinese
    # model, found no vectors of it there, and said it fell back from "the model of
    # Chinese questions"
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "伏見稲荷.md").write_text("# 伏見稲荷大社\n\n伏見稲荷大社は京都にある神社で、"
                                      "千本鳥居で知られています。\n")
    (wiki / "金閣寺.md").write_text("# 金閣寺\n\n金閣寺は京都の北にあるお寺です。池のほとりに"
                                    "建っています。\n")
    (tmp_path / "mindgraph.yml").write_text(
        "embedding: {languages: {ja: multilingual-e5-small, zh: use-multilingual-v3}}\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["embed", "-C", str(tmp_path)]).exit_code == 0
    result = runner.invoke(cli, ["search", "--hybrid", "伏見稲荷", "-C", str(tmp_path),
                                 "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["language"] == "ja"
    assert out["results"][0]["page"] == "伏見稲荷.md"
    assert {r["sources"]["vector"]["model"] for r in out["results"]} == \
        {"multilingual-e5-small-w8a8"}
    assert not [d for d in out["degradation"] if d.startswith("vectors by ")], out
