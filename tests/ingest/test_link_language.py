"""Links the offline compiler adds go to a page in the note's own language when the vault has
pages in several languages (``TitleIndex.target``, ``page.language.prose_language``); links the
author wrote are never touched, and a vault in one language links as it did without languages.

Found on the Obsidian Help vault (en/, ja/, zh/): English notes linked "YAML" to the Chinese
page 属性 (alias YAML) 21 times, and a frontmatter typo in the English Callouts page relinked 28
release notes to the Chinese 标注 (alias Callouts)."""

import json

from click.testing import CliRunner

from ingest_helpers import read_wiki, tree_hashes

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.ingest.index import IndexEntry, TitleIndex
from mindgraph.ingest.linker import add_links
from mindgraph.ingest.pipeline import run_ingest
from mindgraph.ingest.session import IngestSession
from mindgraph.ingest.state import STATE_FILENAME, IngestState
from mindgraph.page.language import prose_language

ZH_PROPERTIES = ("---\naliases: [YAML, Properties]\n---\n# 属性\n"
                 "属性允许你组织笔记的相关信息。属性包含结构化数据，如文本、链接、日期和数字。\n")
ZH_CALLOUTS = ("---\naliases: [Callouts]\n---\n# 标注\n"
               "使用标注可以在不打断笔记流程的情况下加入额外的内容。\n")
EN_CALLOUTS = ("---\naliases: [Callout]\n---\n# Callouts\n"
               "Use callouts to include additional content without breaking the flow.\n")
JA_NOTE = "# エイリアス\nエイリアスは常にYAMLのリスト形式で書きます。詳しくはv1.3.5を参照してください。\n"


def ingest(workspace):
    result = CliRunner().invoke(cli, ["ingest", "-C", str(workspace), "--json"],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def added(workspace, rel):
    """The links in a compiled page that its raw note does not have."""
    from mindgraph.page.parse import parse_page

    wiki = parse_page(read_wiki(workspace, rel), rel, "w")
    raw = parse_page((workspace / "raw" / rel).read_text(encoding="utf-8"), rel, "r")
    own = [link.target for link in raw.links]
    out = []
    for link in wiki.links:
        if link.target in own:
            own.remove(link.target)
        else:
            out.append(link.target)
    return out


def test_an_english_note_never_links_to_a_chinese_page_by_its_alias(workspace, write_raw):
    # (a) the only page with the alias YAML is Chinese: an English note leaves it as text,
    # a Chinese note links it
    write_raw("zh/编辑/属性.md", ZH_PROPERTIES)
    write_raw("en/Aliases.md", "# Aliases\nAliases are always formatted as a list in YAML.\n")
    write_raw("zh/别名.md", "# 别名\n别名始终以 YAML 列表格式书写，这一点很重要。\n")
    write_raw("ja/エイリアス.md", JA_NOTE)
    assert ingest(workspace)["failed"] == 0
    assert added(workspace, "en/Aliases.md") == []
    assert "[[属性|YAML]]" not in read_wiki(workspace, "en/Aliases.md")
    assert added(workspace, "zh/别名.md") == ["属性"]
    # a Japanese note does not link to the Chinese page either (Han words are shared, the
    # meanings are not: ja 公式 "official", zh 公式 "formula")
    assert added(workspace, "ja/エイリアス.md") == []


def test_a_term_two_languages_share_links_to_the_page_in_the_notes_language(workspace,
                                                                            write_raw):
    # (b) "Callouts" names the English page and the Chinese one (alias): a release note at the
    # root is as near to both, so before languages it linked neither (ambiguous)
    write_raw("en/Callouts.md", EN_CALLOUTS)
    write_raw("zh/标注.md", ZH_CALLOUTS)
    write_raw("Release notes/v1.0.md", "# v1.0\nNew: callouts render in the reading view.\n")
    write_raw("zh/更新.md", "# 更新\n新增：Callouts 现在可以在阅读视图中显示了。\n")
    assert ingest(workspace)["failed"] == 0
    assert "[[Callouts|callouts]]" in read_wiki(workspace, "Release notes/v1.0.md")
    assert added(workspace, "zh/更新.md") == ["标注"]


def test_a_term_whose_only_page_is_in_another_language_stays_text(workspace, write_raw):
    # (c) a Japanese note that mentions an English release note: on the Obsidian Help vault
    # 243 of 245 such links went to the English twin of a page the note's language has too
    write_raw("Release notes/v1.3.5.md", "# v1.3.5\nA new logo and many fixes to the editor.\n")
    write_raw("ja/エイリアス.md", JA_NOTE)
    write_raw("en/Logo.md", "# Logo\nThe logo changed in v1.3.5 of the app.\n")
    assert ingest(workspace)["failed"] == 0
    assert added(workspace, "ja/エイリアス.md") == []
    assert added(workspace, "en/Logo.md") == ["v1.3.5"]


def test_links_the_author_wrote_across_languages_are_kept(workspace, write_raw):
    write_raw("zh/编辑/属性.md", ZH_PROPERTIES)
    write_raw("en/Aliases.md", "# Aliases\nSee [[属性|YAML]] (Chinese), then YAML again.\n")
    assert ingest(workspace)["failed"] == 0
    text = read_wiki(workspace, "en/Aliases.md")
    assert "See [[属性|YAML]] (Chinese), then YAML again." in text


def test_english_notes_link_as_in_an_english_only_vault(tmp_path):
    # (d) the English notes compiled beside Chinese pages get the pages an English-only vault
    # gives them
    english = {"en/Callouts.md": EN_CALLOUTS,
               "en/Properties.md": "# Properties\nProperties hold data such as text and dates.\n",
               "Release notes/v1.0.md": "# v1.0\nCallouts and properties in the editor.\n",
               "en/Guide.md": "# Guide\nAdd properties, then callouts, to a note.\n"}
    chinese = {"zh/标注.md": ZH_CALLOUTS, "zh/编辑/属性.md": ZH_PROPERTIES}
    alone, mixed = tmp_path / "alone", tmp_path / "mixed"
    for base, notes in ((alone, english), (mixed, {**english, **chinese})):
        for rel, text in notes.items():
            (base / "raw" / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / "raw" / rel).write_text(text, encoding="utf-8")
        assert ingest(base)["failed"] == 0
    for rel in english:
        assert read_wiki(mixed, rel) == read_wiki(alone, rel), rel
    assert "[[Callouts]]" in read_wiki(mixed, "Release notes/v1.0.md")


def test_one_language_links_exactly_as_without_languages():
    # (d) the languages change nothing in a vault of one language (byte-identical output on
    # the English, Japanese and Chinese Obsidian Help vaults, measured)
    def entries(language):
        return [IndexEntry("en/Canvas.md", "Canvas", ("whiteboard",), language),
                IndexEntry("ja/Canvas.md", "Canvas", (), language),
                IndexEntry("Sync.md", "Sync", ("Obsidian Sync",), language)]

    body = "Open a whiteboard, then Canvas, then Obsidian Sync."
    plain, english = TitleIndex(entries("")), TitleIndex(entries("en"))
    assert english.languages == {}
    for source in ("en/Note.md", "Note.md", "ja/x.md"):
        assert add_links(body, source, english) == add_links(body, source, plain)
        mentions = english.scan_mentions(body)
        assert english.links_digest(mentions, source) == plain.links_digest(mentions, source)
        assert english.links_basis(mentions, source) == plain.links_basis(mentions, source)
    assert english.digest == plain.digest


def test_a_typo_in_the_english_page_does_not_send_its_mentions_to_the_chinese_one(workspace,
                                                                                   write_raw):
    write_raw("en/Callouts.md", EN_CALLOUTS)
    write_raw("zh/标注.md", ZH_CALLOUTS)
    for n in range(3):
        write_raw(f"Release notes/v1.{n}.md", f"# v1.{n}\nFixed callouts in tables ({n}).\n")
    assert ingest(workspace)["failed"] == 0
    assert "[[Callouts|callouts]]" in read_wiki(workspace, "Release notes/v1.0.md")
    write_raw("en/Callouts.md", EN_CALLOUTS.replace("aliases: [Callout]", "aliases: [Callout"))
    report = ingest(workspace)
    assert report["failed"] == 1
    for n in range(3):
        text = read_wiki(workspace, f"Release notes/v1.{n}.md")
        assert "标注" not in text and f"Fixed callouts in tables ({n})." in text


def test_a_page_whose_language_changes_relinks_the_notes_that_mention_it(workspace,
                                                                         write_raw):
    write_raw("zh/别名.md", "# 别名\n别名始终以列表格式书写，这一点很重要。\n")
    write_raw("w/Widget.md", "# Widget\n小部件可以放在主屏幕上，方便快速打开笔记和仓库。\n")
    write_raw("en/Home.md", "# Home\nPut a widget on the home screen.\n")
    write_raw("zh/主页.md", "# 主页\n把 Widget 放在主屏幕上，这样很方便。\n")
    assert ingest(workspace)["failed"] == 0
    assert added(workspace, "en/Home.md") == [] and added(workspace, "zh/主页.md") == ["Widget"]

    write_raw("w/Widget.md", "# Widget\nWidgets sit on the home screen and open notes fast.\n")
    report = ingest(workspace)
    done = sorted(f["path"] for f in report["files"] if f["status"] == "ingested")
    assert done == ["en/Home.md", "w/Widget.md", "zh/主页.md"]
    assert added(workspace, "en/Home.md") == ["Widget"] and added(workspace, "zh/主页.md") == []
    assert ingest(workspace)["ingested"] == 0       # and then nothing more to do


def test_a_targeted_run_refuses_a_language_change_and_equals_the_full_path(tmp_path):
    notes = {"zh/别名.md": "# 别名\n别名始终以列表格式书写，这一点很重要。\n",
             "w/Widget.md": "# Widget\n小部件可以放在主屏幕上，方便快速打开笔记和仓库。\n",
             "en/Home.md": "# Home\nPut a widget on the home screen.\n"}
    watched, reference = tmp_path / "watched", tmp_path / "reference"
    for base in (watched, reference):
        for rel, text in notes.items():
            (base / "raw" / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / "raw" / rel).write_text(text, encoding="utf-8")
        (base / "mindgraph.yml").write_text("")
    session = IngestSession()
    run_ingest(load_settings(watched), session=session)
    run_ingest(load_settings(reference))
    session.warm()
    for base in (watched, reference):
        (base / "raw" / "w" / "Widget.md").write_text(
            "# Widget\nWidgets sit on the home screen and open notes fast.\n", encoding="utf-8")
    report = run_ingest(load_settings(watched), session=session, changed=["w/Widget.md"])
    assert report.plan == "full: w/Widget.md: its language changed"
    run_ingest(load_settings(reference))
    assert "[[Widget|widget]]" in read_wiki(watched, "en/Home.md")
    assert tree_hashes(watched / "wiki") == tree_hashes(reference / "wiki")


def test_a_state_from_before_languages_reads_each_note_once_and_compiles_nothing(
        workspace, write_raw):
    write_raw("en/Callouts.md", EN_CALLOUTS)
    write_raw("zh/标注.md", ZH_CALLOUTS)
    write_raw("Release notes/v1.0.md", "# v1.0\nNew: callouts render in the reading view.\n")
    ingest(workspace)
    pages = tree_hashes(workspace / "wiki")
    path = workspace / ".mindgraph" / STATE_FILENAME
    data = json.loads(path.read_text(encoding="utf-8"))
    for record in data["files"].values():
        assert record.pop("language") in ("en", "zh")
    path.write_text(json.dumps(data), encoding="utf-8")
    report = ingest(workspace)
    assert (report["ingested"], report["skipped"]) == (0, 3)
    assert tree_hashes(workspace / "wiki") == pages
    languages = {p: r.language for p, r in IngestState.load(path).files.items()}
    assert languages == {"en/Callouts.md": "en", "zh/标注.md": "zh",
                         "Release notes/v1.0.md": "en"}


def test_prose_language_reads_the_prose_not_urls_code_or_names():
    # a Chinese page that sets up a domain: URLs and DNS names outnumber its Han letters
    body = "你可以为你的网站设置自定义域名。\n" + "\n".join(
        f"- 打开 [CloudFlare](https://developers.cloudflare.com/ssl/origin/{n}) `notes.mysite.com`"
        for n in range(20))
    assert prose_language("自定义域名", body) == "zh"
    # a Japanese credits page: mostly Latin names, but titled and written in Japanese
    names = ", ".join(f"Person Name{n} Surname" for n in range(60))
    assert prose_language("クレジット", f"以下の方々に感謝します。\n{names}\n") == "ja"
    assert prose_language("Credits", f"We thank these people.\n{names}\n") == "en"
    assert prose_language("Kanji 漢字 notes", "Notes on how 漢字 are read in English text.") \
        == "en"


def test_a_copy_shares_the_vaults_languages():
    # a scoped note's index (TitleIndex.within) keeps the whole vault's languages
    index = TitleIndex([IndexEntry("en/A.md", "Alpha", (), "en"),
                        IndexEntry("zh/甲.md", "甲页", ("Alpha",), "zh"),
                        IndexEntry("en/B.md", "Beta", (), "en")])
    scoped = index.within({"zh/甲.md", "en/B.md"})
    assert scoped.languages == index.languages
    assert scoped.target("Alpha", "en/B.md") is None
    assert index.target("Alpha", "en/B.md") == "en/A.md"
