"""Counting a long YAML text from libyaml's events refuses what building it and counting the
values refuses, with the same words, and nothing else."""

import pytest
import yaml

from mindgraph.page import yaml_read
from mindgraph.page.parse import parse_page

BIG = 12_000
SHAPES = {
    "many fields": "".join(f"k{i}: v\n" for i in range(BIG)),
    "a long list under a field": "a: 1\nb:\n" + "".join(f"  - {i}\n" for i in range(BIG)),
    "a flow list": "tags: [" + ", ".join(f"t{i}" for i in range(BIG)) + "]\n",
    "lists of lists": "a:\n" + "".join(f"  - [{i}, {i}, {i}]\n" for i in range(BIG // 3)),
    "a long mapping": "m:\n" + "".join(f"  k{i}: {i}\n" for i in range(BIG)),
    "a list document": "".join(f"- {i}\n" for i in range(BIG)),
    "deep": "a: " + "[" * 60 + "]" * 60 + "\n" + "".join(f"k{i}: v\n" for i in range(3_000)),
    "two documents": "".join(f"k{i}: v\n" for i in range(6_000)) + "---\n"
                     + "".join(f"j{i}: v\n" for i in range(6_000)),
    "within the budget": "".join(f"k{i}: {'v' * 10}\n" for i in range(4_000)),
    "just past": "".join(f"k{i}: v\n" for i in range(9_999)) + "x:\n  - 1\n  - 2\n",
}


def outcome(read, text):
    try:
        return ("ok", read(text))
    except yaml.YAMLError as exc:
        return ("error", str(exc), getattr(getattr(exc, "problem_mark", None), "line", None))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_counted_first_or_built_first_the_answer_is_the_same(shape, monkeypatch):
    text = SHAPES[shape]
    assert len(text) > yaml_read.SCAN_FIRST_CHARS
    scanned = outcome(yaml_read.load_yaml_documents, text)
    monkeypatch.setattr(yaml_read, "SCAN_FIRST_CHARS", 10 ** 9)
    built = outcome(yaml_read.load_yaml_documents, text)
    assert scanned == built


@pytest.mark.parametrize("shape", ["many fields", "a long list under a field", "a flow list",
                                   "a long mapping", "deep", "just past", "within the budget"])
def test_frontmatter_counted_first_says_what_it_said(shape, monkeypatch):
    text = f"---\n{SHAPES[shape]}---\n# Page\n"
    scanned = parse_page(text, "p.md").frontmatter_error
    monkeypatch.setattr(yaml_read, "SCAN_FIRST_CHARS", 10 ** 9)
    assert scanned == parse_page(text, "p.md").frontmatter_error


def test_an_alias_past_the_budget_is_still_refused_once_expanded():
    bomb = "a: &a [" + ", ".join(["x"] * 100) + "]\nb: &b [" + ", ".join(["*a"] * 200) + "]\n"
    text = bomb + "".join(f"k{i}: v\n" for i in range(2_000))
    with pytest.raises(yaml_read.YAMLLimitError, match="field 'b' is past the 10,000-value "
                                                       "limit for a data block once its YAML"):
        yaml_read.load_yaml_documents(text, "a data block")
