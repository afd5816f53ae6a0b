"""The intent router's rules and the fusion functions."""

import pytest

from mindgraph.errors import ConfigError
from mindgraph.retrieval.fusion import (maxnorm, meanmax, minmax, rrf_fusion, weighted_fusion,
                                       zscore)
from mindgraph.retrieval.router import IntentRouter


@pytest.mark.parametrize("query, intent", [
    ("Where is the attachment folder setting?", "location"),
    ("Which page explains sync regions?", "location"),
    ("What is a canvas and why use it?", "concept"),
    ("How do aliases relate to display text? Difference between them", "relation"),
    ("Canvas vs Bookmarks", "relation"),
    ("Sync fails with an error, how do I fix it?", "failure"),
    ("ノートの場所はどこですか", "location"),
    ("コールアウトとは何ですか", "concept"),
    ("ブックマークとキャンバスの違いと関係", "relation"),
    ("インポートでエラーが出て取り込まれていない", "failure"),
    ("Publish 网站上 CSS 没有效果，这是为什么？", "failure"),
    ("标签和标签视图的区别和关系", "relation"),
    ("canvas plugin", "default"),
])
def test_routes(query, intent):
    assert IntentRouter().route(query).name == intent


def test_rules_do_not_fire_inside_words():
    router = IntentRouter()
    assert router.route("canvas").hits == ()          # "vs" inside "canvas"
    assert router.route("prefix suffix").name == "default"   # "fix" inside words
    assert router.route("terror movies").name == "default"   # "error" inside a word


def test_confidence_is_hits_over_two():
    router = IntentRouter()
    one = router.route("it fails")
    two = router.route("it fails with an error")
    assert (one.confidence, two.confidence) == (0.5, 1.0)
    assert router.route("nothing special").confidence == 0.0


def test_weights_move_towards_the_default_mix_with_doubt():
    router = IntentRouter({"default": {"keyword": 0.6, "vector": 0.4},
                           "concept": {"keyword": 0.2, "vector": 0.8}})
    weak = router.route("what is a canvas")                       # one rule: confidence 0.5
    sure = router.route("what is a canvas and why use it")        # two rules: confidence 1
    assert router.weights(weak) == pytest.approx((0.4, 0.6))
    assert router.weights(sure) == pytest.approx((0.2, 0.8))
    assert router.weights(weak, blend=False) == (0.2, 0.8)
    assert router.weights(router.route("canvas plugin")) == pytest.approx((0.6, 0.4))


def test_configured_patterns_and_weights_are_used():
    router = IntentRouter({"failure": {"patterns": ["kaputt"], "vector": 0.9},
                           "default": {"keyword": 0.7, "vector": 0.3}})
    intent = router.route("mein sync ist kaputt")
    assert intent.name == "failure" and intent.profile.vector == 0.9
    assert router.route("it fails").name == "default"     # default patterns replaced
    assert router.route("plain").profile.keyword == 0.7
    with pytest.raises(ConfigError, match="not a valid regular expression"):
        IntentRouter({"failure": {"patterns": ["(unclosed"]}})
    with pytest.raises(ConfigError, match="unknown key"):
        IntentRouter({"failure": {"weight": 1}})


def test_minmax():
    assert minmax([("a", 3.0), ("b", 1.0), ("c", 2.0)]) == {"a": 1.0, "b": 0.0, "c": 0.5}
    assert minmax([("a", 0.2)]) == {"a": 1.0}
    assert minmax([]) == {}


def test_maxnorm_keeps_relative_distances():
    assert maxnorm([("a", 0.6), ("b", 0.55), ("c", -0.1)]) == pytest.approx(
        {"a": 1.0, "b": 0.55 / 0.6, "c": 0.0})
    assert maxnorm([]) == {}


def test_weighted_fusion_rewards_agreement():
    fused = weighted_fusion({"keyword": [("a", 9.0), ("b", 5.0), ("c", 1.0)],
                             "vector": [("b", 0.9), ("c", 0.5), ("d", 0.1)]},
                            {"keyword": 0.4, "vector": 0.6})
    assert max(fused, key=fused.get) == "b"
    assert fused["a"] == pytest.approx(0.4)
    assert fused["b"] == pytest.approx(0.4 * 5 / 9 + 0.6)
    assert fused["d"] == pytest.approx(0.6 * 0.1 / 0.9)
    assert all(0 <= v <= 1 for v in fused.values())


def test_rrf_scales_to_one_for_unanimous_first():
    fused = rrf_fusion({"keyword": [("a", 1), ("b", 1)], "vector": [("a", 1), ("c", 1)]},
                       {"keyword": 1, "vector": 1}, k=60)
    assert fused["a"] == pytest.approx(1.0)
    assert fused["b"] == pytest.approx(0.5 * 61 / 62)


def test_meanmax_gives_a_flat_list_little_and_keeps_the_top_at_one():
    flat = meanmax([("a", 0.80), ("b", 0.79), ("c", 0.78), ("d", 0.77)])
    steep = meanmax([("a", 0.80), ("b", 0.40), ("c", 0.20), ("d", 0.10)])
    assert flat["a"] == steep["a"] == 1.0
    assert flat["c"] == 0.0 and steep["d"] == 0.0          # at or below the mean
    assert flat["b"] == pytest.approx(1 / 3)
    # the same normaliser feeds weighted fusion
    fused = weighted_fusion({"k": [("a", 2.0), ("b", 1.0)], "v": [("b", 0.9), ("a", 0.1)]},
                            {"k": 0.5, "v": 0.5}, normalize=meanmax)
    assert fused == {"a": 0.5, "b": 0.5}


def test_a_floor_spreads_compressed_cosines_again():
    # a model whose cosines sit in 0.80-0.90: divided by the top, every page is near 1
    compressed = [("a", 0.90), ("b", 0.85), ("c", 0.80)]
    assert min(maxnorm(compressed).values()) > 0.88
    assert maxnorm(compressed, floor=0.80) == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0})
    # the same ranking from a model that spreads: the same answer from its own floor
    assert maxnorm([("a", 0.50), ("b", 0.30), ("c", 0.10)], floor=0.10) == pytest.approx(
        maxnorm(compressed, floor=0.80))
    # a list whose best is not above the floor gives nothing
    assert maxnorm([("a", 0.79), ("b", 0.70)], floor=0.80) == {"a": 0.0, "b": 0.0}
    fused = weighted_fusion({"k": [("a", 1.0)], "v": compressed}, {"k": 0.5, "v": 0.5},
                            floors={"v": 0.80})
    assert fused == pytest.approx({"a": 1.0, "b": 0.25, "c": 0.0})


def test_zscore_is_the_normal_cdf_of_each_standard_score():
    scores = zscore([("a", 3.0), ("b", 2.0), ("c", 1.0)])
    assert scores["b"] == pytest.approx(0.5)
    assert scores["a"] == pytest.approx(1 - scores["c"]) and scores["a"] == pytest.approx(0.8897, abs=1e-4)
    assert zscore([("a", 0.5), ("b", 0.5)]) == {"a": 1.0, "b": 1.0}
    assert zscore([]) == {}


@pytest.mark.parametrize("query, concepts", [
    ("Canvas vs Bookmarks", ["Canvas", "Bookmarks"]),
    ("R vs Python", ["R", "Python"]),
    ("What is the difference between aliases and display text?", ["aliases", "display text"]),
    ("CanvasとBookmarksの違いは？", ["Canvas", "Bookmarks"]),
    ("Canvas和白板的区别", ["Canvas", "白板"]),
    ("书签与搜索有什么关系", ["书签", "搜索"]),
    ("Redis和Kafka没有区别吗", ["Redis", "Kafka"]),
    ("猫と犬の違い", ["猫", "犬"]),
    # "is this related to the problem?": no two things to search for
    ("我给应用开启了面容解锁，这和问题有关系吗？", []),
    ("これとそれの違い", []),
    ("How do I pin a tab?", []),
    ("What is the difference between Node.js and Deno?", ["Node.js", "Deno"]),
    ("Is there any difference between them? Also how do tags and links work", []),
])
def test_splitter_finds_the_two_concepts_or_none(query, concepts):
    from mindgraph.retrieval.expand import split_concepts

    assert split_concepts(query) == concepts


@pytest.mark.timeout(60)
@pytest.mark.parametrize("query", ["a" + " " * 3998 + "b", "和" * 4000, "a vs " * 800,
                                   "x" + " relate to " * 400, "canvas " * 10_000,
                                   "AとBの違い" * 500, "difference between " * 300])
def test_splitter_and_router_take_linear_time_on_hostile_queries(query):
    """The splitter's lazy regexes retried every split of every start: 'a' + 3,998 spaces +
    'b' took 380 s and held the server's GIL. Each form is now an anchor found once."""
    from mindgraph.retrieval import expand
    from mindgraph.retrieval.router import IntentRouter

    expand.split_concepts(query[:expand.MAX_SPLIT_CHARS])       # the longest it splits
    for form in (expand._between, expand._relates, expand._versus, expand._together,
                 expand._japanese, expand._chinese):
        next(form(query), None)                                 # each form, past the cap
    IntentRouter().route(query)


def test_spread_is_the_fall_to_the_tenth_score_over_the_height_above_zero():
    from mindgraph.retrieval.fusion import spread
    steep = [(f"p{i}", 1.0 - 0.05 * i) for i in range(10)]          # 1.0 → 0.55
    flat = [(f"p{i}", 0.90 - 0.002 * i) for i in range(10)]         # 0.900 → 0.882
    assert spread(steep) == pytest.approx(0.45)
    assert spread(flat) == pytest.approx(0.018 / 0.90)
    # measured from its zero point, a band of compressed cosines spreads again
    assert spread(flat, zero=0.85) == pytest.approx(0.018 / 0.05)
    assert spread(steep[:9]) is None                # no tenth page: nothing to fall to
    assert spread(flat, zero=0.95) is None          # the top is not above the zero point
    assert spread([(f"p{i}", 0.9 - 0.1 * i) for i in range(10)], zero=0.5) == 1.0


def test_spread_weights_trust_the_retriever_that_tells_its_pages_apart():
    from mindgraph.retrieval.fusion import spread_weights
    steep = [(f"k{i}", 1.0 - 0.05 * i) for i in range(10)]          # spread 0.45
    flat = [(f"v{i}", 0.60 - 0.01 * i) for i in range(10)]          # spread 0.15
    weights = spread_weights({"keyword": steep, "vector": flat},
                             {"keyword": 0.5, "vector": 0.5})
    assert weights == pytest.approx({"keyword": 0.75, "vector": 0.25})
    # a note app's share is kept; only keyword and vector are refitted within theirs
    with_native = spread_weights({"keyword": steep, "vector": flat, "native": flat},
                                 {"keyword": 0.4, "vector": 0.4, "native": 0.2})
    assert with_native == pytest.approx({"keyword": 0.6, "vector": 0.2, "native": 0.2})
    # the vector side measured from the query's background instead of 0
    fitted = spread_weights({"keyword": steep, "vector": flat}, {"keyword": 0.5, "vector": 0.5},
                            {"vector": 0.45})
    assert fitted["vector"] > fitted["keyword"]     # 0.09 / 0.15 = 0.6 against 0.45
    # one list too short to measure: the weights stay as configured
    short = spread_weights({"keyword": steep[:3], "vector": flat},
                           {"keyword": 0.6, "vector": 0.4})
    assert short == {"keyword": 0.6, "vector": 0.4}


def test_reserve_shares_weigh_each_retriever_against_bm25_not_the_total():
    from mindgraph.retrieval.fusion import reserve_shares
    # two retrievers: the same as shares of the total
    assert reserve_shares({"keyword": 0.6, "vector": 0.4}) == pytest.approx(
        {"keyword": 0.6, "vector": 0.4})
    # a Japanese question with an English-only model (vector × 0.1) and the twin ranking
    minilm = reserve_shares({"keyword": 0.6, "vector": 0.04, "twin": 0.18})
    assert minilm["twin"] == pytest.approx(0.18 / 0.78) and minilm["vector"] < 0.1
    # the same question with a multilingual model at full weight: the twin's share of the
    # total would fall to 0.15 (0.18 / 1.18) though nothing about the twin changed; against
    # BM25 it stays 0.23, and the vector side's rises with its weight
    routed = reserve_shares({"keyword": 0.6, "vector": 0.4, "twin": 0.18})
    assert routed["twin"] == pytest.approx(minilm["twin"]) and routed["vector"] == 0.4
    assert routed["keyword"] == pytest.approx(0.6)       # against the heaviest other
    # no BM25 (vector only): shares of the total
    assert reserve_shares({"vector": 1.0}) == {"vector": 1.0}
