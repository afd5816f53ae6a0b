"""A page as the dashboard shows it: safe HTML whatever the note holds, links that stay
inside the dashboard, embeds, highlighted code."""

import re

from mindgraph.dashboard.render import Links, render_markdown
from mindgraph.dashboard.views import graph_view, page_view, summary_of
from mindgraph.graph.build import KnowledgeGraph
from mindgraph.graph.communities import detect_communities
from mindgraph.page.vault import load_vault

PAGES = {"Home.md": "---\ntags: [start]\n---\n# Home\n\nSee [[Packing|how to pack]], "
                    "[[Nowhere]] and [the list](Packing.md).\n\n![[Packing]]\n\n"
                    "![[trunk.png]]\n",
         "Packing.md": "---\ntags: [start]\nrelated: [Home]\n---\n# Packing\n\n"
                       "Fold the **trunks**.\n\n```python\ndef pack():\n    return 1\n```\n"}


def _links(known=("Packing.md",), lead="Fold the trunks."):
    return Links(lambda target: next((p for p in known if p.removesuffix(".md") ==
                                      target.removesuffix(".md")), None), lambda path: lead)


def test_raw_html_in_a_note_is_text_never_markup():
    html = render_markdown("Hi <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n"
                           "<div onclick='x()'>block</div>\n", _links())
    assert "<script" not in html and "<img" not in html and "<div" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html


def test_script_urls_and_hostile_link_text_do_not_become_markup():
    html = render_markdown('[x](javascript:alert(1)) [[a"><script>b|c<img onerror=1>]]',
                           _links())
    assert "javascript:" not in html.replace("[x](javascript:alert(1))", "")
    assert "<script" not in html and "<img" not in html
    assert "c&lt;img onerror=1&gt;" in html


def test_wikilinks_open_the_page_inside_the_dashboard():
    html = render_markdown("[[Packing|how to pack]] and [[Nowhere]] and [list](Packing.md) "
                           "and [site](https://example.org)", _links())
    assert '<a class="wikilink" href="#page=Packing.md" data-page="Packing.md">how to pack</a>' \
        in html
    assert '<span class="wikilink broken" title="no such page">Nowhere</span>' in html
    assert 'href="#page=Packing.md"' in html.split("and", 2)[2]
    assert 'href="https://example.org" rel="noopener noreferrer" target="_blank"' in html


def test_embeds_show_the_embedded_page_and_attachments():
    html = render_markdown("![[Packing]]\n\n![[trunk.png]]\n\n![a trunk](trunk.jpg)",
                           _links(lead="Fold the [[Packing|trunks]]. ![[Packing]]"))
    # Alone in its paragraph the embed is a block (no <p> around it); the embedded page's own
    # embed sits inside its text, inline, and one level deep is a link only.
    assert html.startswith('<div class="embed"><div class="embed-title"><a class="wikilink"')
    assert '<p>Fold the' in html and '<span class="embed"><span class="embed-title">' in html
    assert html.count('class="embed"') == 2
    assert ('<img class="attachment-image" data-src="/dashboard/attachment?target=trunk.png'
            '&amp;page=" alt="trunk.png">') in html
    assert 'data-src="/dashboard/attachment?target=trunk.jpg&amp;page=" alt="a trunk"' in html


def test_an_embed_inside_text_stays_inline_and_no_paragraph_nests_another():
    html = render_markdown("See ![[Packing]] here.\n\n![[Packing]]\n",
                           _links(lead="Fold.\n\nThen pack."))
    assert '<p>See <span class="embed">' in html and "Fold. Then pack.</span> here.</p>" in html
    assert '<div class="embed">' in html and "<p>Then pack.</p>\n</div>" in html
    depth = 0
    for tag in re.findall(r"</?p>", html):      # never a <p> inside a <p>
        depth += 1 if tag == "<p>" else -1
        assert depth in (0, 1)


def test_callouts_are_titled_boxes_and_foldable_ones_details():
    html = render_markdown("> [!warning] Interoperability\n> Plain **Markdown** files.\n\n"
                           "> [!faq]- Can I?\n> Yes.\n\n> [!tip]+\n> Open.\n\n"
                           "> Just a quote [!note]\n", _links())
    assert ('<div class="callout callout-warning" data-callout="warning">\n'
            '<div class="callout-title">Interoperability</div>\n'
            '<p>Plain <strong>Markdown</strong> files.</p>\n</div>') in html
    assert ('<details class="callout callout-question" data-callout="question">\n'
            '<summary class="callout-title">Can I?</summary>\n<p>Yes.</p>\n</details>') in html
    assert ('<details class="callout callout-tip" data-callout="tip" open>\n'
            '<summary class="callout-title">Tip</summary>') in html
    assert "[!" not in html.replace("Just a quote [!note]", "")
    assert "<blockquote>\n<p>Just a quote [!note]</p>\n</blockquote>" in html


def test_a_callout_type_is_obsidians_an_alias_its_type_and_any_other_a_note():
    """``[!x]`` gave the class ``callout-x`` whatever x was: ``[!title]`` took the class of
    the dashboard's callout titles, and the whole box was drawn bold."""
    html = render_markdown("> [!TLDR]\n> Short.\n\n> [!title] Kept title\n> Body.\n\n"
                           "> [!made-up]\n> Body.\n\n> [!cite]- Who\n> Me.\n", _links())
    assert ('<div class="callout callout-abstract" data-callout="abstract">\n'
            '<div class="callout-title">Tldr</div>') in html
    assert ('<div class="callout callout-note" data-callout="note">\n'
            '<div class="callout-title">Kept title</div>') in html
    assert '<div class="callout-title">Made-up</div>' in html
    assert '<details class="callout callout-quote" data-callout="quote">' in html
    assert "callout-title\" data" not in html and "made-up" not in html


def test_block_ids_leave_the_text_and_become_the_blocks_id():
    html = render_markdown("A network of knowledge. ^b15695\n\n- one ^item-1\n- two\n\n"
                           "> quoted\n\n^quote\n\n`code ^not`\n", _links())
    assert '<p id="^b15695">A network of knowledge.</p>' in html
    assert '<li id="^item-1">one</li>' in html
    assert '<blockquote id="^quote">' in html and "^quote" not in html.replace('"^quote"', "")
    assert "<code>code ^not</code>" in html


def test_an_id_on_the_line_after_a_quote_or_a_callout_names_it():
    """``^id`` right after ``> ...`` lines (no blank line: the quote's paragraph takes it in)
    stayed visible text with no id: 27 pages of the Obsidian Help vault
    (``^sync-geo-regions``). It names the whole quote or callout, as in Obsidian."""
    html = render_markdown("> **Europe**: Frankfurt\n> **Oceania**: Sydney\n^regions\n\n"
                           "> [!note] Title\n> body\n^callout-id\n\n"
                           "Plain line\n^para-id\n", _links())
    assert '<blockquote id="^regions">' in html
    assert '<div class="callout callout-note" data-callout="note" id="^callout-id">' in html
    assert '<p id="^para-id">Plain line</p>' in html
    assert not re.search(r"\^(regions|callout-id|para-id)(?!\")", html)


def test_footnotes_keep_their_text_in_every_language():
    """``[^footnote]: 这是一个脚注。`` (no space in its text) was read as a link definition:
    the footnote's text vanished and its reference was drawn as a broken link (3 ja/zh pages
    of the Help vault). It is a numbered reference with its note at the end, its raw HTML
    drawn through the allow-list (dashboard/raw_html.py)."""
    html = render_markdown("你可以添加脚注[^footnote]：\n\n[^footnote]: 这是一个脚注。\n\n"
                           "Also[^2].\n\n[^2]: <b>bold</b> https://example.com\n", _links())
    assert '<sup class="footnote-ref"><a href="#fn1" id="fnref1">[1]</a></sup>' in html
    assert "这是一个脚注。" in html and "wikilink broken" not in html
    assert "<p><b>bold</b> https://example.com" in html


def test_an_embedded_texts_footnotes_have_ids_of_their_own():
    lead = "Packed[^1].\n\n[^1]: In the trunk.\n"
    html = render_markdown("Mine[^1].\n\n![[Packing]]\n\n![[Packing]]\n\n[^1]: My note.\n",
                           _links(lead=lead))
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)) and {"fn1", "fn-e1-1", "fn-e2-1"} <= set(ids), ids
    assert "In the trunk." in html and "My note." in html


def test_code_is_highlighted_with_classes_not_inline_styles():
    html = render_markdown("```python\ndef pack():\n    return '<b>'\n```\n", _links())
    assert '<span class="hl-k">def</span>' in html
    assert "'&lt;b&gt;'" in html and "style=" not in html
    assert "&lt;b&gt;" in render_markdown("```nosuchlanguage\n<b>\n```\n", _links())


def test_graph_and_page_views_of_a_vault(tmp_path):
    for name, text in PAGES.items():
        (tmp_path / name).write_text(text)
    vault = load_vault(tmp_path)
    kg = KnowledgeGraph.build(vault.pages)
    communities = detect_communities(kg)
    view = graph_view(vault, kg, communities, {"Home.md": {"level": 2}})
    nodes = {n["id"]: n for n in view["nodes"]}
    assert nodes["Home.md"]["trust"] == 2 and nodes["Packing.md"]["trust"] == 0
    assert nodes["Packing.md"]["backlinks"] == 1 and nodes["Home.md"]["backlinks"] == 1
    assert {(e["source"], e["target"], e["kind"], e["relation"]) for e in view["edges"]} >= {
        ("Home.md", "Packing.md", "extracted", "wikilink"),
        ("Packing.md", "Home.md", "extracted", "related"),
        ("Home.md", "Packing.md", "inferred", "shared_tag")}
    page = page_view(vault, vault.pages["Home.md"], communities, {"level": 0})
    assert 'data-page="Packing.md"' in page["html"] and page["lang"] == "en"
    assert page["community"]["size"] >= 1 and page["trust"]["origin"] == "human"


def test_summary_is_plain_text_of_the_first_words(tmp_path):
    (tmp_path / "A.md").write_text("# A\n\n> [!summary] See [[B|the bee]] **now**.\n\n" +
                                   "word " * 100)
    summary = summary_of(load_vault(tmp_path).pages["A.md"])
    assert summary.startswith("See the bee now.") and summary.endswith("…")
    assert len(summary) == 200


def test_an_ambiguous_link_is_titled_with_the_pages_it_could_mean(tmp_path):
    """A link matching two pages was titled "no such page"; it names them, as `check` does."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "Setup.md").write_text("# Setup\n")
    (tmp_path / "Home.md").write_text("# Home\n\n[[Setup]], [[Nope]], [md](Setup.md)\n")
    vault = load_vault(tmp_path)
    html = page_view(vault, vault.pages["Home.md"], [], {})["html"]
    ambiguous = ('title="matches 2 pages (a/Setup.md, b/Setup.md); write the folder path, '
                 'e.g. [[a/Setup]]."')
    assert f'<span class="wikilink broken" {ambiguous}>Setup</span>' in html
    assert f'<a href="#" class="wikilink broken" {ambiguous}>md</a>' in html
    assert '<span class="wikilink broken" title="no such page">Nope</span>' in html
