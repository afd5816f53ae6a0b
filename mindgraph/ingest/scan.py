"""Walk raw/ read-only and read its notes, saying why a file is skipped or cannot be compiled.

Notes are ``.md``, ``.markdown`` and ``.txt`` files. Hidden files and folders (``.obsidian``,
``.git``, ``.trash``) and ``node_modules`` are ignored silently; other files get a skip reason.
Symlinks are never followed (so neither a link out of raw/ nor a link loop is read), and files
are opened with O_NOFOLLOW so a file swapped for a symlink mid-run is not followed either.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..fsutil import UnreadableFile, read_bytes
from ..page.markdown import heading_count

NOTE_SUFFIXES = (".md", ".markdown", ".txt")
IGNORED_DIRS = frozenset({"node_modules", "__pycache__"})
_BINARY_SNIFF = 8192


@dataclass(frozen=True)
class RawFile:
    """One entry of raw/: a note to consider, or something skipped (with the reason)."""

    path: str                 # raw-relative POSIX path
    is_note: bool
    reason: str = ""          # why it is skipped (is_note False)
    size: int = 0
    mtime: float = 0.0
    held: bool = False        # a note left out by a scan limit: its page and record stay
    mtime_ns: int = 0         # exact mtime and ctime: with the size and the inode, they tell
    ctime_ns: int = 0         # an unchanged note without reading it (notes.py)
    inode: int = 0


class NoteReadError(Exception):
    """A note that cannot be compiled as text; the message names the file and the fix."""


def has_notes(raw_dir: Path) -> bool:
    """True as soon as one note is found under ``raw_dir`` where a scan would look (hidden
    and ignored folders left out): cheap for an empty folder and for a full one."""
    for folder, subfolders, names in os.walk(raw_dir):
        subfolders[:] = [d for d in subfolders
                         if not d.startswith(".") and d not in IGNORED_DIRS]
        if any(n.lower().endswith(NOTE_SUFFIXES) and not n.startswith(".") for n in names):
            return True
    return False


def scan_raw(raw_dir: Path, exclude: Iterable[Path] = ()) -> list[RawFile]:
    """Every file under ``raw_dir`` in path order (folders in ``exclude`` are left out)."""
    root = Path(raw_dir)
    excluded = {Path(p).resolve() for p in exclude}
    found: list[RawFile] = []
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            found.append(RawFile(prefix.rstrip("/") or ".", False,
                                 f"cannot list folder ({exc.strerror or exc}); check its "
                                 f"permissions."))
            continue
        subfolders: list[os.DirEntry] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = prefix + entry.name
            found_entry = _classify(entry, rel, excluded, subfolders)
            if found_entry is not None:
                found.append(found_entry)
        # Pushed in reverse so that folders are walked in name order.
        for sub in reversed(subfolders):
            stack.append((Path(sub.path), prefix + sub.name + "/"))
    found.sort(key=lambda f: f.path)
    return found


NOT_A_NOTE = "not a note ("     # an attachment's skip reason starts so (ingest_cmd counts them)


def _classify(entry: os.DirEntry, rel: str, excluded: set[Path],
              subfolders: list[os.DirEntry]) -> RawFile | None:
    try:
        if entry.is_symlink():
            return RawFile(rel, False, _symlink_reason(Path(entry.path)))
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in IGNORED_DIRS and Path(entry.path).resolve() not in excluded:
                subfolders.append(entry)
            return None
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:
        return RawFile(rel, False, f"cannot read ({exc.strerror or exc}); check permissions.")
    if not stat_mod.S_ISREG(info.st_mode):
        return RawFile(rel, False, "not a regular file (device, socket or pipe); skipped.")
    if not entry.name.lower().endswith(NOTE_SUFFIXES):
        suffix = Path(entry.name).suffix or "(no extension)"
        return RawFile(rel, False, f"{NOT_A_NOTE}{suffix}): only .md, .markdown and .txt files "
                                   f"are compiled; attachments stay in raw/.",
                       info.st_size, info.st_mtime)
    return RawFile(rel, True, "", info.st_size, info.st_mtime, mtime_ns=info.st_mtime_ns,
                   ctime_ns=info.st_ctime_ns, inode=info.st_ino)


def _symlink_reason(path: Path) -> str:
    try:
        path.resolve(strict=True)
    except RuntimeError:
        return "symlink loop; not followed. Remove the symlink from raw/."
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop; not followed. Remove the symlink from raw/."
        return "broken symlink; not followed. Remove it or copy the file into raw/."
    return ("symlink; not followed (ingest reads only real files inside raw/, so nothing "
            "outside it). Copy the file into raw/ instead of linking it.")


def within_limits(files: list[RawFile], max_files: int, max_total_bytes: int,
                  max_note_bytes: int) -> list[RawFile]:
    """``files`` with the notes past ``limits.max_files`` or ``limits.max_total_bytes`` (in
    path order) turned into skipped entries that say which limit; they are ``held``: not
    read this run, and their pages are kept (a limit never deletes anything)."""
    out: list[RawFile] = []
    count = total = 0
    for file in files:
        if not file.is_note:
            out.append(file)
            continue
        count += 1
        size = file.size if file.size <= max_note_bytes else 0    # refused unread anyway
        total += size
        if count > max_files:
            why = (f"over limits.max_files ({max_files:,} notes per scan); not read this run, "
                   f"its page is kept. Raise limits.max_files in mindgraph.yml or move notes "
                   f"out of raw/.")
        elif total > max_total_bytes:
            why = (f"over limits.max_total_bytes ({max_total_bytes:,} bytes of notes per "
                   f"scan; {total - size:,} read before it); not read this run, its page "
                   f"is kept. Raise limits.max_total_bytes in mindgraph.yml.")
            total -= size
        else:
            out.append(file)
            continue
        out.append(RawFile(file.path, False, why, file.size, file.mtime, held=True))
    return out


def read_note(raw_dir: Path, file: RawFile, max_bytes: int) -> bytes:
    """The bytes of a note, refusing symlinks, non-regular files and files over ``max_bytes``."""
    if file.size > max_bytes:
        raise NoteReadError(_too_large(file.path, file.size, max_bytes))
    try:
        return read_bytes(Path(raw_dir) / file.path, max_bytes=max_bytes,
                          follow_symlinks=False)
    except UnreadableFile as exc:
        if exc.kind == "too-large":
            raise NoteReadError(_too_large(file.path, _size(raw_dir, file), max_bytes)) from exc
        if exc.kind == "symlink":
            raise NoteReadError(f"{file.path}: became a symlink; not followed.") from exc
        raise NoteReadError(f"{file.path}: {exc.strerror}") from exc
    except OSError as exc:
        raise NoteReadError(f"{file.path}: cannot read ({exc.strerror or exc}); check its "
                            f"permissions.") from exc


def _size(raw_dir: Path, file: RawFile) -> int:
    try:
        return os.stat(Path(raw_dir) / file.path, follow_symlinks=False).st_size
    except OSError:
        return file.size


def decode_note(path: str, data: bytes) -> str:
    """UTF-8 text with LF line endings; NoteReadError names the line of a bad byte."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) and len(data) > 2 and _is_utf16(data):
        raise NoteReadError(f"{path}:1: UTF-16 text (it starts with a UTF-16 byte-order mark). "
                            f"Re-save the file as UTF-8.")
    nul = data.find(b"\x00", 0, _BINARY_SNIFF)
    if nul >= 0:
        line = data[:nul].count(b"\n") + 1
        raise NoteReadError(f"{path}:{line}: looks like a binary file (NUL byte), not a text "
                            f"note. Remove it from raw/ or give it a non-note extension.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise NoteReadError(f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at "
                            f"offset {exc.start}). Re-save the file as UTF-8.") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _is_utf16(data: bytes) -> bool:
    try:
        data.decode("utf-16")
    except UnicodeDecodeError:
        return False
    return True


def too_many_headings(path: str, text: str, limit: int) -> str | None:
    """Why the note at ``path`` is not compiled when it has more than ``limit`` headings
    (``compile.max_note_headings``), else None. Each heading costs every pass of a compile
    (parse, normalise, outline, salient terms, its section) ~0.15 ms: a 1.9 MB note of
    90,000 headings took 13× the same bytes of prose, and five uploaded at once held the
    write lane 46 s (bench/bench_heading_uploads.py)."""
    count = heading_count(text, past=limit)
    if count <= limit:
        return None
    return (f"{path}: {count:,} headings, more than compile.max_note_headings ({limit:,}); "
            f"the note was not compiled (never truncated). Split it into smaller notes or "
            f"raise compile.max_note_headings in mindgraph.yml.")


def _too_large(path: str, size: int, limit: int) -> str:
    return (f"{path}: {size} bytes is over compile.max_note_bytes ({limit}); the note was not "
            f"compiled (never truncated). Split it into smaller notes or raise "
            f"compile.max_note_bytes in mindgraph.yml.")
