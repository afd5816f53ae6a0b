"""A note's raw HTML in the dashboard: the allow-list draws what Obsidian draws (``<u>``,
``<br>``, HTML headings...) and leaves everything that could act, load or restyle as text."""

from mindgraph.dashboard.render import Links, render_markdown


def _render(text: str) -> str:
    return render_markdown(text, Links(lambda target: None, lambda path: ""))


def test_formatting_tags_are_drawn_as_in_obsidian():
    """The Help vault's pages wrote ``line three<br> line four`` and ``<u>two weeks</u>`` as
    text (194 places on 12 English pages)."""
    html = _render("line three<br>\nline four, <u>two weeks</u> and <kbd>Ctrl</kbd>\n\n"
                   "<h1>This is a heading 1</h1>\n<h2>This is a heading 2</h2>\n")
    assert "line three<br>\nline four, <u>two weeks</u> and <kbd>Ctrl</kbd>" in html
    assert "<h1>This is a heading 1</h1>\n<h2>This is a heading 2</h2>" in html


def test_harmless_attributes_are_dropped_and_acting_ones_keep_the_tag_text():
    html = _render("<span class='flair'>Maker</span> <span style=\"font-family: cursive\">"
                   "s</span> <b onclick=\"x()\">b</b> <a href=\"javascript:alert(1)\">j</a> "
                   "<a href=\"https://example.org\" title=\"t\">ok</a>\n")
    assert "<span>Maker</span> <span>s</span>" in html
    assert "&lt;b onclick=&quot;x()&quot;&gt;b" in html and "<b " not in html
    assert "&lt;a href=&quot;javascript:alert(1)&quot;&gt;j" in html
    assert ('<a href="https://example.org" rel="noopener noreferrer" target="_blank" '
            'title="t">ok</a>') in html
    assert "style=" not in html.replace("&quot;", "") and "class=" not in html


def test_what_could_load_or_run_is_text_and_a_frame_is_a_link():
    html = _render("<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n"
                   '<div style="padding:1px"><iframe src="https://player.vimeo.com/video/1" '
                   'allow="autoplay"></iframe></div>\n\n<svg><path d="M0"/></svg>\n')
    assert "<script" not in html and "<img" not in html and "<svg" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert ('<div><a class="frame-link" href="https://player.vimeo.com/video/1" '
            'rel="noopener noreferrer" target="_blank">') in html
    assert "<iframe" not in html


def test_a_picture_or_video_on_another_server_is_a_link_to_it():
    """Release notes show ``<img alt="pdf-viewer" src="https://...">`` and a ``<video>`` of
    ``<source src="https://...mp4">``: the page's policy loads nothing from elsewhere."""
    html = _render('<img alt="pdf-viewer" src="https://example.org/p.png" onerror="x()">\n\n'
                   '<video width="640" controls>\n  <source src="https://example.org/v.mp4" '
                   'type="video/mp4">\n</video>\n')
    assert ('<a class="frame-link" href="https://example.org/p.png" rel="noopener noreferrer" '
            'target="_blank">pdf-viewer</a>') in html
    assert ('<a class="frame-link" href="https://example.org/v.mp4" rel="noopener noreferrer" '
            'target="_blank">https://example.org/v.mp4</a>') in html
    assert "<video" not in html and "&lt;video" not in html and "<img" not in html


def test_an_img_of_a_vault_file_is_its_attachment_embed():
    """``<img src="local.png">`` stayed text: it is drawn as ``![[local.png]]`` is, through
    the attachment route (found in raw/ or marked missing); an ``<img>`` with any attribute
    that acts, or a ``src`` with a scheme or from the root, stays text."""
    links = Links(lambda target: None, lambda path: "", "sub/Page.md", lambda t: t != "gone.png")
    html = render_markdown(
        'An <img src="local.png" alt="A map"> and <img src="pics/a%20b.png" width="300">.\n\n'
        '<div><img src="gone.png"></div>\n\n<img src="x.png" onerror="y()"> '
        '<img src="/etc/x.png"> <img src="data:image/png,x.png"> <img src="file:x.png"> '
        '<img src="//evil.example/x.png"> <img src="notes.md">\n', links)
    assert ('An <img class="attachment-image" data-src="/dashboard/attachment?target=local.png'
            '&amp;page=sub%2FPage.md" alt="A map"> and <img class="attachment-image" data-src='
            '"/dashboard/attachment?target=pics%2Fa%20b.png&amp;page=sub%2FPage.md" '
            'alt="a b.png" width="300">.') in html
    assert '<div><span class="attachment missing" title="not found in raw/">gone.png' in html
    assert html.count("<img") == 2 and "onerror=&quot;" in html
    for refused in ("/etc/x.png", "data:image/png,x.png", "file:x.png",
                    "//evil.example/x.png", "notes.md"):
        assert f"&lt;img src=&quot;{refused}&quot;&gt;" in html


def test_comments_are_hidden_and_tags_are_balanced():
    """A note's HTML cannot close the dashboard's elements nor leave its own open: a closing
    tag nothing opened is dropped, an open one is closed at the end of its paragraph or page."""
    html = _render("a <!-- hidden --> b</div></span> <b>open\n\n<details>\n<summary>S</summary>"
                   "\n\ninside\n\n</div>\n")
    assert "hidden" not in html and "</div>" not in html.split("<details>")[0]
    assert "<p>a  b <b>open</b></p>" in html
    assert html.replace("\n", "").endswith("<p>inside</p></details>")


def test_a_paragraph_tag_inside_a_table_cell_is_a_line_break():
    html = _render("| a |\n|---|\n| one<p/>two |\n")
    assert "<td>one<br>two</td>" in html


def test_a_line_opening_with_a_tag_not_drawn_is_a_paragraph_whose_markdown_is_read():
    """``<script>…</script> [[Packing]]`` was an HTML block (CommonMark's): its link text."""
    html = render_markdown("<script>x()</script> [[Packing]] and **bold**\n\n<folder>/x\n",
                           Links(lambda target: "Packing.md", lambda path: ""))
    assert ('<p>&lt;script&gt;x()&lt;/script&gt; <a class="wikilink" href="#page=Packing.md" '
            'data-page="Packing.md">Packing</a> and <strong>bold</strong></p>') in html
    assert "<p>&lt;folder&gt;/x</p>" in html
