"""Finding pages by name, agent-data blocks, stable addresses."""

import pytest

from mindgraph.errors import NotFoundError
from mindgraph.page.address import page_url
from mindgraph.page.data import DataBlockError, extract_data
from mindgraph.page.lookup import find_page
from mindgraph.page.parse import parse_page

PAGES = {p.path: p for p in [
    parse_page("---\ntitle: Trunk Catalog\naliases: [Trunks]\n---\nx", "gear/catalog.md"),
    parse_page("---\ntitle: Index\n---\n", "a/Index.md"),
    parse_page("---\ntitle: Index\n---\n", "b/Index.md"),
]}


@pytest.mark.parametrize("name", ["gear/catalog.md", "gear/catalog", "GEAR/Catalog",
                                  "trunk catalog", "Trunks", "catalog"])
def test_find_page_by_any_name(name):
    assert find_page(PAGES, name).path == "gear/catalog.md"


def test_ambiguous_name_lists_candidates():
    with pytest.raises(NotFoundError, match=r"file name of 2 pages \(a/Index.md, b/Index.md\)"):
        find_page(PAGES, "Index")
    assert find_page(PAGES, "a/index").path == "a/Index.md"
    with pytest.raises(NotFoundError, match=r"'Catalog.md' is the file name of 2 pages"):
        find_page({**PAGES, **HOME}, "Catalog.md")      # an alias elsewhere does not decide


HOME = {p.path: p for p in [
    parse_page("# Obsidian Help\nWelcome.", "en/Home.md"),
    parse_page("---\naliases: [Home, Catalog]\n---\n# 由此开始", "zh/由此开始.md"),
    parse_page("# Other\n", "b/catalog.md"),
]}


def test_a_file_name_wins_over_another_pages_alias():
    """As Obsidian resolves [[Home]]: to Home.md, not to the page that has "Home" as alias."""
    assert find_page(HOME, "Home").path == "en/Home.md"
    assert find_page(HOME, "Home.md").path == "en/Home.md"
    assert find_page(HOME, "由此开始").path == "zh/由此开始.md"
    # a file name two pages share, but one of them has it as its title: that one
    releases = {p.path: p for p in [parse_page("# v1.4.0\nDesktop.", "desktop/v1.4.0.md"),
                                    parse_page("# Mobile 1.4\nMobile.", "mobile/v1.4.0.md")]}
    assert find_page(releases, "v1.4.0").path == "desktop/v1.4.0.md"
    # ... but when the title fits several of them too, an alias on one does not decide
    uri = {p.path: p for p in [
        parse_page("# Obsidian URI\n", "en/Obsidian URI.md"),
        parse_page("# Obsidian URI\n", "ja/Obsidian URI.md"),
        parse_page("---\naliases: [Obsidian URI]\n---\n# Obsidian URI\n", "zh/Obsidian URI.md")]}
    with pytest.raises(NotFoundError, match="file name of 3 pages"):
        find_page(uri, "Obsidian URI")


@pytest.mark.timeout(30)
def test_lookup_among_thousands_of_same_named_pages_is_fast():
    pages = {f"d{i}/README.md": parse_page("no heading\n", f"d{i}/README.md")
             for i in range(8000)}
    with pytest.raises(NotFoundError, match="file name of 8000 pages"):
        find_page(pages, "readme")


def test_unknown_name_suggests():
    with pytest.raises(NotFoundError, match="Did you mean: gear/catalog.md"):
        find_page(PAGES, "Trunk Catalgo")


DATA_NOTE = """---
title: Trunk Catalog
---
People read this.

```python
not = "data"
```

```json
{"trunks": [{"id": "t1", "size": 80}]}
```

```yaml
owner: ana
count: 2
```

```json
{"broken": ,}
```
"""


def test_extract_first_second_and_by_language():
    page = parse_page(DATA_NOTE, "catalog.md")
    assert extract_data(page) == {"trunks": [{"id": "t1", "size": 80}]}
    assert extract_data(page, 2) == {"owner": "ana", "count": 2}
    assert extract_data(page, 1, "yaml") == {"owner": "ana", "count": 2}


def test_yaml_blocks_fenced_like_frontmatter_and_hostile_values():
    page = parse_page("# P\n\n```yaml\n---\nname: value\ntags: [a]\n---\n```\n\n"
                      "```yaml\nn: !!int abc\n```\n\n```yaml\na: &x [*x]\n```\n", "p.md")
    assert extract_data(page, 1) == {"name": "value", "tags": ["a"]}
    with pytest.raises(DataBlockError, match="p.md:.*cannot read 'abc' as int"):
        extract_data(page, 2)
    with pytest.raises(DataBlockError, match="p.md:.*field .a. nests deeper than 50 levels"):
        extract_data(page, 3)


def test_extract_errors_name_file_and_line():
    page = parse_page(DATA_NOTE, "catalog.md")
    with pytest.raises(DataBlockError, match=r"catalog\.md:20: the ```json block"):
        extract_data(page, 3)
    with pytest.raises(NotFoundError, match="has 3"):
        extract_data(page, 4)
    with pytest.raises(NotFoundError, match="no ```json or ```yaml block"):
        extract_data(parse_page("just prose", "p.md"))


def test_url_is_file_uri_or_obsidian_link(tmp_path):
    assert page_url(tmp_path, "a b.md") == (tmp_path / "a b.md").as_uri()
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / "sub").mkdir()
    name = tmp_path.name
    assert page_url(tmp_path, "sub/My Note.md") == \
        f"obsidian://open?vault={name}&file=sub%2FMy%20Note"
