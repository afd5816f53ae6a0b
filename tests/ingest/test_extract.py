"""Facts taken from one note's text: summary, salient terms, type."""

import pytest

from mindgraph.ingest.extract import (_nouns, folder_tag, outline, page_type, salient_terms,
                                      summary)

BODY = """Note composer is a [[Core plugins|core plugin]] that lets you merge two notes.

- `Enter`: adds the note at the end of the destination note.

You can choose between the following methods:

```
Merging notes is great. This sentence is code, never a summary at all.
```

Merging notes adds a note to another and removes the first one, updating links to notes.
Cats sleep a lot during the day and say little about this subject.
"""


def test_summary_opens_with_the_defining_sentence_and_adds_a_central_one():
    text = summary(BODY)
    assert text == ("Note composer is a core plugin that lets you merge two notes. Merging "
                    "notes adds a note to another and removes the first one, updating links "
                    "to notes.")


def test_summary_is_bounded_and_cjk_sentences_join_without_spaces():
    long = "This sentence is quite long and keeps going " * 20 + "."
    assert len(summary(long)) <= 321
    assert summary(long).endswith("…")
    cjk = "キャンバスはノートを配置するためのプラグインです。カードを追加して整理します。"
    assert summary(cjk) == cjk


def test_outline_for_notes_without_prose():
    assert outline("## Setup\n- a\n## Usage\n- b") == "Sections: Setup, Usage."
    assert outline("- [[Alpha]]\n- [[Beta]]") == "Alpha"
    assert outline("```\ncode\n```") == "Code only (3 lines)."
    assert outline("") == "This note has no body text."


def test_salient_terms_prefer_heading_words_and_fold_plurals():
    body = "## Merge files\nMerge a file. Merging files. Files merge.\n## Extract\nextract it"
    assert salient_terms(body, "File composer") == ["file", "merge", "extract"]
    assert salient_terms("## Properties\nA property. Properties.", "x") == ["property"]
    # "note" is a stopword, and so is its plural.
    assert salient_terms(body.replace("file", "note").replace("File", "Note"), "x") == \
        ["merge", "extract"]
    # Latin words in a CJK note are UI labels and key names; ノート is generic like "note"
    assert salient_terms("ノートをマージします。ノート。 Enter Enter Enter", "x") == []


def test_chinese_and_japanese_notes_are_tagged_with_their_nouns():
    body = ("## プラグインの設定\nプラグインを有効にします。プラグインの設定を開きます。"
            "同期の設定です。同期します。同期が止まります。\n")
    # プラグ + イン (two UniDic units) is one katakana word; particles and verbs are no tags
    assert salient_terms(body, "プラグイン") == ["プラグイン", "設定", "同期"]
    body = "## 白板设置\n白板可以放卡片。打开白板。卡片列表。卡片名称。设置白板。\n"
    assert salient_terms(body, "白板") == ["白板", "设置", "卡片"]


def test_katakana_compounds_stay_whole_wherever_they_end():
    # a compound ends at a Han noun (設定), at a particle (と) or at the end of the run
    assert _nouns("コミュニティプラグイン設定の同期", "ja") == \
        ["コミュニティプラグイン", "設定", "同期"]
    assert _nouns("設定ファイルとクレジットカード", None) == \
        ["設定", "ファイル", "クレジットカード"]


def test_a_heading_noun_counts_three_times_each_time_it_is_said():
    # 同期 twice in the heading (6) outranks 設定 said four times in the prose
    assert salient_terms("## 同期の同期\n設定。設定。設定。設定。", "x") == ["同期", "設定"]


def test_folder_tag_is_a_nested_lower_case_tag():
    assert folder_tag("Linking notes and files/Sub Dir/x.md") == \
        "linking-notes-and-files/sub-dir"
    assert folder_tag("top.md") == ""


@pytest.mark.parametrize("frontmatter, title, body, expected", [
    ({"type": "decision"}, "x", "", "decision"),
    ({}, "Troubleshoot Obsidian Sync", "", "troubleshooting"),
    ({}, "Home", "- [[a]]\n- [[b]]\n- [[c]]\n- [[d]]\n- [[e]]\nintro", "index"),
    ({}, "Plain", "Just text.", "note"),
])
def test_page_type(frontmatter, title, body, expected):
    assert page_type(frontmatter, title, body) == expected
