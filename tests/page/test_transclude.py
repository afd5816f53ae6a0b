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
