"""bench/bench_retrieval_levers.py: each lever changes what its README row says, and only that."""

from dataclasses import replace

from mindgraph.page.parse import parse_page
from mindgraph.retrieval.bm25 import BM25Params
from mindgraph.retrieval.datasets import Question
from mindgraph.retrieval.hybrid import HybridRetriever
from mindgraph.retrieval.keyword import KeywordIndex
from bench_script_support import BENCH, KEYWORD_ONLY, load_script, usage_error

SCRIPT = BENCH / "bench_retrieval_levers.py"
TEXTS = {
    # one section that says it all, once
    "One.md": "# One\n\nSync regions: move the remote vault to another data center.\n",
    # the same best section, and two more sections with some of the words
    "Many.md": ("# Many\n\nSync regions: move the remote vault to another data center.\n\n"
                "## Regions\n\nA remote vault lives in one region.\n\n"
                "## Moving\n\nMove a vault by making a new remote vault.\n"),
    "ja/同期.md": "# 同期\n\nリモート保管庫を別のデータセンターに移動します。保管庫の移動。\n",
    "ja/地域.md": "# 地域\n\nリモート保管庫の地域を選びます。\n",
}


def _module():
    return load_script("bench_retrieval_levers")


def _base() -> HybridRetriever:
    pages = {path: parse_page(text, path) for path, text in TEXTS.items()}
    return HybridRetriever(pages, KeywordIndex.build(pages.values()), None, None)


def _answer(retriever: HybridRetriever, query: str) -> list[tuple[str, float]]:
    return [(r.page, round(r.score, 6)) for r in
            retriever.search(query, KEYWORD_ONLY, use_cache=False).results]


def test_the_section_sum_lever_lifts_the_page_with_more_matching_sections():
    levers = _module()
    base = _base()
    query = "move the remote vault to another region"
    summed = levers.LEVERS["secsum0.3"](base)
    assert summed.pages is base.pages and summed.keyword.vocab is base.keyword.vocab
    many, one = (dict(_answer(r, query)) for r in (base, summed))
    assert many["Many.md"] / many["One.md"] < one["Many.md"] / one["One.md"]


def test_cjk_levers_leave_english_questions_alone_and_change_japanese_ones():
    levers = _module()
    base = _base()
    lever = levers.keyword_lever(langs=levers.CJK, bm25=BM25Params(k1=1.2, b=0.0))(base)
    english = "move the remote vault to another data center"
    assert _answer(lever, english) == _answer(base, english)
    japanese = "リモート保管庫を移動するには？"
    assert _answer(lever, japanese) != _answer(base, japanese)
    # the base index was not touched (its parameters are the lever's only on a copy)
    assert base.keyword.sections.params == BM25Params()
    assert _answer(base, japanese) == _answer(_base(), japanese)


def test_places_lists_each_relevant_pages_rank_with_0_for_missing():
    levers = _module()
    assert levers.places(["a", "b", "c"], ["c", "x", "a"]) == "3/0/1"


def test_an_unknown_lever_is_a_usage_error_naming_the_choices(tmp_path):
    said = usage_error(SCRIPT, tmp_path, "--levers", "base,nonesuch")
    assert "unknown ['nonesuch']" in said and "secsum0.1" in said


def test_the_choon_lever_meets_both_spellings_and_leaves_the_analyzer_as_it_was():
    from mindgraph.retrieval.analyzer import analyze
    levers = _module()
    pages = {p: parse_page(t, p) for p, t in {
        "ja/フィルタ.md": "# フィルタ\n\nフィルタで一覧を絞り込みます。\n",
        "ja/地域.md": "# 地域\n\nリモート保管庫の地域を選びます。\n"}.items()}
    base = HybridRetriever(pages, KeywordIndex.build(pages.values()), None, None)
    query = "フィルターの使い方"
    assert _answer(base, query) == []          # フィルター is not フィルタ to BM25
    lever = levers.LEVERS["choon"](base)
    assert [p for p, _ in _answer(lever, query)] == ["ja/フィルタ.md"]
    # only the lever's own index and searches see the folding
    assert analyze("フィルター") == ["フィルター"] and _answer(base, query) == []


def test_the_named_title_lever_lifts_only_the_page_the_question_names():
    levers = _module()
    texts = {"CSS snippets.md": "# CSS snippets\n\nA snippet changes how a theme looks.\n",
             "Themes.md": "# Themes\n\nA theme changes how the app looks; snippets too.\n"}
    pages = {p: parse_page(t, p) for p, t in texts.items()}
    base = HybridRetriever(pages, KeywordIndex.build(pages.values()), None, None)
    query = "How do CSS snippets and a theme change how the app looks?"
    before, after = (dict(_answer(r, query)) for r in
                     (base, levers.LEVERS["named0.1"](base)))
    assert after["CSS snippets.md"] > before["CSS snippets.md"]
    assert after["Themes.md"] == before["Themes.md"]


def test_the_nearwords_lever_has_bm25_search_a_near_word_of_the_vector_sides_pages(tmp_path):
    from mindgraph.providers.embedding.hashing import HashingEmbedder
    from mindgraph.retrieval.vector import VectorRetriever
    from mindgraph.stores.embedded import EmbeddedStore
    from mindgraph.vectors.chunking import chunker_for
    from mindgraph.vectors.sync import sync_pages

    levers = _module()
    texts = {"Regions.md": "# Sync regions\n\nYour remote vault's server can be in Europe.\n",
             "Servers.md": "# Servers\n\nA European server keeps the vault.\n"}
    pages = {p: parse_page(t, p) for p, t in texts.items()}
    provider = HashingEmbedder(256)
    store = EmbeddedStore.for_state_dir(tmp_path / "state")
    sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider))
    base = HybridRetriever(pages, KeywordIndex.build(pages.values()), None,
                           VectorRetriever(provider, store))
    # the trigram-hashing model puts "europe" near "european" (cosine about 0.3: shared trigrams), while the
    # stems differ (europ / european): BM25 alone finds only the page that says European
    lever = levers.rebuilt(base, cls=levers.NeighbourWords, floor=0.2, weight=1.0)
    assert set(lever._neighbours("Can my vault's server be European?")) == {"europ"}
    assert set(dict(_answer(base, "European"))) == {"Servers.md"}
    assert set(dict(_answer(lever, "European"))) == {"Servers.md", "Regions.md"}
    # a Japanese question is left alone
    assert lever._keyword_query("ヨーロッパのサーバー", []) == base._keyword_query(
        "ヨーロッパのサーバー", [])


def test_a_cjk_lever_reads_a_han_only_question_in_a_japanese_vault_as_japanese():
    """The levers read a question's language by the letters alone (Han alone: Chinese), so
    a cjk lever left a Han-only question of the Japanese pages alone; the product decides
    it with the vault's pages (retrieval/query_language.py) and so do the levers now."""
    levers = _module()
    base = _base()
    query = "保管庫移動"                 # Han alone: Japanese in this vault of ja pages only
    assert base.query_language(query) == "ja"
    other = KeywordIndex.build([base.pages["ja/地域.md"]])      # answers the chosen ones
    index = load_script("keyword_levers").LeverIndex
    lever = levers.rebuilt(base, index(base.keyword, langs=("ja",), other=other,
                                       languages=base.page_languages))
    assert lever.keyword._chosen(query)
    assert [h.path for h in lever.keyword.search(query, 5)] == \
        [h.path for h in other.search(query, 5)] == ["ja/地域.md"]


def test_the_graph_levers_reproduce_todays_boost_and_change_only_whom_a_link_counts_for():
    from mindgraph.graph.build import KnowledgeGraph
    from mindgraph.retrieval.results import SearchOptions
    levers = _module()
    texts = {"Hub.md": "# Hub\n\nThemes and snippets: see [[Alpha]] and [[Beta]].\n",
             "Alpha.md": "# Alpha\n\nA theme changes the look; snippets too, see [[Beta]].\n",
             "Beta.md": "# Beta\n\nA snippet changes the look of a theme.\n"}
    pages = {p: parse_page(t, p) for p, t in texts.items()}
    base = HybridRetriever(pages, KeywordIndex.build(pages.values()),
                           KnowledgeGraph.build(pages), None)
    options = SearchOptions(use_vector=False, expansion=False)
    query = "how does a theme or a snippet change the look"

    def boosts(retriever: HybridRetriever) -> dict[str, float]:
        return {r.page: r.boosts.get("graph", 0.0)
                for r in retriever.search(query, options, use_cache=False).results}

    today = boosts(base)
    assert all(today[p] > 0 for p in texts)
    assert boosts(levers.LEVERS["graph_same"](base)) == today
    cited = boosts(levers.LEVERS["graph_in"](base))
    # the hub links out only: no candidate cites it, so it gets nothing; Beta, cited by both
    # others, keeps what it had
    assert cited["Hub.md"] == 0.0 and cited["Beta.md"] == today["Beta.md"]
    mutual = boosts(levers.LEVERS["graph_mutual"](base))
    assert set(mutual.values()) == {0.0}        # no two pages link each other


def test_the_exact_named_title_lever_reads_the_titles_words_as_written():
    levers = _module()
    texts = {"CSS snippets.md": "# CSS snippets\n\nA snippet changes how a theme looks.\n",
             "Link notes.md": "# Link notes\n\nLink a note to another note.\n"}
    pages = {p: parse_page(t, p) for p, t in texts.items()}
    base = HybridRetriever(pages, KeywordIndex.build(pages.values()), None, None)
    stems = levers.LEVERS["named_early0.1"](base)
    exact = levers.LEVERS["named_exact_early0.1"](base)
    query = "How do CSS snippets change my linked notes?"
    # "linked notes" stems to the title's "link note"; as written it is another phrase
    assert stems._named(query) == {"CSS snippets.md", "Link notes.md"}
    assert exact._named(query) == {"CSS snippets.md"}
    before, after = (dict(_answer(r, query)) for r in (base, exact))
    assert after["CSS snippets.md"] > before["CSS snippets.md"]
    assert after["Link notes.md"] == before["Link notes.md"]


def test_a_question_file_is_scored_as_a_whole_and_per_language():
    levers = _module()
    questions = [Question("e1", "q", ("a.md",), "en", extra={"style": "keyword"}),
                 Question("e2", "q", ("b.md",), "en", extra={"style": "paraphrase"}),
                 Question("j1", "q", ("c.md",), "ja", extra={"style": "paraphrase"})]
    rankings = [["a.md", "x.md"], ["x.md", "y.md", "b.md"], ["x.md"] * 9 + ["c.md"]]
    cell = levers.question_file_cell("fresh", levers.scores(questions, rankings))
    # en: hit@1 1/2, R@5 2/2, MRR (1 + 1/3) / 2; ja: the page at rank 10 only
    assert cell == ("fresh 0.333/0.667/0.478 "
                    "(en 0.500/1.000/0.667 ja 0.000/0.000/0.100) "
                    "[MRR@10 by style: keyword 1.000 paraphrase 0.217]")
    # a set without styles prints none
    plain = [replace(q, extra={}) for q in questions]
    assert "style" not in levers.question_file_cell("dev", levers.scores(plain, rankings))
