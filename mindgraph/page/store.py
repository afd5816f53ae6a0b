"""Page texts kept on disk, read when asked for: what lets the page cache hold 100,000 pages
without holding their text.

A page's body and its sections (with their text) are most of what a parsed page weighs, and
a query reads them for the few pages it answers with. The page cache's state file keeps them
after its pickle, one marshal blob per page (``encode_texts``); ``read_state_with_texts``
opens that part of the file (``PageTexts``: a blob is read with ``pread`` when asked for, so
what was read stays in the kernel's page cache, not in the process), and a ``StoredPage`` is a ``Page`` whose ``body`` and ``sections`` are decoded from
its blob on each access (the last 2048 decodes are kept, so one query's repeated reads
decode once). Everything else of the page (title, aliases, tags, links, frontmatter, hashes)
stays in memory: listing, resolving links and ranking never touch the file.

The file holds what was parsed, not the wiki file: a page changed on disk is read again by
the cache's refresh (its stat, then its hash) exactly as before, and until then the blob is
the text of the version the cache holds. The file is replaced atomically and never written in
place, so an open file stays the same while another process (or this one) saves a new one.

Each blob's place is (offset, length, crc32): a blob cut short (the file truncated in place)
or changed (the same size, other bytes) is refused when read, and the page's texts are parsed
again from its wiki file, the source of truth (``PageTexts.repair``; the cache then saves a
whole file at its next refresh). A save copies a blob it holds verbatim, its checksum with it,
and one it cannot read at all as zeros its checksum refuses, so damage is never made whole
by a save: it is found and repaired when the page is read.

Layout: the ``statefile`` header line, the pickle's length (8 bytes, little-endian), the
pickle, then the blobs. A file without that layout (an older page cache: a bare pickle after
the header, format 1) is refused by the header's format before anything is read.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import marshal
import os
import pickle
import struct
import sys
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable

from ..fsutil import atomic_write_bytes
from ..statefile import MAGIC, header
from .model import Page, Section

_LENGTH = struct.Struct("<Q")
_DECODED = 2048         # blobs kept decoded: a query reads a few dozen pages; a small vault fits
_PAGE_FIELDS = tuple(f.name for f in dataclasses.fields(Page))
_STORED = ("body", "sections")
# the fields kept in memory, in the order a record holds them
RESIDENT_FIELDS = tuple(name for name in _PAGE_FIELDS if name not in _STORED)


class PageTextDamaged(OSError):
    """A page's blob in the page cache's file is cut short or not what was written."""


def holds_own_blob(page: Page) -> bool:
    """Whether ``page`` reads its texts from a blob (not repaired, not set in memory)."""
    values = page.__dict__
    return isinstance(page, StoredPage) and "_texts" in values and "body" not in values


def encode_texts(page: Page) -> bytes:
    """The blob of ``page``'s body and sections (a StoredPage's own blob is copied as is,
    unchecked: its place keeps its checksum)."""
    if holds_own_blob(page):
        return page.__dict__["_texts"].raw(page.__dict__["_at"], check=False)
    return marshal.dumps((page.body, tuple(
        (s.id, s.heading, s.level, s.path, s.text, s.start_line, s.end_line)
        for s in page.sections)))


class PageTexts:
    """The blobs of one page cache file, read with ``os.pread`` from a descriptor kept open
    (the file it names may be replaced: this one stays readable). Read, not mapped: what is
    read sits in the kernel's page cache, not in this process's resident memory."""

    def __init__(self, path: Path, start: int):
        self._file = open(path, "rb")     # noqa: SIM115 - closed with this object
        self._start = start
        # the page of a path parsed again from the wiki (set by the cache), and whether a
        # blob needed it since this file was written
        self.repair: Callable[[str], Page | None] | None = None
        self.damaged = False

    def raw(self, at: tuple[int, ...], check: bool = True) -> bytes:
        """The blob at (offset, length, crc32) as bytes; ``check`` False: as they are on
        disk, a part the file no longer has as zeros."""
        data = os.pread(self._file.fileno(), at[1], self._start + at[0])
        if not check:
            return data + bytes(at[1] - len(data))
        if len(data) != at[1] or (len(at) > 2 and zlib.crc32(data) != at[2]):
            raise PageTextDamaged(f"{self._file.name}: a page's text is cut short or "
                                  f"changed (the state file was truncated or written over)")
        return data

    def read(self, at: tuple[int, int]) -> tuple[str, tuple[Section, ...]]:
        """The body and sections of the blob at (offset, length)."""
        return _decode(self, at)


def forget_decoded() -> None:
    """Drop the decoded blobs kept (after a save: they would keep the old file open)."""
    _decode.cache_clear()


@functools.lru_cache(maxsize=_DECODED)
def _decode(texts: PageTexts, at: tuple[int, int]) -> tuple[str, tuple[Section, ...]]:
    body, sections = marshal.loads(texts.raw(at))
    return body, tuple(Section(*s) for s in sections)


class _Stored:
    """A field of a StoredPage: its own value once set, else decoded from the page's blob."""

    def __init__(self, index: int):
        self.index = index

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, page: Any, owner: type | None = None) -> Any:
        if page is None:
            return self
        values = page.__dict__
        if self.name in values:
            return values[self.name]
        texts = values["_texts"]
        try:
            return texts.read(values["_at"])[self.index]
        except PageTextDamaged:
            parsed = texts.repair(values["path"]) if texts.repair else None
            if parsed is None:
                raise
            texts.damaged = True      # the cache writes a whole file at its next refresh
            values["body"], values["sections"] = parsed.body, parsed.sections
            return values[self.name]

    def __set__(self, page: Any, value: Any) -> None:
        page.__dict__[self.name] = value


class StoredPage(Page):
    """A page whose body and sections are read from the page cache's file when asked for.

    Equal to the ``Page`` with the same fields; pickles and copies make a plain ``Page`` (the
    mapping does not travel), ``dataclasses.replace`` one that holds its texts itself."""

    body = _Stored(0)            # type: ignore[assignment]
    sections = _Stored(1)        # type: ignore[assignment]

    @classmethod
    def of(cls, resident: tuple, texts: PageTexts, at: tuple[int, int]) -> "StoredPage":
        """The page with ``resident`` fields (in RESIDENT_FIELDS order) and its blob at ``at``."""
        page = object.__new__(cls)
        values = page.__dict__
        values.update(zip(RESIDENT_FIELDS, resident))
        values["_texts"] = texts
        values["_at"] = at
        return page

    def rehome(self, texts: PageTexts, at: tuple[int, int]) -> None:
        """Read the blob from now on from ``texts`` at ``at`` (a newer file with the same
        text), dropping any value set in memory."""
        values = self.__dict__
        for name in _STORED:
            values.pop(name, None)
        values["_texts"] = texts
        values["_at"] = at

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Page):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _COMPARED)

    __hash__ = Page.__hash__

    def __reduce__(self) -> tuple:
        return _plain_page, (tuple(getattr(self, f) for f in _PAGE_FIELDS),)


_COMPARED = tuple(f.name for f in dataclasses.fields(Page) if f.compare)


def _plain_page(values: tuple) -> Page:
    return Page(**dict(zip(_PAGE_FIELDS, values)))


def resident_fields(page: Page) -> tuple:
    """The fields of ``page`` kept in memory, in RESIDENT_FIELDS order."""
    values = page.__dict__ if isinstance(page, StoredPage) else None
    if values is not None:
        return tuple(values[name] for name in RESIDENT_FIELDS)
    return tuple(getattr(page, name) for name in RESIDENT_FIELDS)


def interned(resident: tuple) -> tuple:
    """``resident`` (RESIDENT_FIELDS order) with its repeated strings shared: tags, link
    targets and sections (a page's name is linked from many pages, each link parsed as a
    string of its own), frontmatter keys and short values. The links are changed in place:
    the same values, one copy of each."""
    values = dict(zip(RESIDENT_FIELDS, resident))
    values["path"] = sys.intern(values["path"])
    values["tags"] = tuple(sys.intern(t) for t in values["tags"])
    for link in values["links"]:
        fields = link.__dict__
        fields["target"] = sys.intern(fields["target"])
        fields["section_id"] = sys.intern(fields["section_id"])
    values["frontmatter"] = _interned_value(values["frontmatter"])
    return tuple(values.values())


def _interned_value(value: Any) -> Any:
    """A frontmatter value with its keys and short strings interned (the same value)."""
    if isinstance(value, str):
        return sys.intern(value) if len(value) <= 64 else value
    if isinstance(value, dict):
        return {sys.intern(k) if isinstance(k, str) else k: _interned_value(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_interned_value(v) for v in value]
    return value


def write_state_with_texts(path: Path, kind: str, format_version: str | int,
                           state: dict[str, Any], blobs: Iterable[bytes]) -> PageTexts:
    """Atomically replace ``path`` with the header, ``state`` pickled and ``blobs`` after it
    (``state["texts_length"]``: their total length; the state says where each starts,
    counting from the first), and open the new file's blobs."""
    line = MAGIC + json.dumps(header(kind, format_version), sort_keys=True).encode() + b"\n"
    body = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    mapped: list[PageTexts] = []
    atomic_write_bytes(path, itertools.chain([line, _LENGTH.pack(len(body)), body], blobs),
                       before_replace=lambda written: mapped.append(
                           PageTexts(written, len(line) + _LENGTH.size + len(body))))
    return mapped[0]


def read_state_with_texts(path: Path, kind: str, format_version: str | int
                          ) -> tuple[dict[str, Any], PageTexts] | None:
    """The state and the opened blobs ``write_state_with_texts`` wrote with this kind and
    format by this mindgraph, or None (absent, another format or version, damaged)."""
    try:
        with open(path, "rb") as handle:
            line = handle.readline()
            if not line.startswith(MAGIC) or \
                    json.loads(line[len(MAGIC):]) != header(kind, format_version):
                return None
            length = _LENGTH.unpack(handle.read(_LENGTH.size))[0]
            body = handle.read(length)
            if len(body) != length:
                return None
            state = pickle.loads(body)
            start = handle.tell()
            end = handle.seek(0, 2)
        if not isinstance(state, dict) or state.get("texts_length") != end - start:
            return None
        return state, PageTexts(path, start)
    except Exception:       # noqa: BLE001 - any damage to derived data means "rebuild it"
        return None
