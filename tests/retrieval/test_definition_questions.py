"""Definition questions ("what is a vault", 保管庫とは, 什么是保管库): the section whose heading
names the term comes first (retrieval/definition.py, ``retrieval.definition_bonus``), through
`mindgraph search --hybrid`; any other question is answered as before."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.retrieval.definition import defined_term, heading_match

GLOSSARY = {
    "en": ("Glossary", "Vault", "vault", [
        ("Attachment", "A file you add to a note, such as an image or a PDF."),
        ("Vault", "A vault is a folder on your computer that holds your notes; each vault "
                   "has its own settings."),
        ("Plugin", "Code that adds features to the app."),
        ("Theme", "A set of colours and fonts for the app.")]),
    "ja": ("用語集", "保管庫", "保管庫", [
        ("添付ファイル", "ノートに追加する画像やPDFなどのファイルです。"),
        ("保管庫", "保管庫はノートを保存するコンピュータ上のフォルダです。保管庫ごとに設定があります。"),
        ("プラグイン", "アプリに機能を追加するコードです。"),
        ("テーマ", "アプリの色とフォントの組み合わせです。")]),
    "zh": ("术语表", "保管库", "保管库", [
        ("附件", "添加到笔记中的文件，例如图片或PDF。"),
        ("保管库", "保管库是电脑上存放笔记的文件夹。每个保管库都有自己的设置。"),
        ("插件", "为应用添加功能的代码。"),
        ("主题", "应用的一组颜色和字体。")]),
}
# pages that mention the term often, in headings too: without the bonus they come first
MENTIONS = {
    "en": [("Manage vaults", "Rename vault", "To rename a vault, open the vault switcher, "
            "choose the vault and rename the vault. The vault folder is renamed with the "
            "vault."),
           ("Move a vault", "Move vault", "Moving a vault moves the vault folder; the vault "
            "keeps its settings when the vault moves.")],
    "ja": [("保管庫の管理", "保管庫の名前を変更", "保管庫の名前を変更するには、保管庫の一覧で保管庫を"
            "選び、保管庫の名前を変えます。保管庫のフォルダも変わります。"),
           ("保管庫の移動", "保管庫を移動", "保管庫を移動すると保管庫のフォルダが移動し、保管庫の"
            "設定は保管庫に残ります。")],
    "zh": [("管理保管库", "重命名保管库", "要重命名保管库，请在保管库列表中选择保管库，然后重命名"
            "保管库。保管库的文件夹也会改名。"),
           ("移动保管库", "移动保管库到别处", "移动保管库时保管库的文件夹会移动，保管库的设置留在"
            "保管库中。")],
}
QUESTIONS = {"en": "what is a vault", "ja": "保管庫とは", "zh": "什么是保管库"}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("definitions")
    for lang, (title, _, _, entries) in GLOSSARY.items():
        folder = root / "wiki" / lang
        folder.mkdir(parents=True)
        body = "".join(f"## {heading}\n\n{text}\n\n" for heading, text in entries)
        (folder / f"{title}.md").write_text(f"# {title}\n\n{body}")
        for page, heading, text in MENTIONS[lang]:
            (folder / f"{page}.md").write_text(f"# {page}\n\n## {heading}\n\n{text}\n")
    (root / "mindgraph.yml").write_text("embedding: {provider: hashing, dimension: 256}\n")
    assert CliRunner().invoke(cli, ["embed", "-C", str(root)]).exit_code == 0
    return root


def search(workspace, monkeypatch, query: str, bonus: str) -> list[dict]:
    monkeypatch.setenv("MINDGRAPH_RETRIEVAL__DEFINITION_BONUS", bonus)
    out = CliRunner().invoke(cli, ["search", "--hybrid", query, "-C", str(workspace),
                                   "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["results"]


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_the_section_naming_the_defined_term_comes_first(workspace, monkeypatch, lang):
    title, heading, _, _ = GLOSSARY[lang]
    glossary = f"{lang}/{title}.md"
    off = search(workspace, monkeypatch, QUESTIONS[lang], "0")
    assert (off[0]["page"], off[0]["heading"]) != (glossary, heading)   # fails without it
    on = search(workspace, monkeypatch, QUESTIONS[lang], "0.2")
    assert (on[0]["page"], on[0]["heading"]) == (glossary, heading)
    assert on[0]["boosts"]["heading_names_defined_term"] == 0.2
    assert {r["page"] for r in on} <= {r["page"] for r in off}         # nothing pulled in
    monkeypatch.delenv("MINDGRAPH_RETRIEVAL__DEFINITION_BONUS")      # the default: on
    text = CliRunner().invoke(cli, ["search", "--hybrid", QUESTIONS[lang], "-C",
                                    str(workspace)]).stdout
    # said in the question's language (text/answer_labels.py)
    assert {"en": "why: the heading names the defined term", "ja": "理由: 見出しが問われた用語そのもの",
            "zh": "原因：小标题就是所问的术语"}[lang] in text


def test_a_question_that_is_no_definition_is_answered_as_before(workspace, monkeypatch):
    for query in ("how do I rename a vault", "保管庫の名前を変更するには", "怎么移动保管库"):
        off = search(workspace, monkeypatch, query, "0")
        on = search(workspace, monkeypatch, query, "0.2")
        assert [(r["page"], r["heading"], r["score"]) for r in on] == \
            [(r["page"], r["heading"], r["score"]) for r in off]
        assert not any("defined_term" in b for r in on for b in r["boosts"])


def test_what_a_definition_question_is_and_which_headings_name_its_term():
    for query in ("what is a vault", "What are vaults?", "define vault", "vault meaning",
                  "what is the meaning of vault"):
        assert defined_term(query) == ("vault",)
    assert defined_term("保管庫とは何ですか") == defined_term("保管庫って何？") == ("保管庫",)
    assert defined_term("保管库是什么") == defined_term("什么是保管库") == ("保管库",)
    assert defined_term("保管庫の意味とは") == ("保管庫",)
    for other in ("how do I move my vault", "where is the vault",
                  "what is the recommended way to keep a vault synchronized on a Linux server "
                  "that has no desktop GUI", "这个功能叫什么？",
                  "what is " + "a " * 50_000 + "vault", "x" + " " * 50_000 + "とは"):
        assert defined_term(other) is None
    term = ("vault",)
    assert [heading_match(h, term) for h in ("Vaults", "What is a vault?", "About vaults",
                                             "Remote vault", "Where is the vault",
                                             "`vault`")] == \
        ["named", "framed", "framed", None, None, None]
    assert heading_match("保管庫とは", ("保管庫",)) == "framed"
    assert heading_match("ＶＡＵＬＴ", term) == "named"          # full-width folded
