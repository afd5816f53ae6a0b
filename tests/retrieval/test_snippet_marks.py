"""A snippet's ** marks stay out of code spans: a match in one marks the span whole, and no
window starts or ends inside one (retrieval/snippet_marks.py)."""

from mindgraph.retrieval.explain import snippet
from mindgraph.retrieval.present import _window, readable

TEXT = readable("Write `a ** b` for a power, `**bold**` for bold and `zeppelin.json` for the "
                "zeppelin data.")


def test_a_match_in_a_code_span_marks_the_whole_span_and_nothing_inside_code():
    for made in (_window(TEXT, ["zeppelin"]), snippet(TEXT, ["zeppelin"])):
        assert made.endswith("**`zeppelin.json`** for the **zeppelin** data."), made
        assert "`a ** b`" in made and "`**bold**`" in made
    assert "**`**bold**`** for **bold**" in _window(TEXT, ["bold"])


def test_a_window_does_not_cut_a_code_span():
    text = "words " * 60 + "`" + "a ** b " * 14 + "` the zeppelin " + "words " * 60
    for made in (_window(text, ["zeppelin"]), snippet(text, ["zeppelin"], width=60)):
        assert made.count("`") % 2 == 0, made
