"""The data-source contract: an adapter fetches documents that `mindgraph pull` files under raw/.

An adapter is any object with a ``target`` (folder under raw/) and ``fetch()`` returning
RawDocuments. File names come from outside (a note app's titles, another folder's paths), so
``safe_relative_path`` turns any name into a relative path that cannot leave its folder.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable

from ..errors import AdapterError

# Characters that are unsafe or unportable in file names (Windows-reserved ones included,
# so a vault pulled on Linux still syncs to a Windows machine).
_UNSAFE_CHARS_RE = re.compile(r'[\x00-\x1f\x7f<>:"|?*]')
_WINDOWS_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
                               *(f"lpt{i}" for i in range(1, 10))})
MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class RawDocument:
    """One document from a source: its content, a relative file name, and free metadata.

    ``content`` is text (written as UTF-8) or bytes (written as they are). ``metadata`` may
    carry ``mtime`` (POSIX seconds): `pull` gives the written file that modification time, so
    the dates compiled into the wiki come from the source, not from the moment of the pull.
    """

    content: str | bytes
    filename: str
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def data(self) -> bytes:
        """The content as bytes."""
        return self.content.encode("utf-8") if isinstance(self.content, str) else self.content


@runtime_checkable
class DataSourceAdapter(Protocol):
    """A source of documents; `mindgraph pull` writes what it fetches into raw/<target>/."""

    @property
    def target(self) -> str:
        """Folder under raw/ that receives this adapter's documents ("" for raw/ itself)."""
        ...

    def fetch(self) -> list[RawDocument]:
        """Return every document the source currently holds."""
        ...


def safe_relative_path(filename: str) -> str:
    """Turn an untrusted file name into a safe relative POSIX path (sub-folders kept).

    Backslashes count as separators; empty, ``.`` and ``..`` parts are dropped; leading dots
    (hidden files, which ingest ignores) and trailing dots and spaces are stripped; unsafe
    characters become ``_``; Windows device names get a ``_`` prefix; each part is cut to 255
    bytes. The result never starts with ``/`` and never contains ``..``: joined to a folder it
    stays inside that folder. Raises AdapterError when nothing usable is left.
    """
    text = unicodedata.normalize("NFC", str(filename)).replace("\\", "/")
    parts = []
    for part in text.split("/"):
        part = _UNSAFE_CHARS_RE.sub("_", part).strip().lstrip(".").rstrip(". ")
        if not part:
            continue
        stem = part.split(".", 1)[0].lower()
        if stem in _WINDOWS_RESERVED:
            part = "_" + part
        parts.append(_truncate(part))
    if not parts:
        raise AdapterError(f"file name {filename!r} has no usable characters; give the "
                           f"document a file name with letters or digits.")
    return "/".join(parts)


def safe_target(target: str) -> str:
    """Sanitise an adapter's target folder; "" or "." means raw/ itself."""
    if not str(target).strip().strip("/.\\"):
        return ""
    return safe_relative_path(target)


def _truncate(part: str) -> str:
    """Cut a path part to MAX_NAME_BYTES of UTF-8, keeping its extension."""
    if len(part.encode("utf-8")) <= MAX_NAME_BYTES:
        return part
    stem, dot, ext = part.rpartition(".")
    if not dot or len(ext) > 16:
        stem, ext = part, ""
    suffix = f".{ext}" if ext else ""
    budget = MAX_NAME_BYTES - len(suffix.encode("utf-8"))
    cut = stem.encode("utf-8")[:budget].decode("utf-8", errors="ignore")
    return cut + suffix
