"""Hybrid retrieval over a small wiki with real indexes (hashing embedder, embedded store)."""

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.retrieval.hybrid import SearchOptions

PAGES = {
    "Sync/Set up sync.md": "---\ntitle: Set up sync\n---\nTurn on remote vault sync in "
                           "settings. See [[Sync regions]] and [[Troubleshoot sync]].\n",
    "Sync/Sync regions.md": "---\ntitle: Sync regions\n---\nChoose the data center region "
                            "for your remote vault. Back to [[Set up sync]] and "
                            "[[Troubleshoot sync]].\n",
    "Sync/Troubleshoot sync.md": "---\ntitle: Troubleshoot sync\ntype: troubleshooting\n---\n"
                                 "When sync fails with an error, check [[Set up sync]] and "
                                 "[[Sync regions]].\n",
    "Plugins/Canvas.md": "---\ntitle: Canvas\n---\nCanvas is an infinite board for cards and "
                         "notes. Compare with [[Bookmarks]].\n",
    "Plugins/Bookmarks.md": "---\ntitle: Bookmarks\n---\nBookmarks keep favourite notes, "
                            "searches and headings at hand.\n",
    "Misc/Recipes.md": "---\ntitle: Recipes\n---\nPancakes need flour, eggs and milk.\n",
}


@pytest.fixture
def workspace(tmp_path):
    for rel, text in PAGES.items():
        path = tmp_path / "wiki" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 256\n")
    return tmp_path


@pytest.fixture
def mg(workspace):
    mg = Mindgraph.open(workspace)
    mg.embed()
    return mg


def test_results_explain_their_sources(mg):
    response = mg.smart_search("remote vault data center region")
    top = response.results[0]
    assert top.page == "Sync/Sync regions.md"
    assert set(top.sources) >= {"keyword", "vector"}
    assert top.sources["keyword"]["rank"] >= 1 and top.sources["vector"]["score"] > 0
    data = response.to_dict()
    assert data["degradation"] == []
    assert {"route", "keyword", "vector", "total"} <= set(data["timings_ms"])
    assert data["interpretation"].startswith("The best match is 'Sync regions'")
    assert data["follow_ups"]


def test_graph_boost_needs_two_linked_candidates(mg):
    with_boost = mg.smart_search("sync", options=SearchOptions(expansion=False))
    boosted = {r.page for r in with_boost.results if "graph" in r.boosts}
    # The three sync pages link to each other: each has two other candidates as neighbours.
    assert boosted == {"Sync/Set up sync.md", "Sync/Sync regions.md",
                       "Sync/Troubleshoot sync.md"}
    without = mg.smart_search("sync", options=SearchOptions(graph_boost=False, expansion=False))
    assert all("graph" not in r.boosts for r in without.results)


def test_failure_intent_favours_troubleshooting_pages(mg):
    response = mg.smart_search("sync fails with an error, how do I fix it?")
    assert response.intent.name == "failure"
    assert response.results[0].page == "Sync/Troubleshoot sync.md"
    assert response.results[0].boosts.get("failure_page") == 0.1


def test_multi_concept_query_is_expanded(mg):
    response = mg.smart_search("Canvas vs Bookmarks")
    assert response.intent.name == "relation"
    assert list(response.expanded_queries) == ["Canvas", "Bookmarks"]
    pages = [r.page for r in response.results[:2]]
    assert set(pages) == {"Plugins/Canvas.md", "Plugins/Bookmarks.md"}


def test_minimum_score_never_wipes_out_everything(workspace):
    (workspace / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\nretrieval:\n  fusion: rrf\n  min_score: 0.999\n"
        "  expansion: off\n")
    mg = Mindgraph.open(workspace)
    mg.embed()
    # Two topics: no page is first for both retrievers, so nothing reaches 0.999 ...
    split = mg.smart_search("flour board", options=SearchOptions(graph_boost=False))
    assert {r.page for r in split.results[:2]} == {"Plugins/Canvas.md", "Misc/Recipes.md"}
    assert all(r.score < 0.999 for r in split.results)
    assert any("minimum" in d for d in split.degradation)
    # ... while a page first for both passes the threshold and nothing is said.
    agreed = mg.smart_search("pancakes eggs", options=SearchOptions(graph_boost=False))
    assert [r.page for r in agreed.results] == ["Misc/Recipes.md"]
    assert agreed.degradation == ()


def test_store_down_degrades_to_keyword(workspace, monkeypatch):
    (workspace / "mindgraph.yml").write_text(
        "store:\n  backend: pgvector\n  dsn_env: MG_TEST_DOWN_DSN\n")
    monkeypatch.setenv("MG_TEST_DOWN_DSN", "postgresql://nobody:secret@127.0.0.1:1/none")
    response = Mindgraph.open(workspace).smart_search("region data center")
    assert response.results[0].page == "Sync/Sync regions.md"
    assert "vector" not in response.results[0].sources
    assert any("keyword-only" in d for d in response.degradation)
    assert "secret" not in json.dumps(response.to_dict())


def test_no_vectors_yet_says_run_embed(workspace):
    mg = Mindgraph.open(workspace)
    response = mg.smart_search("region")
    assert any("mindgraph embed" in d for d in response.degradation)


def test_japanese_query_gets_japanese_follow_ups(mg):
    response = mg.smart_search("同期の地域はどこ？")
    assert response.language == "ja"
    assert response.intent.name == "location"


def test_recency_decays_dated_pages_unless_evergreen(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "old.md").write_text("---\ntitle: Old\nupdated: 2015-01-01\n---\nkayak trips\n")
    (wiki / "new.md").write_text("---\ntitle: New\nupdated: 2099-01-01\n---\nkayak trips\n")
    (wiki / "keep.md").write_text("---\ntitle: Keep\nupdated: 2015-01-01\ntags: [evergreen]\n"
                                  "---\nkayak trips\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n"
                                            "retrieval:\n  min_score: 0\n")
    mg = Mindgraph.open(tmp_path)
    results = {r.page: r for r in mg.smart_search("kayak trips").results}
    assert results["old.md"].boosts["recency"] < 0.01
    assert "recency" not in results["keep.md"].boosts
    assert results["keep.md"].score > results["old.md"].score


def test_search_hybrid_cli_json(workspace):
    runner = CliRunner()
    assert runner.invoke(cli, ["embed", "-C", str(workspace)]).exit_code == 0
    result = runner.invoke(cli, ["search", "--hybrid", "data center region", "-C",
                                 str(workspace), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["results"][0]["page"] == "Sync/Sync regions.md"
    assert data["intent"]["name"] in {"default", "location"}


def test_context_block_cites_sources(mg):
    block = mg.context("I am choosing the data center region for my remote vault", limit=2)
    assert block.status == "ok"
    assert block.sources[0] == "Sync/Sync regions.md"
    assert "### Relevant notes" in block.markdown and "(Sync/Sync regions.md" in block.markdown
    assert len(block.sources) == 2


def test_context_times_out_quietly(mg, monkeypatch):
    import time as _time

    def slow(*args, **kwargs):
        _time.sleep(2)

    monkeypatch.setattr(mg, "smart_search", slow)
    started = _time.perf_counter()
    block = mg.context("anything", timeout_s=0.2)
    assert _time.perf_counter() - started < 1.0
    assert (block.markdown, block.status) == ("", "timeout")


def test_context_command_never_fails(tmp_path):
    result = CliRunner().invoke(cli, ["context", "anything", "-C", str(tmp_path / "missing"),
                                      "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["markdown"] == "" and data["status"] == "error"
    assert "does not exist (no such folder)" in data["detail"]
    assert not (tmp_path / "missing").exists()     # a mistyped -C leaves nothing behind
    plain = tmp_path / "plain"
    plain.mkdir()
    assert CliRunner().invoke(cli, ["context", "x", "-C", str(plain)]).exit_code == 0
    assert list(plain.iterdir()) == []
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "mindgraph.yml").write_text("nonsense: [\n")
    assert CliRunner().invoke(cli, ["context", "x", "-C", str(broken)]).exit_code == 0


def test_english_only_model_gets_less_weight_on_cjk_queries(mg):
    from mindgraph.providers.embedding.base import model_languages

    retriever = mg.hybrid_retriever()
    assert model_languages(retriever.vector.provider) is None      # hashing: no claim
    # one model (not routed): multilingual_vector_factor is for a routed multilingual member
    assert retriever._vector_factor("ブックマークの使い方") == 1.0
    retriever.vector.provider.languages = ("en",)
    assert retriever._vector_factor("ブックマークの使い方") == \
        retriever.settings.unsupported_language_vector_factor == 0.1
    assert retriever._vector_factor("how to use bookmarks") == 1.0
    for other in ("캔버스 플러그인", "Как создать заметку", "วิธีการสร้างโน้ต"):   # not English
        assert retriever._vector_factor(other) == 0.1
    assert retriever._vector_factor("café crème brûlée") == 1.0           # Latin accents


def test_repeated_query_is_answered_from_cache_until_the_wiki_changes(mg, workspace):
    first = mg.smart_search("data center region")
    again = mg.smart_search("data center region")
    assert (first.cached, again.cached) == (False, True)
    assert [r.page for r in again.results] == [r.page for r in first.results]
    (workspace / "wiki" / "Misc" / "Regions FAQ.md").write_text(
        "---\ntitle: Regions FAQ\n---\nWhich data center region should I pick?\n")
    after_edit = mg.smart_search("data center region")
    assert not after_edit.cached
    assert "Misc/Regions FAQ.md" in [r.page for r in after_edit.results]


def test_retrievers_run_in_parallel_while_a_remote_model_embeds(mg):
    """With a remote model, a new query's keyword search runs during the model call; with
    its vector cached, or with an in-process model, both run in the calling thread."""
    import threading
    import time

    retriever = mg.hybrid_retriever()
    provider = retriever.vector.provider
    real = provider.embed_queries
    seen: list[str] = []

    def slow(texts):
        time.sleep(0.05)           # stands in for model inference (GIL released)
        return real(texts)

    def keyword_search(query, limit, *more, _real=retriever.keyword.search):
        seen.append(threading.current_thread().name)
        return _real(query, limit, *more)

    provider.embed_queries = slow
    retriever.keyword.search = keyword_search
    options = SearchOptions(expansion=False)
    retriever.search("data center region", options, use_cache=False)   # in-process model
    provider.remote = True                  # as the Gemini and OpenAI providers declare
    first = retriever.search("remote vault region", options, use_cache=False)
    again = retriever.search("remote vault region", options, use_cache=False)
    here = threading.current_thread().name
    assert seen[0] == here and seen[1].startswith("mindgraph-retrieval") and seen[2] == here
    assert [r.page for r in again.results] == [r.page for r in first.results]


def test_changed_pages_are_embedded_before_the_next_query(mg, workspace):
    mg.smart_search("sync")                              # vector search is now open
    (workspace / "wiki" / "Plugins" / "Zeppelins.md").write_text(
        "---\ntitle: Zeppelins\n---\nAirships carry trunks across the sea.\n")
    (workspace / "wiki" / "Misc" / "Recipes.md").unlink()
    response = mg.smart_search("airships across the sea")
    top = response.results[0]
    assert top.page == "Plugins/Zeppelins.md" and "vector" in top.sources
    assert response.degradation == ()
    store = mg.vector_store()
    assert "Misc/Recipes.md" not in store.hashes(mg.embedding_provider().model_version)
    assert mg.plan_embed().is_noop                       # nothing left for `mindgraph embed`


def test_too_many_changed_sections_leave_a_note_until_embed(workspace):
    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 256\n"
                                             "serve:\n  embed_changes_max_chunks: 1\n")
    mg = Mindgraph.open(workspace)
    mg.embed()
    mg.smart_search("sync")
    (workspace / "wiki" / "Long.md").write_text(
        "# Long\n\nIntro.\n\n## One\n\nfirst part\n\n## Two\n\nsecond part\n")
    response = mg.smart_search("second part")
    assert any("changed pages not embedded yet: 1 " in d for d in response.degradation)
    assert response.results[0].page == "Long.md"         # keywords still find it
    report, _ = mg.embed()
    assert report.embedded == 3
    assert mg.smart_search("second part").degradation == ()


def test_missing_scores_are_filled_with_each_retrievers_real_score(workspace):
    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 256\n"
                                             "retrieval:\n  fill_missing_scores: true\n")
    mg = Mindgraph.open(workspace)
    mg.embed()
    retriever = mg.hybrid_retriever()
    query = "remote vault region"
    found = {h.path: h.score for h in retriever.keyword.search(query, 50)}
    every = retriever.keyword.page_scores(query, list(retriever.pages))
    assert all(every[p] == pytest.approx(s) for p, s in found.items())
    assert all(every[p] == 0.0 for p in every if p not in found)
    # a page's vector score is its best chunk's cosine, computed here from the store
    vector = retriever.vector.embed_query(query)
    version = retriever.vector.model_version
    best: dict[str, float] = {}
    for hit in retriever.vector.store.query(vector, 10_000, version):
        best[hit.page] = max(best.get(hit.page, -1.0), hit.score)
    assert retriever.vector.page_scores(query, list(best)) == pytest.approx(best)
    # fusion sees every page of either list with both retrievers' scores
    scored = {"keyword": [("Sync/Sync regions.md", 0.9)],
              "vector": [("Plugins/Canvas.md", 0.4)]}
    degradation: list[str] = []
    retriever._fill_missing(query, scored, degradation)
    assert degradation == []
    assert scored["keyword"][1] == ("Plugins/Canvas.md",
                                    every["Plugins/Canvas.md"])
    assert scored["vector"][1] == pytest.approx(("Sync/Sync regions.md",
                                                 best["Sync/Sync regions.md"]))


def test_a_store_failing_during_the_fill_never_fails_the_search(workspace):
    from mindgraph.errors import StoreError

    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 256\n"
                                             "retrieval:\n  fill_missing_scores: true\n"
                                             "serve:\n  embed_changes_max_chunks: 0\n")
    mg = Mindgraph.open(workspace)
    mg.embed()
    # a page without vectors: only keywords find it, so the fill asks the store about it
    (workspace / "wiki" / "Misc" / "Gliders.md").write_text("# Gliders\n\nGliders ride "
                                                            "thermals over the vault.\n")
    retriever = mg.hybrid_retriever()
    real = retriever.vector.store.query

    def query(vector, k, model_version, **filters):
        if filters.get("pages") is not None:
            raise StoreError("connection lost")           # e.g. pgvector restarting
        return real(vector, k, model_version, **filters)

    retriever.vector.store.query = query
    response = retriever.search("gliders thermals vault", use_cache=False)
    assert response.results[0].page == "Misc/Gliders.md"
    assert any("vector scores of the other retriever's pages failed" in d and
               "connection lost" in d for d in response.degradation)


def test_after_a_provider_failure_queries_skip_the_model_for_a_while(mg, monkeypatch):
    from mindgraph.errors import ProviderError
    from mindgraph.retrieval import vector as vector_module

    retriever = mg.hybrid_retriever()
    provider = retriever.vector.provider
    real = provider.embed_queries
    calls: list[str] = []

    def down(texts):
        calls.extend(texts)
        raise ProviderError("timed out after 60 s")

    provider.embed_queries = down
    first = retriever.search("remote vault region", use_cache=False)
    second = retriever.search("data center", use_cache=False)
    assert calls == ["remote vault region"]                # the second never waited on it
    assert first.results and second.results                # keywords answered both
    # the provider's words for the operator (detail), its type for agents
    assert any("timed out after 60 s" in getattr(d, "detail", d) and "ProviderError" in d
               for d in second.degradation), second.degradation
    provider.embed_queries = real
    monkeypatch.setattr(vector_module, "PAUSE_AFTER_FAILURE_S", 0.0)
    third = retriever.search("data center", use_cache=False)
    assert "vector" in third.results[0].sources and third.degradation == ()


def test_each_retrievers_top_pages_are_reserved_a_place_in_the_first_five(mg):
    from mindgraph.retrieval.results import Candidate

    retriever = mg.hybrid_retriever()

    def candidates():
        found = {f"K{i}.md": Candidate(score=1.0 - i / 10,
                                        sources={"keyword": {"rank": i + 1, "score": 1.0}})
                 for i in range(8)}
        # ranked first and second by meaning, missed by keywords: fusion left them last
        for rank in (1, 2):
            found[f"V{rank}.md"] = Candidate(score=0.2 - rank / 100,
                                             sources={"vector": {"rank": rank, "score": 0.9}})
        return found

    def order(found):
        return sorted(found, key=lambda p: (-found[p].score, found[p].tier, p))

    lifted = candidates()
    retriever._reserve(lifted, retriever._reserve_picks(lifted, {"keyword": 0.6,
                                                                  "vector": 0.4}))
    assert order(lifted)[:6] == ["K0.md", "K1.md", "K2.md", "V1.md", "V2.md", "K3.md"]
    scores = [lifted[p].score for p in order(lifted)]
    assert scores == sorted(scores, reverse=True)           # still the order of the scores
    assert 0.7 < lifted["V1.md"].score < 0.8 and lifted["V2.md"].boosts["reserved"] > 0
    assert all("reserved" not in c.boosts for p, c in lifted.items() if p[0] == "K")
    # ties at the top: a reserved page never takes a higher place than the pages there
    tied = {f"T{i}.md": Candidate(score=0.5, sources={"keyword": {"rank": i + 1, "score": 1}})
            for i in range(6)}
    tied["V.md"] = Candidate(score=0.1, sources={"vector": {"rank": 1, "score": 0.9}})
    retriever._reserve(tied, retriever._reserve_picks(tied, {"keyword": 0.5, "vector": 0.5}))
    assert order(tied).index("V.md") == 4
    # a pick already in the first five keeps its place: a late pick takes a non-pick's
    placed = {"K0.md": Candidate(score=0.9, sources={"keyword": {"rank": 1, "score": 1}})}
    placed.update({f"X{i}.md": Candidate(score=0.8 - i / 100) for i in range(3)})
    placed["K1.md"] = Candidate(score=0.7, sources={"keyword": {"rank": 2, "score": 1}})
    placed["V.md"] = Candidate(score=0.1, sources={"vector": {"rank": 1, "score": 0.9}})
    retriever._reserve(placed, retriever._reserve_picks(placed, {"keyword": 0.5,
                                                                  "vector": 0.5}))
    assert order(placed)[:5] == ["K0.md", "X0.md", "X1.md", "K1.md", "V.md"]
    assert order(placed)[5] == "X2.md" and "reserved" not in placed["X2.md"].boosts
    # as many picks as places, none of them first: both still end in the first places
    from dataclasses import replace as _replace
    narrow = mg.hybrid_retriever()
    narrow.settings = _replace(narrow.settings, reserve_within=2)
    crowded = {"P8.md": Candidate(score=0.91),
               "P4.md": Candidate(score=0.77, sources={"keyword": {"rank": 1, "score": 1}}),
               "P5.md": Candidate(score=0.70),
               "P7.md": Candidate(score=0.5, sources={"vector": {"rank": 1, "score": 0.9}})}
    narrow._reserve(crowded, ["P4.md", "P7.md"])
    assert sorted(order(crowded)[:2]) == ["P4.md", "P7.md"]
    # a retriever with a small share of the weight (MiniLM on Japanese) reserves nothing
    weak = candidates()
    assert retriever._reserve_picks(weak, {"keyword": 0.94, "vector": 0.06}) == \
        ["K0.md", "K1.md"]
    # a third retriever (the twin ranking, 0.3 of BM25's weight) keeps its picks when the vector
    # side is trusted at full weight (a multilingual model on a Japanese question)
    from mindgraph.retrieval.fusion import reserve_shares
    three = candidates()
    three["T.md"] = Candidate(score=0.15, sources={"twin": {"rank": 1, "score": 0.95}})
    shares = reserve_shares({"keyword": 0.6, "vector": 0.4, "twin": 0.18})
    assert retriever._reserve_picks(three, shares) == ["K0.md", "K1.md", "V1.md", "V2.md",
                                                       "T.md"]


def test_reserving_can_be_turned_off(workspace):
    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 256\n"
                                             "retrieval:\n  reserve_top: 0\n")
    from mindgraph.retrieval.results import Candidate

    retriever = Mindgraph.open(workspace).hybrid_retriever()
    found = {f"K{i}.md": Candidate(score=1.0 - i / 10) for i in range(8)}
    found["V.md"] = Candidate(score=0.2, sources={"vector": {"rank": 1, "score": 0.9}})
    assert retriever._reserve_picks(found, {"keyword": 0.5, "vector": 0.5}) == []


def test_a_query_without_words_searches_nothing_and_says_so(mg):
    for query in ("", "   ", ".", "...", "?!", "🎨", "🙂🙂"):
        response = mg.smart_search(query)
        assert response.results == () and "no letters or digits" in response.degradation[0]
        block = mg.context(query)
        assert block.markdown == "" and "no letters or digits" in block.detail
    assert mg.smart_search("IT").results                # stop words are still words


def test_results_by_meaning_alone_are_flagged_and_weak_ones_kept_out_of_context(mg):
    from mindgraph.retrieval.context import render_context
    from mindgraph.retrieval.results import HybridResult

    response = mg.smart_search("zyxwv qwpfk")             # words no page contains
    assert response.results
    assert any("by meaning alone (best similarity" in d for d in response.degradation)

    def result(page, sources):
        return HybridResult(page, page, None, "", "text", 0.5, sources)

    weak = result("Weak.md", {"vector": {"rank": 1, "score": 0.2}})
    close = result("Close.md", {"vector": {"rank": 2, "score": 0.6}})
    worded = result("Worded.md", {"keyword": {"rank": 1, "score": 3.0},
                                  "vector": {"rank": 3, "score": 0.1}})
    shown = render_context("x", replace(response, results=(weak, close, worded)), 3, 0.35)
    assert shown.sources == ("Close.md", "Worded.md")
    empty = render_context("x", replace(response, results=(weak,)), 3, 0.35)
    assert empty.status == "empty" and "none is close in meaning" in empty.detail
    for situation in ("-->\n# injected\n<!--", "alpha ---> injected", "a --!> b", "x <!-- y"):
        hostile = render_context(situation, replace(response, results=(close,)))
        header = hostile.markdown.split("\n", 1)[0]
        assert header.startswith("<!-- ") and header.endswith(" -->")
        assert "<" not in header[4:-3] and ">" not in header[4:-3]   # nothing closes it early


def test_pages_in_the_querys_language_come_before_their_translations(tmp_path):
    wiki = tmp_path / "wiki"
    (wiki / "en").mkdir(parents=True)
    (wiki / "zh").mkdir()
    (wiki / "en" / "Headless Sync.md").write_text(
        "# Headless Sync\n\nSync a vault from the command line, without the desktop app.\n")
    (wiki / "zh" / "Headless Sync.md").write_text(   # more "Headless Sync" than the English
        "---\naliases: [Headless Sync, Obsidian Headless Sync]\n---\n# Headless Sync\n\n"
        "Headless Sync：无头客户端可以在不使用桌面应用的情况下同步仓库。Headless Sync 适用于自动化工作流。"
        "Headless Sync 命令行。\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    mg = Mindgraph.open(tmp_path)
    mg.embed()
    top = mg.smart_search("headless sync").results
    assert [r.page for r in top[:2]] == ["en/Headless Sync.md", "zh/Headless Sync.md"]
    assert top[1].boosts["other_language"] < 0
    assert [r.path for r in mg.search("headless sync")][:2] == ["en/Headless Sync.md",
                                                                  "zh/Headless Sync.md"]
    assert mg.smart_search("无头客户端同步").results[0].page == "zh/Headless Sync.md"
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n"
                                            "retrieval:\n  other_language_factor: 1\n")
    same = Mindgraph.open(tmp_path).smart_search("headless sync").results
    assert same[0].page == "zh/Headless Sync.md"          # what the preference corrects
    assert all("other_language" not in r.boosts for r in same)


def test_a_boost_never_carries_a_page_over_the_minimum_score(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for name in ("K1", "K2", "K3"):
        (wiki / f"{name}.md").write_text(f"# {name}\n\nKayak trips on the river. Kayak rental "
                                         f"and kayak safety. See [[K1]], [[K2]], [[K3]].\n")
    weather = " ".join(["The weather report covers rain, wind and sun for the valley."] * 40)
    (wiki / "W.md").write_text(f"# Weather\n\n{weather} A kayak once. See [[K1]] and [[K2]].\n")

    def search(min_score: float) -> dict:
        (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n"
                                                f"retrieval:\n  min_score: {min_score}\n")
        result = CliRunner().invoke(cli, ["search", "--hybrid", "kayak", "-C", str(tmp_path),
                                          "--json"])
        assert result.exit_code == 0, result.output
        return {r["page"]: r for r in json.loads(result.output)["results"]}

    # W.md: one mention in a long page, linked to two other results (+0.1 graph boost)
    weak = search(0)["W.md"]
    own = weak["score"] - weak["boosts"]["graph"]
    results = search(round(own + 0.05, 4))      # under the cutoff alone, over it boosted
    assert sorted(results) == ["K1.md", "K2.md", "K3.md"]
    assert all(r["boosts"]["graph"] == 0.1 for r in results.values())


def test_follow_ups_of_a_chinese_answer_name_pages_in_chinese_first(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    wiki = tmp_path / "wiki"
    (wiki / "en").mkdir(parents=True)
    (wiki / "zh").mkdir()
    (wiki / "en" / "Introduction to Sync.md").write_text(
        "---\ntitle: Introduction to Sync\n---\nSync keeps your notes the same on every "
        "device you use.\n")
    (wiki / "zh" / "官方同步简介.md").write_text(
        "---\ntitle: 官方同步简介\naliases: [Introduction to Sync]\n---\n"
        "官方同步服务让你在不同设备之间同步笔记。\n")
    (wiki / "zh" / "同步笔记.md").write_text(
        "---\ntitle: 同步笔记\n---\n同步笔记的方法有很多。[[Introduction to Sync|同步]] 通过远程仓库"
        "同步笔记，也可以阅读[[官方同步简介]]。\n")
    result = CliRunner().invoke(cli, ["search", "--hybrid", "同步笔记的方法", "--json",
                                      "-C", str(tmp_path)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["results"][0]["page"] == "zh/同步笔记.md"
    assert data["follow_ups"][0] == "同步笔记和官方同步简介有什么关系？"


def test_the_graph_boost_follows_the_scores_of_the_linked_candidates(tmp_path):
    """A page linked to the best match gains the whole boost, even with one link; a hub linked
    to two weak matches gains only their share of the best score (the former rule gave the
    hub +0.1 for its two links and the page nothing)."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    filler = " ".join(["The weather report covers rain, wind and sun for the valley."] * 30)
    (wiki / "Kayak.md").write_text("# Kayak\n\nKayak trips, kayak rental and kayak safety on "
                                   "the kayak river.\n")
    (wiki / "Paddle.md").write_text(f"# Paddle\n\n{filler} A kayak paddle. See [[Kayak]].\n")
    (wiki / "Hub.md").write_text(f"# Hub\n\n{filler} A kayak hub. See [[W1]] and [[W2]].\n")
    for name in ("W1", "W2"):
        (wiki / f"{name}.md").write_text(f"# {name}\n\n{filler * 6} One kayak.\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n"
                                            "retrieval:\n  min_score: 0\n")
    result = CliRunner().invoke(cli, ["search", "--hybrid", "kayak", "-C", str(tmp_path),
                                      "--json"])
    assert result.exit_code == 0, result.output
    found = {r["page"]: r for r in json.loads(result.output)["results"]}
    assert found["Paddle.md"]["boosts"]["graph"] == pytest.approx(0.1)
    assert found["Paddle.md"]["sources"]["graph"] == {"linked": 1}
    def own(page: str) -> float:      # the score before any boost
        return found[page]["score"] - sum(found[page]["boosts"].values())

    hub = found["Hub.md"]["boosts"]["graph"]
    assert hub == pytest.approx(0.1 * (own("W1.md") + own("W2.md")) / own("Kayak.md"),
                                abs=1e-3)
    assert hub < 0.1
