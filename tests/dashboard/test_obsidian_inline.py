"""Obsidian's inline syntax in the dashboard (dashboard/obsidian_inline.py): what the Help
vault's pages showed as raw text — comments, highlights, tags, task items, math, and links
with an alias in table rows."""

from mindgraph.dashboard.render import Links, render_markdown


def _render(text: str, known: tuple[str, ...] = ()) -> str:
    return render_markdown(text, Links(lambda t: f"{t}.md" if t in known else None,
                                       lambda path: ""))


def test_comments_are_hidden_unless_in_code():
    html = _render("This is an %%inline%% comment.\n\n%%\nA block comment.\n\nStill it.\n%%\n\n"
                   "`%%code%%`\n\n```md\n%%fenced%%\n```\n")
    assert "inline" not in html and "block comment" not in html and "Still it" not in html
    assert "<p>This is an  comment.</p>" in html
    assert "<code>%%code%%</code>" in html and "%%fenced%%" in html


def test_highlights_are_marked():
    html = _render("it means ==you haven’t hit **the** limit== yet; a == b and ==x ==\n")
    assert "<mark>you haven’t hit <strong>the</strong> limit</mark> yet" in html
    assert "a == b and ==x ==" in html


def test_tags_are_tag_elements_as_the_graph_reads_them():
    html = _render("#1984 isn't a tag, but #y1984 is; so are #nested/tag and\n#kebab-case, "
                   "not x#y nor [[Note#Heading]].\n", known=("Note",))
    assert '<span class="tag" data-tag="y1984">#y1984</span>' in html
    assert '<span class="tag" data-tag="nested/tag">#nested/tag</span>' in html
    assert '<span class="tag" data-tag="kebab-case">#kebab-case</span>' in html
    assert html.count('class="tag"') == 3 and "#1984 isn't" in html


def test_task_items_have_disabled_checkboxes():
    html = _render("- [x] This is a completed task.\n- [ ] This is an incomplete task.\n")
    assert ('<li class="task-list-item"><input class="task-list-item-checkbox" '
            'type="checkbox" disabled checked> This is a completed task.</li>') in html
    assert '<input class="task-list-item-checkbox" type="checkbox" disabled> This is an' in html


def test_math_is_kept_whole_and_prices_stay_text():
    r"""TeX is not markdown: ``b\\ c`` lost a backslash and ``a_1 ... b_2`` became emphasis."""
    html = _render("$$\n\\begin{vmatrix}a & b\\\\\nc & d\\end{vmatrix}=a_1 b_2\n$$\n\n"
                   "Inline $e^{2i\\pi} = 1$, and it costs $25 or $50.\n")
    assert ('<div class="math block">\n\\begin{vmatrix}a &amp; b\\\\\nc &amp; '
            'd\\end{vmatrix}=a_1 b_2\n</div>') in html
    assert '<span class="math inline">e^{2i\\pi} = 1</span>' in html
    assert "it costs $25 or $50." in html


def test_display_math_inside_a_sentence_is_a_span_and_alone_a_block():
    html = _render("Energy $$E<mc^2$$ here.\n\n$$\nx_1\n$$\n")
    assert '<p>Energy <span class="math inline display">E&lt;mc^2</span> here.</p>' in html
    assert '<div class="math block">\nx_1\n</div>' in html


def test_a_pipe_inside_a_link_in_a_table_row_is_the_links():
    """``| [[Syncリージョン|リージョン]] |`` (ja/zh Help vault, unescaped) split the link into two
    cells, drawing ``[[Syncリージョン`` and ``リージョン]]`` as text."""
    html = _render("| a | b |\n|---|---|\n| サーバーの[[Sync|リージョン]] | x |\n"
                   "| [[Sync\\|escaped]] | y |\n", known=("Sync",))
    assert ('<td>サーバーの<a class="wikilink" href="#page=Sync.md" data-page="Sync.md">'
            'リージョン</a></td>\n<td>x</td>') in html
    assert '>escaped</a></td>\n<td>y</td>' in html
    assert "[[" not in html and "]]" not in html
