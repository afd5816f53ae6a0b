"""RawDocument and file-name sanitising: nothing an adapter names can leave its folder."""

import dataclasses
import posixpath
from pathlib import PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindgraph.adapters.base import RawDocument, safe_relative_path, safe_target
from mindgraph.errors import AdapterError


def test_raw_document_is_frozen_and_gives_bytes():
    doc = RawDocument("héllo", "a.md", {"mtime": 1.0})
    assert doc.data == "héllo".encode()
    assert RawDocument(b"\x00", "b.bin").data == b"\x00"
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.filename = "x"  # type: ignore[misc]


@pytest.mark.parametrize("name, expected", [
    ("notes/Idea.md", "notes/Idea.md"),
    ("../../etc/passwd", "etc/passwd"),
    ("/abs/path.md", "abs/path.md"),
    ("a/../../b.md", "a/b.md"),
    ("a\\..\\..\\win.md", "a/win.md"),
    ("./.hidden.md", "hidden.md"),
    ('What? A "quote": <yes>|*.md', "What_ A _quote__ _yes___.md"),
    ("con.md", "_con.md"),
    ("LPT1", "_LPT1"),
    ("trailing. ", "trailing"),
    ("tab\there\x00.md", "tab_here_.md"),
    ("Cafe\u0301.md", "Caf\u00e9.md"),
])
def test_safe_relative_path(name, expected):
    assert safe_relative_path(name) == expected


@pytest.mark.parametrize("name", ["", "..", "../..", "/", " . / .. "])
def test_names_with_nothing_usable_are_rejected(name):
    with pytest.raises(AdapterError, match="no usable characters"):
        safe_relative_path(name)


def test_long_names_are_cut_to_255_bytes_keeping_the_extension():
    out = safe_relative_path("é" * 300 + ".md")
    assert out.endswith(".md") and len(out.encode()) <= 255


def test_safe_target():
    assert safe_target("") == "" and safe_target(".") == "" and safe_target("/") == ""
    assert safe_target("../inbox") == "inbox"


@given(st.text(min_size=1, max_size=80))
def test_any_name_stays_inside_its_folder(name):
    try:
        rel = safe_relative_path(name)
    except AdapterError:
        return
    path = PurePosixPath(rel)
    assert not path.is_absolute()
    assert ".." not in path.parts and "." not in path.parts and "" not in path.parts
    assert posixpath.normpath(posixpath.join("/root/raw", rel)).startswith("/root/raw/")
    assert "\x00" not in rel and "\\" not in rel


@given(st.text(max_size=300), st.sampled_from([".md", " (0123abcd).md", " (tasks 6a1f03).md"]))
def test_any_title_is_one_file_name_that_keeps_its_ending(title, ending):
    from mindgraph.adapters.base import safe_file_name
    from mindgraph.filenames import is_windows_device_name

    name = safe_file_name(title, ending)
    assert "/" not in name and "\\" not in name and name.endswith(ending)
    assert len(name.encode("utf-8")) <= 255 and not name.startswith((".", " "))
    assert not any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in name)
    assert not is_windows_device_name(name) and safe_relative_path(name) == name
