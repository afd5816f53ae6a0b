"""A workspace of a few wiki pages with hashing vectors and no query expansion, shared by the
translation tests (test_translate.py, test_twins.py)."""

from __future__ import annotations


def wiki_workspace(tmp_path, pages, retrieval=""):
    """``pages`` (path → text) under ``tmp_path``/wiki; ``retrieval``: more lines of the
    config's retrieval section. Returns the workspace folder as a string."""
    for path, text in pages.items():
        file = tmp_path / "wiki" / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\nretrieval:\n  expansion: 'off'\n" + retrieval)
    return str(tmp_path)
