"""The data-source contracts: what `mindgraph pull` files under raw/, and what a note app offers.

A data source is any object with a ``target`` (folder under raw/) and ``fetch()`` returning
RawDocuments (the filesystem adapter, custom dotted-path ones). A note app (``NoteAppAdapter``)
offers more: its projects (id, name, kind tasks/notes), the items of a project, one item,
create, update and a deep link for an item (``url_for``); optionally its own search
(``search_by_query``) and one bulk call for every item (``list_all``). Its items become raw
notes through ``fetch()`` like any other document (adapters/notes.py). File names come from
outside (a note app's titles, another folder's paths), so ``safe_relative_path`` turns any
name into a relative path that cannot leave its folder.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Protocol, runtime_checkable

from ..errors import AdapterError, NotFoundError
from ..filenames import MAX_NAME_BYTES, cut_utf8, drop_invisible, is_windows_device_name

# Characters that are unsafe or unportable in file names (Windows-reserved ones included,
# so a vault pulled on Linux still syncs to a Windows machine), C0 and C1 controls, the line
# and paragraph separators, and the bidirectional overrides that make a name read backwards.
_UNSAFE_CHARS_RE = re.compile('[\x00-\x1f\x7f-\x9f<>:"|?*\u2028\u2029\u202a-\u202e'
                              '\u2066-\u2069]')
_SEPARATORS_RE = re.compile(r"[/\\]")


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


class ItemNotFound(AdapterError, NotFoundError):
    """The app has no item (or project) of that id: deleted there, or never existed."""


class ListingTooLarge(AdapterError):
    """The app's answers to one listing passed the bytes a pull may read of it
    (``ListingBudget``): the listing was read no further."""

    def __init__(self, read: int, max_bytes: int, app: str = "the note app"):
        super().__init__(f"{app}: the app's listing passed limits.max_pull_bytes "
                         f"({max_bytes:,}) bytes of answers ({read:,} read); read no further. "
                         f"Raise limits.max_pull_bytes in mindgraph.yml or narrow what the "
                         f"adapter lists.")
        self.read = read
        self.max_bytes = max_bytes


class ListingCut(AdapterError):
    """One listing passed the notes a pull may take of it (``limits.max_pull_notes``): it was
    read no further. ``items`` are those read (more than ``max_notes``): a pull files the
    ``max_notes`` most recently modified of them and says the listing was cut, and that at
    least the rest were left out."""

    def __init__(self, max_notes: int, items: list[Any], app: str = "the note app"):
        super().__init__(f"{app}: the app's listing passed limits.max_pull_notes "
                         f"({max_notes:,}) notes; read no further.")
        self.max_notes = max_notes
        self.items = items


class ListingBudget:
    """The bytes of answers one listing may read, counted as they arrive (one listing, one
    thread); ``spend`` raises ListingTooLarge (naming ``app``) as soon as they pass
    ``max_bytes``."""

    def __init__(self, max_bytes: int, app: str = "the note app"):
        self.max_bytes = max_bytes
        self.app = app
        self.read = 0

    def spend(self, size: int) -> None:
        """Count ``size`` more bytes read; ListingTooLarge once past the budget."""
        self.read += size
        if self.read > self.max_bytes:
            raise ListingTooLarge(self.read, self.max_bytes, self.app)


@runtime_checkable
class ListingLimits(Protocol):
    """Optional for any adapter: the loader (adapters/loader.py) calls ``limit_listing``
    right after building it, before ``fetch`` or any other listing, with the signature

        def limit_listing(self, max_bytes: int | None, max_notes: int | None = None) -> None

    ``max_bytes`` (``limits.max_pull_bytes``; None: no limit): read no more than that of the
    app's answers for one listing (count them with ``ListingBudget``, which raises
    ListingTooLarge). ``max_notes`` (`pull`'s ``limits.max_pull_notes``; None outside pull):
    stop listing once more items than that are held, and let ``fetch`` return those read, most
    recently modified first where the app's API lists in that order, setting
    ``listing_cut = True`` (pull then says the listing was cut, and that more were left out).
    The older one-argument form ``limit_listing(max_bytes)`` is still called (pull cuts the
    notes after the listing then); any other signature is refused when the adapter loads."""

    def limit_listing(self, max_bytes: int | None, max_notes: int | None = None) -> None:
        """Bound what one listing reads: bytes of answers, and items held."""
        ...


@dataclass(frozen=True)
class Project:
    """A list of a note app: its id, name, and whether it holds tasks or notes."""

    id: str
    name: str
    kind: Literal["tasks", "notes"] = "tasks"


@dataclass(frozen=True)
class Item:
    """One task or note of an app, as the app holds it (times are timezone-aware, UTC)."""

    id: str
    title: str
    content: str = ""
    project: str = ""                  # the project's id
    project_name: str = ""
    tags: tuple[str, ...] = ()
    due: dt.datetime | None = None
    modified: dt.datetime | None = None
    completed: dt.datetime | None = None   # None while open

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (times as ISO 8601)."""
        return {"id": self.id, "title": self.title, "content": self.content,
                "project": self.project, "project_name": self.project_name,
                "tags": list(self.tags), "due": _iso(self.due), "modified": _iso(self.modified),
                "completed": _iso(self.completed)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Item":
        """The inverse of ``to_json``."""
        return cls(str(data["id"]), str(data.get("title", "")), str(data.get("content", "")),
                   str(data.get("project", "")), str(data.get("project_name", "")),
                   tuple(str(t) for t in data.get("tags") or ()), _time(data.get("due")),
                   _time(data.get("modified")), _time(data.get("completed")))


@runtime_checkable
class NoteAppAdapter(Protocol):
    """A note or task app: what `pull`, the corpus cache, `create` and `update` use.

    Optional, found with ``getattr``: ``list_all() -> list[Item]`` (every item in as few
    calls as the app allows), ``search_by_query(query, limit) -> list[tuple[Item, float]]``
    (the app's own search, best first: one more retriever in hybrid search) and
    ``limit_listing(max_bytes, max_notes=None) -> None`` (``ListingLimits``: how far one
    listing may read, given right after the adapter is built).
    """

    @property
    def target(self) -> str:
        """Folder under raw/ that receives the items as notes ("" for raw/ itself)."""
        ...

    def list_projects(self) -> list[Project]:
        """Every project (list) of the account."""
        ...

    def list_items(self, project_id: str) -> list[Item]:
        """The items of one project."""
        ...

    def get(self, item_id: str) -> Item:
        """One item, fresh from the app; ItemNotFound when it is gone."""
        ...

    def create(self, title: str, content: str = "", project: str | None = None) -> Item:
        """A new item in ``project`` (an id or name; None: the app's default list)."""
        ...

    def update(self, item_id: str, *, title: str | None = None,
               content: str | None = None) -> Item:
        """Change an item's title or content; ItemNotFound when it is gone."""
        ...

    def url_for(self, item: Item) -> str:
        """The deep link that opens the item in the app."""
        ...


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _time(value: Any) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value) if isinstance(value, str) and value else None


def safe_relative_path(filename: str) -> str:
    """Turn an untrusted file name into a safe relative POSIX path (sub-folders kept).

    Backslashes count as separators; empty, ``.`` and ``..`` parts are dropped; each part is
    made safe as ``safe_name_part`` does. The result never starts with ``/`` and never
    contains ``..``: joined to a folder it stays inside that folder. Raises AdapterError when
    nothing usable is left.
    """
    text = unicodedata.normalize("NFC", str(filename)).replace("\\", "/")
    parts = [part for part in map(safe_name_part, text.split("/")) if part]
    if not parts:
        raise AdapterError(f"file name {filename!r} has no usable characters; give the "
                           f"document a file name with letters or digits.")
    return "/".join(parts)


def safe_name_part(part: str, ending: str = "") -> str:
    """One path part, safe on every system: invisible format characters go (the bidi marks,
    U+FEFF, zero-width spaces; ZWJ and ZWNJ only where they join nothing: filenames.py),
    unsafe and control characters become ``_``;
    leading dots (hidden files, which ingest ignores) and spaces, trailing dots and spaces are
    stripped; a Windows device name gets a ``_`` before it; the part with ``ending`` is at
    most MAX_NAME_BYTES of UTF-8 (cut in the part, keeping its extension, so ``ending``
    survives). "" when nothing usable is left."""
    part = _UNSAFE_CHARS_RE.sub("_", drop_invisible(unicodedata.normalize("NFC", part)))
    part = part.strip().lstrip(".").rstrip(". ")
    if not part:
        return ""
    if is_windows_device_name(part):
        part = "_" + part
    return _truncate(part, MAX_NAME_BYTES - len(ending.encode("utf-8")))


def safe_file_name(title: str, ending: str = ".md", fallback: str = "Untitled") -> str:
    """A title (a note app's, free text) as one file name ending in ``ending``: a ``/`` or
    ``\\`` in it is a ``_``, never a folder, and the name is safe as ``safe_name_part``
    makes it (``fallback`` when nothing usable is left)."""
    stem = safe_name_part(_SEPARATORS_RE.sub("_", str(title)), ending)
    return (stem or fallback) + ending


def safe_target(target: str) -> str:
    """Sanitise an adapter's target folder; "" or "." means raw/ itself."""
    if not str(target).strip().strip("/.\\"):
        return ""
    return safe_relative_path(target)


def _truncate(part: str, budget: int = MAX_NAME_BYTES) -> str:
    """Cut a path part to ``budget`` bytes of UTF-8, keeping its extension."""
    if len(part.encode("utf-8")) <= budget:
        return part
    stem, dot, ext = part.rpartition(".")
    if not dot or not stem or len(ext) > 16:
        stem, ext = part, ""
    suffix = f".{ext}" if ext else ""
    return cut_utf8(stem, budget - len(suffix.encode("utf-8"))).rstrip(". ") + suffix
