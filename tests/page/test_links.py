"""Link extraction: every Obsidian form, code ignored, attachments apart."""

import pytest

from mindgraph.page.parse import parse_page


def links(text):
    return parse_page(text, "src/Page.md").links


def test_wikilink_forms():
    found = links("[[T]] [[T|alias]] [[T#Heading]] [[T#^blockid]] [[#Local]] [[T#H1#H2|x]]")
    assert [(l.target, l.heading, l.block, l.alias) for l in found] == [
        ("T", None, None, None),
        ("T", None, None, "alias"),
        ("T", "Heading", None, None),
        ("T", None, "blockid", None),
        ("", "Local", None, None),
        ("T", "H1#H2", None, "x"),
    ]
    assert found[4].is_self


def test_embeds_and_attachments():
    found = links("![[Other note]] ![[image.png|200]] [[doc.PDF]] ![[v1.2.3]]")
    assert [(l.target, l.syntax, l.is_attachment) for l in found] == [
        ("Other note", "embed", False),
        ("image.png", "embed", True),
        ("doc.PDF", "wikilink", True),
        ("v1.2.3", "embed", False),  # a dotted page name is not an attachment
    ]


def test_escaped_pipe_inside_table():
    found = links("| a | [[Basic formatting syntax\\|Markdown syntax]] |")
    assert (found[0].target, found[0].alias) == ("Basic formatting syntax", "Markdown syntax")


def test_markdown_links_are_decoded_and_external_ones_ignored():
    found = links("[A](Some%20Note.md) [B](<Other Note.md#Part>) [C](https://x.org/a.md) "
                  "[D](obsidian://open?file=x) [E](#Local%20heading) ![img](pic.jpg)")
    assert [(l.target, l.heading, l.syntax, l.is_attachment) for l in found] == [
        ("Some Note.md", None, "markdown", False),
        ("Other Note.md", "Part", "markdown", False),
        ("", "Local heading", "markdown", False),
        ("pic.jpg", None, "embed", True),
    ]


def test_links_in_code_spans_and_fences_are_ignored():
    text = "`[[No]]` and ``[[No2]] ` `` [[Yes]]\n```\n[[Fenced]]\n```\n    [[Indented list item]]"
    assert [l.target for l in links(text)] == ["Yes", "Indented list item"]


def test_links_in_comments_are_ignored():
    assert [l.target for l in links("%% [[Hidden]] %% <!-- [[Html]] --> [[Shown]]")] == ["Shown"]


def test_line_numbers_count_frontmatter():
    found = parse_page("---\na: 1\n---\n\n[[X]]\n", "p.md").links
    assert found[0].line == 5


def test_frontmatter_typed_links():
    page = parse_page("---\nrelated: ['[[A]]', B]\ndepends_on: \"[[C|see C]]\"\n"
                      "supersedes: [[D]]\n---\nbody", "p.md")
    typed = [(l.target, l.relation, l.syntax) for l in page.links]
    assert ("A", "related", "frontmatter") in typed
    assert ("B", "related", "frontmatter") in typed
    assert ("C", "depends_on", "frontmatter") in typed
    assert ("D", "supersedes", "frontmatter") in typed


def test_tags_not_taken_from_links_urls_or_headings():
    page = parse_page("# Title\n[[Note#Heading]] https://x.org/#frag [a](b.md#c) #real", "p.md")
    assert page.tags == ("real",)


PATHOLOGICAL = ["[[", "[[a", "![[", "[a](", "![a](", "[", "[a", "[[a|", "[[a](", "**a ", "_a ",
                "*a ", "<!-- ", "%% ", "Some %%note%% text.\n"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("unit", PATHOLOGICAL)
def test_unclosed_markup_costs_linear_time(unit):
    """A long line of openers that never close: every regex used to retry from each opener
    to the end of the line (quadratic: minutes for 200 KB). Linear, this takes well under a
    second; the quadratic code needed hours for the same text."""
    from mindgraph.ingest.extract import plain_text, summary
    from mindgraph.retrieval.present import readable
    from mindgraph.vectors.chunking import clean_markdown

    # (the last unit ends with one HTML comment: each step of the scan used to look for it
    # again from where it was)
    text = "# Title\n\n" + unit * (200_000 // len(unit)) + "<!-- end -->\n"
    page = parse_page(text, "x.md")
    assert page.sections and readable(text) and clean_markdown(text) is not None
    assert summary(text) is not None and plain_text(text) is not None


@pytest.mark.timeout(30)
def test_comment_scan_is_linear_with_both_kinds_mixed():
    """Many %%comments%% and one HTML comment at the end: each step used to search for the
    HTML opener again from where the scan was (4 MB: minutes; now a fraction of a second)."""
    from mindgraph.page.markdown import comment_spans

    text = "Some %%note%% text.\n" * 200_000 + "<!-- end -->\n"
    spans = comment_spans(text)
    assert len(spans) == 200_001 and text[spans[-1][0]:spans[-1][1]] == "<!-- end -->"
