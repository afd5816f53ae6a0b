"""The frontmatter emitter writes exactly what yaml.dump wrote for a page, for every shape."""

import datetime as dt
import random

import pytest
import yaml

from mindgraph.ingest import frontmatter_yaml
from mindgraph.ingest.frontmatter_yaml import dump
from mindgraph.ingest.render import render_page

# every ASCII character and the Unicode ones YAML treats specially, beside ordinary ones
ALPHABET = ([chr(c) for c in range(0x20, 0x7f)] + list("\t\n\r\x00\x07\x7f\x85\xa0\xe9\u00ff")
            + list("\u2028\u2029\ufeff\u3000\u2003日本語中文한\U0001f600") + ["  "] * 4
            + list("aeiou-:#'\" ") * 6)
TRICKY = ["", " ", "a", "-", "--", "---", "---x", "...", "..x", "- a", "-a", "? a", "?a", ":",
          ":a", ": a", "a:", "a: b", "a:b", "a #b", "a#b", "#a", "a ", " a", "'", "''", "a'b",
          '"a"', "yes", "No", "on", "OFF", "y", "n", "true", "True", "null", "Null", "~", "=",
          "<<", "1", "-1", "+1", "0o17", "0x1F", "1_000", "1:20", "1.5", "1e3", ".inf", ".NaN",
          "2023-01-02", "2023-01-02 10:00:00", "2023-1-2", "v1.2", "offline:v4", "en/a b.md",
          "https://help.obsidian.md/x?y=1#z", "[[Link]]", "a [b]", "{a}", "a, b", "@a", "`a`",
          "%a", "!a", "&a", "*a", "|a", ">a", "a|b", "a>b", "日本語", "\u3000a", "a\u3000",
          "\xa0a", "a\ttab", "line\nbreak", "\ufeffbom", "x" * 3000, "é" * 200, "a  b"]


def reference(meta):
    return yaml.dump(dict(meta), Dumper=frontmatter_yaml._DUMPER, sort_keys=False,
                     allow_unicode=True, default_flow_style=False, width=10_000)


def random_string(rng):
    if rng.random() < 0.3:
        return rng.choice(TRICKY)
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))


def random_value(rng, depth=0):
    roll = rng.random()
    if depth < 3 and roll < 0.15:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 3 and roll < 0.25:
        return {random_key(rng): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return rng.choice([random_string(rng)] * 6 + [
        True, False, None, rng.randint(-10**6, 10**6), rng.random() * 100, 1.0, float("inf"),
        dt.date(2024, 1, rng.randint(1, 28)), dt.datetime(2024, 2, 3, 4, 5, 6)])


def random_key(rng):
    roll = rng.random()
    if roll < 0.05:
        return rng.choice([1, True, None, dt.date(2024, 1, 1), "k" * 130, "é" * 70])
    return random_string(rng) if roll < 0.4 else rng.choice(
        ["title", "tags", "aliases", "cssclasses", "publish", "permalink", "description"])


@pytest.mark.parametrize("seed", range(40))
def test_random_frontmatter_is_written_as_yaml_writes_it(seed):
    rng = random.Random(seed)
    for _ in range(250):
        meta = {random_key(rng): random_value(rng) for _ in range(rng.randint(0, 8))}
        assert dump(meta) == reference(meta), meta


@pytest.mark.parametrize("text", TRICKY)
def test_each_tricky_string_as_key_value_and_item(text):
    for meta in ({"title": text}, {"tags": [text, "b"]}, {text: "v"},
                 {"provenance": {"sources": [{"path": text, "sha256": "ab"}]}},
                 {"a": [{text: [text]}, {}, [], [text]]}):
        assert dump(meta) == reference(meta), meta


def test_a_list_or_mapping_met_twice_is_left_to_yaml_and_its_anchor():
    shared = ["a", "b"]
    meta = {"tags": shared, "aliases": shared, "x": {"y": shared}}
    assert "&id001" in dump(meta)
    assert dump(meta) == reference(meta)


def test_the_common_page_shape_is_written_without_yaml(monkeypatch):
    meta = {"title": "Sync 日本語", "type": "note", "tags": ["obsidian", "help/en"],
            "aliases": [], "keywords": ["vault", "sync"], "publish": True, "created":
            "2023-01-02", "date_source": "frontmatter", "provenance": {
                "origin": "compiled_offline", "generator": "offline:v4",
                "sources": [{"path": "en/Sync.md", "sha256": "ab" * 32}]}}
    expected = reference(meta)
    monkeypatch.setattr(yaml, "dump", None)     # the fast path never calls it
    assert dump(meta) == expected
    assert render_page(meta, "A summary.", "Body.").startswith(f"---\n{expected}---\n")
