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
