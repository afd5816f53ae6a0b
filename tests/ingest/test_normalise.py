"""Body normalisation: the title H1 leaves, headings are levelled, code is untouched."""

from mindgraph.ingest.normalise import normalise_body

CODE = "```python\n# not a heading   \n\n\n\nx = 1  \n```"


def test_title_h1_leaves_and_other_h1_become_h2():
    body = "# My Title\n\nIntro.\n\n# Appendix\n\n### Deep\n\ntext"
    assert normalise_body(body, "My title") == "Intro.\n\n## Appendix\n\n### Deep\n\ntext"


def test_h1_that_is_not_the_title_stays_as_h2():
    assert normalise_body("# Something else\nbody", "Title") == "## Something else\n\nbody"


def test_skipped_levels_are_closed_and_h3_only_notes_move_up():
    assert normalise_body("## A\n#### B\n##### C\n## D", "t") == \
        "## A\n\n### B\n\n#### C\n\n## D"
    assert normalise_body("### A\n#### B", "t") == "## A\n\n### B"


def test_whitespace_is_cleaned_outside_code_only():
    body = "line one   \n\n\n\nline two\t\n\n" + CODE + "\n\n\n\nafter  "
    assert normalise_body(body, "t") == "line one\n\nline two\n\n" + CODE + "\n\nafter"


def test_code_fences_are_byte_identical_including_tilde_and_long_fences():
    body = "~~~\n## inside tilde   \n~~~\n\n````md\n```\n# inner\n```\n````"
    assert normalise_body(body, "t") == body


def test_unclosed_fence_keeps_its_trailing_blank_lines():
    body = "text\n```\ncode\n\n\n"
    assert normalise_body(body, "t") == body


def test_a_heading_starts_after_at_most_three_spaces():
    from mindgraph.ingest.normalise import heading_of

    assert [heading_of(line) for line in ("# a", " ## b", "   ### c ###", "    # code",
                                          "\t# tab", "#tag", "text # not", "#", "##  ")] == \
        [(1, "a"), (2, "b"), (3, "c"), None, None, None, None, None, None]
    assert normalise_body("intro\n   # Deep\n    # indented\nend", "t") == \
        "intro\n\n## Deep\n\n    # indented\nend"
