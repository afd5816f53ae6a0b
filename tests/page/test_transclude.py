"""What an embed shows of its target: a block, a heading's section, or the note's start."""

from __future__ import annotations

from mindgraph.page.model import Link
from mindgraph.page.parse import parse_page
from mindgraph.page.transclude import embedded_text, page_embeds

TARGET = parse_page(
    "---\ntags: [x]\n---\n# Target\n\nLead words.\n\n## Hosting\n\nServers here.\n\n"
    "### Where\n\nIn Frankfurt.\n\n## Other\n\nNot shown.\n\n"
    "First line of a paragraph\nthat ends here ^para\n\n- one item\n- second item ^item\n"
    "- third item\n\n| a | b |\n| - | - |\n| 1 | 2 |\n^table\n\n```\ncode ^incode\n```\n",
    "Target.md")


def shown(**kw):
    return embedded_text(TARGET, Link(target="Target", syntax="embed", **kw))


def test_a_heading_shows_its_section_with_subsections_up_to_the_next_of_its_level():
    assert shown(heading="hosting") == "## Hosting\n\nServers here.\n\n### Where\n\nIn Frankfurt."
    assert shown(heading="Hosting#Where") == "### Where\n\nIn Frankfurt."
    assert shown(heading="No such heading") is None


def test_a_block_shows_its_paragraph_list_item_or_the_block_above_its_own_line():
    assert shown(block="para") == "First line of a paragraph\nthat ends here"
    assert shown(block="item") == "- second item"
    assert shown(block="table") == "| a | b |\n| - | - |\n| 1 | 2 |"
    assert shown(block="incode") is None          # an id inside code is no block id
    assert shown(block="gone") is None


def test_a_whole_note_shows_its_body_cut_at_a_line_end():
    assert shown().startswith("# Target\n\nLead words.")
    cut = embedded_text(TARGET, Link(target="Target", syntax="embed"), max_chars=30)
    assert len(cut) <= 30 and cut.endswith("Lead words.")


def test_only_embeds_of_notes_count():
    page = parse_page("# P\n\n![[Target#^para]] ![[pic.png]] [[Target]] ![[#Local]]\n", "P.md")
    assert [(l.target, l.block) for l in page_embeds(page)] == [("Target", "para")]


def test_any_block_id_is_found_where_a_search_of_the_whole_body_finds_it():
    """Every line's last marker is indexed once (an id of another form than [A-Za-z0-9-]+
    was searched for through the whole body, once an id); the search stays the reference."""
    from hypothesis import example, given, settings, strategies as st

    from mindgraph.page.transclude import _block_marker, _block_text, _outline

    pieces = st.sampled_from(["^", " ", "]", ")", "a", "A", ".", "1", "x", "^a.1", "\t",
                              "`", "é"])
    line = st.lists(pieces, max_size=8).map("".join)

    @settings(max_examples=500, deadline=None)
    @example(["x ^ a"], [], 0, 1)                   # the id " a"
    @example(["x ^a.1 ^b", "y ^a.1"], [], 0, 1)     # "a.1 ^b": a marker inside the id
    @example(["x^a.1", "]^A.1 \t"], ["a", ".", "1"], 0, 0)
    @example(["`^a.1`", "(^a.1)", ") ^a.1"], ["^a.1"], 0, 0)
    @given(st.lists(line, min_size=1, max_size=8), st.lists(pieces, min_size=1, max_size=5),
           st.integers(0, 7), st.integers(0, 7))
    def same(lines, pieces, which, caret):
        body = "\n".join(lines)
        # an id written in the body half the time: what follows one of its carets
        ends = [i + 1 for i, c in enumerate(lines[which % len(lines)]) if c == "^"]
        block = lines[which % len(lines)][ends[caret % len(ends)]:] \
            if ends and caret % 2 else "".join(pieces)
        if not block:
            return
        outline, key = _outline(body), block.lower()
        at = _block_marker(outline.masked, block)           # the whole body searched
        searched = outline._replace(first_block={key: at}, found={key: at})
        assert _block_text(outline, block) == _block_text(searched, block), (body, block)

    same()
