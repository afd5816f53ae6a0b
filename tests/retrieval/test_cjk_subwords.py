"""`mindgraph search` for a short Chinese word the pages only have inside longer words: 霜
("frost") finds 霜冻 and 霜花, which jieba keeps whole (retrieval/subwords.py,
``retrieval.subword_weight``). A word some page has on its own is not looked up inside others,
and the option off gives the old answer: nothing."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli

PAGES = {
    "天气.md": "# 天气\n\n今年秋天的霜冻来得很早。\n",
    "窗户.md": "# 窗户\n\n窗上结了一层霜花。\n",
    "河流.md": "# 河流\n\n河水结冰了。\n",
    "冰箱.md": "# 冰箱\n\n冰很冷。\n",
    "园艺.md": "# 园艺\n\n番茄需要阳光。\n",
}


def _workspace(tmp_path, config: str = ""):
    for path, text in PAGES.items():
        (tmp_path / "wiki").mkdir(exist_ok=True)
        (tmp_path / "wiki" / path).write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(
        "embedding: {provider: hashing, dimension: 64}\n" + config, encoding="utf-8")
    return tmp_path


def _search(workspace, query, *args):
    result = CliRunner().invoke(cli, ["search", query, "--json", "-C", str(workspace), *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["results"]


def test_a_short_word_finds_the_words_that_contain_it(tmp_path):
    workspace = _workspace(tmp_path)
    hits = _search(workspace, "霜")
    assert sorted(hit["page"] for hit in hits) == ["天气.md", "窗户.md"]
    frost = next(hit for hit in hits if hit["page"] == "天气.md")
    assert "**霜冻**" in frost["snippet"]
    assert frost["matched_terms"] == ["霜"]
    hybrid = _search(workspace, "霜", "--hybrid")
    assert {hit["page"] for hit in hybrid} >= {"天气.md", "窗户.md"}
    assert "**霜冻**" in next(h for h in hybrid if h["page"] == "天气.md")["snippet"]


def test_a_word_the_pages_have_is_not_looked_up_inside_others(tmp_path):
    workspace = _workspace(tmp_path)
    # 冰 is a word of 冰箱.md: 结冰 (河流.md) is another word, as before
    assert [hit["page"] for hit in _search(workspace, "冰")] == ["冰箱.md"]


def test_the_option_off_finds_only_whole_words(tmp_path):
    workspace = _workspace(tmp_path, "retrieval: {subword_weight: 0}\n")
    assert _search(workspace, "霜") == []
    assert [hit["page"] for hit in _search(workspace, "霜冻")] == ["天气.md"]
    bad = _workspace(tmp_path, "retrieval: {subword_chars: 0}\n")
    result = CliRunner().invoke(cli, ["search", "霜", "-C", str(bad)])
    assert result.exit_code != 0 and "retrieval.subword_chars" in result.output


def test_a_han_querys_subwords_are_looked_up_once_a_search(tmp_path, monkeypatch):
    """The fusion and the results' matched terms each looked a Han query's words up in the
    vault's words (segmenting the query again): once a search now, the answer the same."""
    from mindgraph.retrieval.keyword import KeywordIndex

    looked_up: list[str] = []
    subword_terms = KeywordIndex.subword_terms

    def counted(self, query, max_chars):
        looked_up.append(query)
        return subword_terms(self, query, max_chars)

    monkeypatch.setattr(KeywordIndex, "subword_terms", counted)
    hybrid = _search(_workspace(tmp_path), "霜", "--hybrid")
    assert "**霜冻**" in next(h for h in hybrid if h["page"] == "天气.md")["snippet"]
    assert looked_up == ["霜"]


def test_a_hostile_querys_expansion_is_capped(corpora, tmp_path, monkeypatch):
    """1,000 single common Han characters over the Chinese help pages: each a query word the
    vault's words contain. Uncapped they expanded to 3,015 terms, all scored by each search
    (bench/bench_subword_cap.py times it)."""
    import collections
    import re

    from mindgraph.retrieval.keyword import KeywordIndex
    from mindgraph.retrieval.subwords import MAX_PER_WORD, MAX_TERMS

    wiki = corpora / "obsidian-help" / "zh"
    han = re.compile(r"[\u4e00-\u9fff]")
    counts = collections.Counter(ch for page in sorted(wiki.rglob("*.md"))
                                 for ch in page.read_text(encoding="utf-8") if han.match(ch))
    query = " ".join(ch for ch, _ in counts.most_common(1000))
    (tmp_path / "mindgraph.yml").write_text(f"paths:\n  wiki: {wiki}\n  state: state\n",
                                            encoding="utf-8")
    expansions: list[dict[str, str]] = []
    subword_terms = KeywordIndex.subword_terms

    def counted(self, query, max_chars):
        expansions.append(subword_terms(self, query, max_chars))
        return expansions[-1]

    monkeypatch.setattr(KeywordIndex, "subword_terms", counted)
    result = CliRunner().invoke(cli, ["search", query, "--json", "-C", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["results"]
    assert expansions and all(len(found) == MAX_TERMS for found in expansions)
    per_word = collections.Counter(expansions[0].values())
    assert max(per_word.values()) <= MAX_PER_WORD
    assert MAX_TERMS == 256 and MAX_PER_WORD == 128     # well above real questions' 16
