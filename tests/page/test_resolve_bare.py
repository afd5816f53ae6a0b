"""The fast path for folder-less link targets answers exactly what every rule in order does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mindgraph.page.resolve import LinkResolver

NAMES = ["Note", "note", "Other", "Deep", "Index", "a b", "Note.md", ".hidden", "...", "x.MD"]
FOLDERS = ["", "a", "A", "a/b", "b", "c/d", "a/./b", "ja/x", "zh/x"]


def _path(folder: str, name: str) -> str:
    file = name if name.lower().endswith(".md") else name + ".md"
    return f"{folder}/{file}" if folder else file


paths = st.lists(st.tuples(st.sampled_from(FOLDERS), st.sampled_from(NAMES)), max_size=12)
targets = st.sampled_from(NAMES + ["NOTE", "other.md", "Missing", "Gone", "deep.Md", "  Note  ",
                                   "Note\\"])


@settings(max_examples=300, deadline=None)
@given(paths, st.sampled_from(FOLDERS), st.sampled_from(NAMES), targets)
def test_a_bare_target_resolves_as_by_the_full_rules(pages, folder, name, target):
    resolver = LinkResolver({_path(f, n) for f, n in pages}, {"Other.md": ["Missing"]},
                            {"Gone.md": "Note.md"})
    source = _path(folder, name)
    raw = target.strip().replace("\\", "/")
    if "/" in raw:
        return
    assert resolver.resolve_target(target, source) == resolver._resolve_path(raw, source)
    assert resolver.resolve_target(target, source) == resolver._resolve_bare(raw, source)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FOLDERS), st.sampled_from(NAMES), targets)
def test_a_bare_targets_page_keys_are_those_of_the_full_rules(folder, name, target):
    from mindgraph.page.resolve import _path_link_keys, link_keys

    source = _path(folder, name)
    raw = target.strip().replace("\\", "/")
    if "/" not in raw:
        assert link_keys(target, source) == _path_link_keys(raw, source)
