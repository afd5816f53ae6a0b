"""`mindgraph search` labels its text answer in the question's language.

A Japanese or Chinese reader of `search --hybrid` read "intent: default (0.0)", "found by
graph, keyword #1, vector #1 +graph", "next:" and, from plain `search`, "matched '伏見' in
text of section '行き方'" around an answer otherwise in their language
(text/answer_labels.py). The JSON keeps its keys, names and English `why.summary`; an English
question's text is what it was, byte for byte.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli

JAPANESE = {
    "伏見稲荷大社.md": "# 伏見稲荷大社\n\n伏見稲荷大社は京都にある神社です。千本鳥居で知られています。"
                   "[[清水寺]]\n\n## 行き方\n\n伏見稲荷大社へは京都駅から電車で行きます。\n",
    "清水寺.md": "# 清水寺\n\n清水寺は京都の東山にあるお寺です。舞台から町が見えます。[[伏見稲荷大社]]\n",
}
CHINESE = {
    "故宫博物院.md": "# 故宫博物院\n\n故宫博物院位于北京，是明清两代的皇家宫殿。[[北京大学]]\n\n"
                "## 参观\n\n参观故宫博物院需要提前预约门票。\n",
    "北京大学.md": "# 北京大学\n\n北京大学是一所位于北京的综合性大学。[[故宫博物院]]\n",
}
ENGLISH = {
    "Shrine.md": "# Shrine\n\nThe shrine is known for its thousand gates. [[Temple]]\n\n"
                 "## Getting there\n\nTake the train from the central station to the shrine.\n",
    "Temple.md": "# Temple\n\nThe temple stands on a hill above the town. [[Shrine]]\n",
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


def _search(root, *args):
    result = CliRunner().invoke(cli, ["search", *args, "-C", str(root)])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_japanese_question_is_labelled_in_japanese(tmp_path):
    root = _workspace(tmp_path, JAPANESE)
    lines = _search(root, "--hybrid", "伏見稲荷大社への行き方は？").splitlines()
    assert lines[0] == "意図: 一般 (0.0)"
    assert lines[1:4] == [" 1. 伏見稲荷大社.md  (1.063)  § 行き方",
                          "    **伏見稲荷大社**へは京都駅から電車で行きます。",
                          "    検出: グラフ、キーワード 1位、ベクトル 1位 +グラフ"]
    assert lines[-3] == "最も関連する情報は「伏見稲荷大社 › 行き方」にあります（意図: 一般）。"
    assert lines[-2].startswith("次の質問: 伏見稲荷大社と清水寺の関係は？")
    assert not any(word in line for line in lines
                   for word in ("intent:", "found by", "next:", "keyword", "vector", "graph"))
    keyword = _search(root, "伏見稲荷大社への行き方は？").splitlines()
    assert keyword[2] == ("    一致: 「伏見」「稲荷」「大社」（タイトル・別名・ファイル名）、"
                          "「伏見」「稲荷」「大社」（セクション「行き方」の本文）")
    # the JSON keeps the router's names and the English explanation agents read
    data = json.loads(_search(root, "伏見稲荷大社への行き方は？", "--json"))
    assert data["results"][0]["why"]["summary"] == (
        "matched '伏見', '稲荷', '大社' in title/aliases/file name; "
        "'伏見', '稲荷', '大社' in text of section '行き方'")
    hybrid = json.loads(_search(root, "--hybrid", "伏見稲荷大社への行き方は？", "--json"))
    assert hybrid["intent"]["name"] == "default"
    assert sorted(hybrid["results"][0]["sources"]) == ["graph", "keyword", "vector"]
    assert list(hybrid["results"][0]["boosts"]) == ["graph"]


def test_a_chinese_question_is_labelled_in_chinese(tmp_path):
    root = _workspace(tmp_path, CHINESE)
    lines = _search(root, "--hybrid", "什么是故宫博物院").splitlines()
    assert lines[0] == "意图：概念 (0.5)"
    assert lines[3:5] == ["    来源：图谱、关键词 第1名、向量 第1名 +图谱 +标题即所问术语",
                          "    原因：小标题就是所问的术语"]
    assert lines[-2].startswith("后续问题：故宫博物院和北京大学有什么关系？")
    keyword = _search(root, "故宫博物院 参观").splitlines()
    assert keyword[2] == ("    匹配：「故宫博物院」（标题/别名/文件名）；「参观」（章节「参观」的小标题）；"
                          "「故宫博物院」「参观」（章节「参观」的正文）")


def test_an_english_question_s_text_is_unchanged(tmp_path):
    root = _workspace(tmp_path, ENGLISH)
    lines = _search(root, "--hybrid", "how do I get to the shrine?").splitlines()
    assert lines[:-1] == [
        "intent: location (0.5)",
        " 1. Shrine.md  (1.034)  § Getting there",
        "    Take the train from the central station to the **shrine**.",
        "    found by graph, keyword #1, vector #1 +graph",
        " 2. Temple.md  (0.438)",
        "    The temple stands on a hill above the town. **Shrine**",
        "    found by graph, keyword #2, vector #2 +graph",
        "The best match is 'Shrine › Getting there' (intent: location).",
        "next: How does Shrine relate to Temple? | What links to Shrine?"]
    assert _search(root, "shrine train").splitlines()[2] == \
        "    matched 'shrine' in title/aliases/file name; 'shrine', 'train' in text of " \
        "section 'Getting there'"
