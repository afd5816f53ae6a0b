"""A query of Han characters alone (no kana) is Japanese in a Japanese vault and Chinese in a
Chinese one (retrieval/query_language.py): `mindgraph search --hybrid` does not mark the
vault's own pages ``other_language`` nor answer a Japanese vault in Chinese."""

from __future__ import annotations

import json
from collections import Counter

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.retrieval.query_language import query_language_in

JAPANESE = {
    "京都/伏見稲荷大社.md": "# 伏見稲荷大社\n\n伏見稲荷大社は京都にある神社です。千本鳥居で知られています。\n",
    "京都/清水寺.md": "# 清水寺\n\n清水寺は京都の東山にあるお寺です。舞台から町が見えます。\n",
    "東京/東京都庁.md": "# 東京都庁\n\n東京都庁は新宿にあります。展望室から富士山が見えることもあります。\n",
}
CHINESE = {
    "北京/故宫博物院.md": "# 故宫博物院\n\n故宫博物院位于北京，是明清两代的皇家宫殿。\n",
    "北京/北京大学.md": "# 北京大学\n\n北京大学是一所位于北京的综合性大学。\n",
    "上海/外滩.md": "# 外滩\n\n外滩位于上海黄浦江畔，有许多历史建筑。\n",
}


def _workspace(root, pages):
    for rel, text in pages.items():
        path = root / "wiki" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    embedded = CliRunner().invoke(cli, ["embed", "-C", str(root)])
    assert embedded.exit_code == 0, embedded.output
    return root


def _hybrid(root, query):
    result = CliRunner().invoke(cli, ["search", query, "--hybrid", "--json", "-C", str(root)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_kanji_query_in_a_japanese_vault_is_answered_in_japanese(tmp_path):
    root = _workspace(tmp_path, JAPANESE)
    data = _hybrid(root, "伏見稲荷")
    assert data["language"] == "ja"
    top = data["results"][0]
    assert top["page"] == "京都/伏見稲荷大社.md"
    # read as Chinese, every page of the vault was in "another language"
    assert not any("other_language" in hit["boosts"] for hit in data["results"])
    assert data["interpretation"].startswith("最も関連する情報は「伏見稲荷大社")
    assert _hybrid(root, "東京都庁")["language"] == "ja"


def test_a_han_query_in_a_chinese_vault_stays_chinese(tmp_path):
    root = _workspace(tmp_path, CHINESE)
    data = _hybrid(root, "故宫博物院")
    assert data["language"] == "zh"
    assert data["results"][0]["page"] == "北京/故宫博物院.md"
    assert not any("other_language" in hit["boosts"] for hit in data["results"])
    assert data["interpretation"].startswith("最相关的内容在「故宫博物院")


def test_a_chinese_question_in_a_japanese_vault_is_answered_in_chinese(tmp_path):
    # Simplified forms (这, 么, 东, 寺 is shared) are no Japanese: read as Japanese, the question
    # was cut by MeCab and answered 最も関連する情報は…
    root = _workspace(tmp_path, JAPANESE)
    data = _hybrid(root, "东京都厅在哪里？怎么去")
    assert data["language"] == "zh"
    assert data["interpretation"].startswith("最相关的内容在")
    assert _hybrid(root, "東京都庁")["language"] == "ja"
    assert query_language_in("设置", lambda: Counter({"ja": 4})) == "zh"
    assert query_language_in("伏見稲荷", lambda: Counter({"ja": 4})) == "ja"


def test_in_a_vault_of_both_the_dictionaries_decide_only_when_clear():
    both = Counter({"ja": 3, "zh": 3, "en": 5})
    # MeCab knows 伏見|稲荷, jieba none of it
    assert query_language_in("伏見稲荷", lambda: both) == "ja"
    # jieba knows more of it, or both alike (清水|寺): Chinese, as before
    assert query_language_in("故宫博物院", lambda: both) == "zh"
    assert query_language_in("清水寺", lambda: both) == "zh"
    # a vault of neither: Chinese, as before; a query with kana is Japanese anywhere
    assert query_language_in("清水寺", lambda: Counter({"en": 4})) == "zh"
    assert query_language_in("清水寺", lambda: Counter({"ja": 4})) == "ja"
    assert query_language_in("清水寺とは", lambda: Counter({"zh": 4})) == "ja"


def test_the_count_follows_the_pages(tmp_path):
    root = _workspace(tmp_path, JAPANESE)
    mg = Mindgraph.open(root)
    assert mg.smart_search("清水寺").language == "ja"
    path = root / "wiki" / "北京/故宫博物院.md"
    path.parent.mkdir(parents=True)
    path.write_text(CHINESE["北京/故宫博物院.md"], encoding="utf-8")
    mg.refresh()
    assert mg.smart_search("清水寺").language == "zh"    # a tie, in a vault of both


def _search(root, *args):
    result = CliRunner().invoke(cli, ["search", *args, "--json", "-C", str(root)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_plain_keyword_search_decides_the_same_way(tmp_path):
    # Japanese pages and an English one that quotes the name: read as Chinese, the query
    # found every page in "another language" and the English page's higher BM25 won
    pages = {
        "京都/神社.md": "# 京都の神社\n\n京都には多くの神社があります。伏見稲荷大社は千本鳥居で"
                      "知られています。八坂神社は祇園にあります。上賀茂神社と下鴨神社は世界遺産"
                      "です。平安神宮は明治時代に建てられました。\n",
        "京都/清水寺.md": JAPANESE["京都/清水寺.md"],
        "Fushimi.md": "# Fushimi Inari\n\nFushimi Inari is a shrine in Kyoto, famous for its "
                      "thousand red gates on the mountain path. The guide says: "
                      "伏見稲荷は京都にあります。\n",
    }
    for rel, text in pages.items():
        path = tmp_path / "wiki" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text("retrieval:\n  other_language_factor: 0.3\n")
    found = [r["page"] for r in _search(tmp_path, "伏見稲荷")["results"]]
    assert found == ["京都/神社.md", "Fushimi.md"]


TWINS = {
    "ja/シンク.md": "---\npermalink: sync\n---\n# シンク\n\nノートを複数の端末でそろえます。\n",
    "en/Sync.md": "---\npermalink: sync\n---\n# Sync\n\n"
                  "Synchronization keeps your notes the same on every device.\n",
    "ja/エディタ.md": "---\npermalink: editor\n---\n# エディタ\n\nエディタで文章を書きます。\n",
    "en/Editor.md": "---\npermalink: editor\n---\n# Editor\n\nWrite notes in the editor.\n",
}


def test_the_twin_ranking_and_the_translation_read_a_kanji_query_as_japanese(tmp_path):
    # a vault of English and Japanese twins: 同期 is Japanese here, so the twin ranking
    # (retrieval.twin_weights: ja) finds the Japanese page through its English twin; read as
    # Chinese it had no twin ranking, and its words were looked up in the Chinese dictionary
    # as if no page were in its language ("synchronous"), answering with the English page
    for rel, text in TWINS.items():
        path = tmp_path / "wiki" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\nretrieval:\n  expansion: 'off'\n")
    data = _search(tmp_path, "同期", "--hybrid")
    assert data["language"] == "ja"
    assert [(r["page"], sorted(r["sources"])) for r in data["results"]] == \
        [("ja/シンク.md", ["twin"])]
    assert not any("almost no page is in the query's language" in note
                   for note in data["degradation"])
    # found through its twin's words, not by meaning alone (it said "best similarity 0.00")
    assert not any("meaning alone" in note for note in data["degradation"])


def test_keyword_search_counts_the_pages_again_when_they_change(tmp_path):
    for rel, text in JAPANESE.items():
        path = tmp_path / "wiki" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text("retrieval:\n  other_language_factor: 0.3\n")
    mg = Mindgraph.open(tmp_path)
    assert mg.search("清水寺")[0].score == 1.0         # Japanese, as its vault
    path = tmp_path / "wiki" / "北京/故宫博物院.md"
    path.parent.mkdir(parents=True)
    path.write_text(CHINESE["北京/故宫博物院.md"], encoding="utf-8")
    mg.refresh()
    assert mg.search("清水寺")[0].score == 0.3         # a tie in a vault of both: Chinese


def test_untranslated_keyword_factor_out_of_range_names_the_line(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("retrieval:\n  untranslated_keyword_factor: 2\n")
    result = CliRunner().invoke(cli, ["search", "hello", "-C", str(tmp_path)])
    assert result.exit_code == 2
    assert "mindgraph.yml:2: 'retrieval.untranslated_keyword_factor' must be between 0 and 1" \
        in result.output


def test_the_answer_names_its_intent_in_the_query_s_language(tmp_path):
    """A Japanese reader saw "（意図: default）": the router's own word, in English."""
    japanese = _workspace(tmp_path / "ja", JAPANESE)
    data = _hybrid(japanese, "伏見稲荷")
    assert data["intent"]["name"] == "default"          # the JSON keeps the router's names
    assert data["interpretation"].endswith("（意図: 一般）。")
    chinese = _workspace(tmp_path / "zh", CHINESE)
    data = _hybrid(chinese, "什么是故宫博物院")
    assert data["intent"]["name"] == "concept"
    assert data["interpretation"].endswith("（意图：概念）。")
