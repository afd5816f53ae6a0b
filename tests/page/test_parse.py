"""Parsing pages: frontmatter, title, aliases, tags, sections."""

import pytest
import yaml

from mindgraph.page.markdown import split_frontmatter
from mindgraph.page.parse import parse_page

PAGE = """---
title: Trunk Catalog
aliases: [Trunks, "Catalog of trunks"]
tags: [inventory, "#travel/gear"]
---
# Ignored H1
Lead text with #inline-tag and #nested/deep/tag but not #123 or a#b.

## Packing
Pack light. See [[Checklist]].

```python
## not a heading
x = "#not-a-tag [[Not a link]]"
```

### Shoes
Two pairs. `#code-tag` and `[[code link]]` are code.

#### Laces
Spare laces.

## Packing
Second section with the same heading.

## Unpacking
Done.
"""


def test_frontmatter_title_aliases_and_tags():
    page = parse_page(PAGE, "Travel/Trunk.md")
    assert page.title == "Trunk Catalog"
    assert page.aliases == ("Trunks", "Catalog of trunks")
    assert page.tags == ("inventory", "travel/gear", "inline-tag", "nested/deep/tag")
    assert page.has_frontmatter and page.frontmatter_error is None
    assert page.stem == "Trunk"


def test_sections_hold_own_text_with_stable_ids_and_paths():
    page = parse_page(PAGE, "Travel/Trunk.md")
    ids = [s.id for s in page.sections]
    assert ids == ["lead", "packing", "packing/shoes", "packing/shoes/laces", "packing-2",
                   "unpacking"]
    shoes = page.section("packing/shoes")
    assert shoes.path == ("Packing", "Shoes") and shoes.level == 3
    assert "Two pairs" in shoes.text and "Spare laces" not in shoes.text
    packing = page.section("packing")
    assert "## not a heading" in packing.text  # fenced code stays in its section's text
    assert "Two pairs" not in packing.text
    assert page.section("lead").text.startswith("Lead text")
    assert "Ignored H1" not in page.section("lead").text


def test_section_lines_point_at_headings():
    page = parse_page(PAGE, "Travel/Trunk.md")
    lines = PAGE.split("\n")
    for section in page.sections[1:]:
        assert lines[section.start_line - 1].lstrip("#").strip() == section.heading


def test_links_outside_code_with_sections():
    page = parse_page(PAGE, "Travel/Trunk.md")
    assert [(link.target, link.section_id) for link in page.links] == [("Checklist", "packing")]


def test_title_falls_back_to_h1_then_file_name():
    assert parse_page("# Heading One\ntext", "a/b.md").title == "Heading One"
    assert parse_page("text only", "a/My Note.md").title == "My Note"
    assert parse_page("## Only H2\ntext", "n.md").title == "n"


def test_malformed_frontmatter_is_reported_with_line_and_body_still_parsed():
    text = "---\ntitle: ok\nbad: [unclosed\n---\n## Body\nstill [[Linked]]\n"
    page = parse_page(text, "notes/bad.md")
    assert page.frontmatter == {}
    assert page.frontmatter_error is not None
    assert "notes/bad.md:" in page.frontmatter_error and "YAML" in page.frontmatter_error
    assert [link.target for link in page.links] == ["Linked"]


def test_frontmatter_dates_become_strings():
    page = parse_page("---\ndate: 2024-05-01\n---\nx", "d.md")
    assert page.frontmatter["date"] == "2024-05-01"


@pytest.mark.parametrize("yaml_text, frontmatter, error", [
    ("date: 2023-02-30", {"date": "2023-02-30"}, None),        # no such day: stays text
    ("updated: 2023-01-01 25:61:00", {"updated": "2023-01-01 25:61:00"}, None),
    ("title: x\nn: !!int abc", {}, "d.md:3: frontmatter is not valid YAML (cannot read 'abc'"),
    ("a: &x [*x]", {}, "d.md:2: frontmatter field 'a' nests deeper than 50 levels (or holds"),
    ("date: !!timestamp tomorrow", {"date": "tomorrow"}, None),
    ("draft: !!bool maybe", {}, "d.md:2: frontmatter is not valid YAML (cannot read 'maybe'"),
    ("b: !!binary aGVsbG8=\ns: !!set {x, a}", {"b": "hello", "s": ["a", "x"]}, None),
    ("a: !!omap [x: 2023-01-01]", {"a": [["x", "2023-01-01"]]}, None),
    ("a: &z !!pairs [k: *z]", {}, "d.md:2: frontmatter field 'a' nests deeper than 50"),
    ("a: " + "[" * 3000 + "]" * 3000, {}, "d.md:2: frontmatter is nested too deeply"),
    ("a: &a [" + ",".join(['"lol"'] * 9) + "]\n" + "\n".join(
        f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]" for p, n in zip("abcdefg", "bcdefgh")),
     {}, "d.md:6: frontmatter field 'e' is past the 10,000-value limit for a note's "
         "frontmatter once its YAML aliases (&name / *name) are expanded. Write the values "
         "out"),                                                   # a 1 KB alias bomb
    ("title: x\n'tags': [" + ", ".join(f"t{i}" for i in range(20_000)) + "]", {},
     "d.md:3: frontmatter field 'tags' holds 20,000 items, past the 10,000-value limit for a "
     "note's frontmatter. Shorten the list, or move it into the note's body."),
])
def test_frontmatter_that_cannot_be_built_is_an_error_with_its_line(yaml_text, frontmatter,
                                                                      error):
    page = parse_page(f"---\n{yaml_text}\n---\n## Body\nstill [[Linked]]\n", "d.md")
    assert page.frontmatter == frontmatter
    assert (page.frontmatter_error or "").startswith(error or "") and \
        (page.frontmatter_error is None) == (error is None)
    assert [link.target for link in page.links] == ["Linked"]


def test_headings_inside_tilde_fences_and_longer_fences_are_ignored():
    text = "~~~~\n## no\n~~~\n## still no\n~~~~\n## Yes\nbody"
    page = parse_page(text, "f.md")
    assert [s.heading for s in page.sections if s.level] == ["Yes"]


def test_cjk_tags_and_headings():
    page = parse_page("## 見出し\n本文 #タグ と #标签/子\n", "ja.md")
    assert page.sections[0].id == "見出し"
    assert page.tags == ("タグ", "标签/子")


def test_empty_page_has_no_sections():
    page = parse_page("", "empty.md")
    assert page.sections == () and page.links == () and page.title == "empty"


def test_aliases_of_the_wrong_shape_are_not_names():
    def aliases(yaml_text):
        return parse_page(f"---\n{yaml_text}\n---\nx", "p.md").aliases

    assert aliases("aliases: {a: 1}") == ()                       # not "{'a': 1}"
    assert aliases("aliases: [x, {y: 1}, [z], 2]") == ("x", "2")
    assert aliases("aliases: one") == ("one",)


COMPILED = """---
title: Canvas
---

> [!summary]
> Canvas is a core plugin for visual note-taking. It gives you an infinite space…

Canvas is a [[Core plugins|core plugin]] for **visual** note-taking.

It gives you an infinite space to lay out notes.

## Create a canvas

Click New canvas.
"""


def test_a_summary_callout_that_repeats_the_body_is_not_section_text():
    page = parse_page(COMPILED, "Canvas.md")
    lead = page.section("lead").text
    assert lead.count("visual") == 1 and "[!summary]" not in lead
    assert page.indexed_body.count("infinite space") == 1
    assert page.body.count("infinite space") == 2          # the page itself keeps it


@pytest.mark.parametrize("text", [
    COMPILED.replace("visual note-taking. It", "drawing boards. It"),   # says more
    COMPILED.replace("> [!summary]", "> [!note]"),                      # not a summary
    COMPILED.replace("---\n\n> [!summary]", "---\n\nIntro.\n\n> [!summary]"),  # not leading
])
def test_a_summary_that_is_not_a_leading_copy_stays(text):
    page = parse_page(text, "Canvas.md")
    assert page.copied_summary == (0, 0) and page.indexed_body == page.body
    assert page.section("lead").text.count("infinite space") == 2


@pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False), reason="PyYAML without libyaml")
def test_frontmatter_is_read_by_libyaml_not_the_pure_python_scanner(monkeypatch):
    # The pure-Python scanner took 80 % of parsing a compiled wiki (10,000 pages: ~30 s of
    # CPU before the first search); libyaml reads the same frontmatter into the same values.
    def pure_python_scanner(*args, **kwargs):
        raise AssertionError("frontmatter read by PyYAML's pure-Python scanner")

    monkeypatch.setattr(yaml.scanner.Scanner, "check_token", pure_python_scanner)
    page = parse_page(PAGE.replace("---\n# Ignored", "created: 2024-05-01\n---\n# Ignored"),
                      "t.md")
    assert page.title == "Trunk Catalog" and page.frontmatter_error is None
    assert page.aliases == ("Trunks", "Catalog of trunks")
    assert page.frontmatter["created"] == "2024-05-01"


def test_every_frontmatter_of_the_vault_reads_the_same_with_and_without_libyaml(corpora):
    from mindgraph.page import parse

    vault = corpora / "obsidian-help"
    blocks = [split_frontmatter(path.read_text(encoding="utf-8"))[0]
              for path in sorted(vault.rglob("*.md"))]
    blocks = [b for b in blocks if b and b.strip()]
    assert len(blocks) > 100
    for block in blocks:
        assert parse._load_frontmatter(block, "p.md") == \
            (parse._plain(yaml.load(block, Loader=parse._FrontmatterLoader), [10_000]), None)
