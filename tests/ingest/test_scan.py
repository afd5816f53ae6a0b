"""Scanning raw/: what is a note, what is skipped and why; reading refuses bad files."""

import os

import pytest

from mindgraph.ingest.scan import NoteReadError, RawFile, decode_note, read_note, scan_raw


def test_scan_classifies_notes_and_gives_skip_reasons(workspace, write_raw):
    write_raw("a.md", "x")
    write_raw("sub/b.markdown", "x")
    write_raw("sub/deeper/c.txt", "x")
    write_raw("img/pic.png", b"\x89PNG")
    write_raw(".obsidian/app.json", "{}")
    write_raw("node_modules/x.md", "x")
    write_raw(".hidden.md", "x")
    found = {f.path: f for f in scan_raw(workspace / "raw")}
    assert sorted(p for p, f in found.items() if f.is_note) == ["a.md", "sub/b.markdown",
                                                               "sub/deeper/c.txt"]
    assert "not a note (.png)" in found["img/pic.png"].reason
    assert not any(p.startswith((".obsidian", "node_modules", ".hidden")) for p in found)


def test_symlinks_are_never_followed(workspace, write_raw, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.md").write_text("secret")
    raw = workspace / "raw"
    write_raw("real.md", "x")
    os.symlink(outside / "secret.md", raw / "link.md")
    os.symlink(outside, raw / "linked-folder")
    os.symlink(raw / "loop-b", raw / "loop-a")
    os.symlink(raw / "loop-a", raw / "loop-b")
    os.symlink(raw / "missing.md", raw / "dangling.md")
    found = {f.path: f for f in scan_raw(raw)}
    assert [p for p, f in found.items() if f.is_note] == ["real.md"]
    assert "symlink; not followed" in found["link.md"].reason
    assert "symlink; not followed" in found["linked-folder"].reason
    assert "symlink loop" in found["loop-a"].reason
    assert "broken symlink" in found["dangling.md"].reason
    assert not any(p.startswith("linked-folder/") for p in found)


def test_pipes_and_excluded_folders_are_not_read(workspace, write_raw):
    raw = workspace / "raw"
    os.mkfifo(raw / "pipe.md")
    write_raw("wiki/page.md", "x")
    found = {f.path: f for f in scan_raw(raw, exclude=[raw / "wiki"])}
    assert "not a regular file" in found["pipe.md"].reason
    assert "wiki/page.md" not in found


def test_read_note_refuses_files_over_the_limit_without_reading(workspace, write_raw):
    write_raw("big.md", "x" * 100)
    file = RawFile("big.md", True, size=100)
    with pytest.raises(NoteReadError, match=r"big.md: 100 bytes is over "
                                            r"compile.max_note_bytes \(50\).*raise"):
        read_note(workspace / "raw", file, max_bytes=50)
    assert read_note(workspace / "raw", file, max_bytes=100) == b"x" * 100


def test_decode_note_names_the_line_of_bad_bytes():
    with pytest.raises(NoteReadError, match=r"n.md:3: not valid UTF-8 \(byte 0xff.*UTF-8"):
        decode_note("n.md", b"one\ntwo\nthr\xffee\n")
    with pytest.raises(NoteReadError, match=r"n.md:2: looks like a binary file"):
        decode_note("n.md", b"one\n\x00\x01\x02")
    for encoding in ("utf-16", "utf-16-be"):
        bom = "\ufeff" if encoding == "utf-16-be" else ""
        with pytest.raises(NoteReadError, match=r"n.md:1: UTF-16 text.*Re-save the file as UTF-8"):
            decode_note("n.md", (bom + "# Note\n").encode(encoding))
    assert decode_note("n.md", "\ufeffa\r\nb\rc".encode()) == "a\nb\nc"
