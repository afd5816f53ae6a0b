"""What the documents API keeps under the state folder (``<state>/documents/``), so that it
survives restarts and recompiles:

- ``created.json``: the raw notes the API wrote (id, raw path, hash as written, who, when):
  the only raw files mindgraph may delete, and only while they are as it wrote them;
- ``overlays.json``: metadata set with PUT /documents/{id} (title, tags, type), per page,
  applied when the page is compiled (documents/overlay.py), so raw/ stays untouched;
- ``links.json``: manual typed links (from, to, kind, context), written into the source
  page's frontmatter at compile time.

Every change is a read-modify-write under an advisory file lock (two server processes of
one workspace see each other's changes) and an atomic replace (a crash leaves the old file
or the new one).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..fsutil import atomic_write_json, exclusive_lock, sha256_text

FOLDER = "documents"
_FILES = ("created", "overlays", "links")


def document_id(page_path: str) -> str:
    """The stable id of the document at ``page_path`` (16 hex digits: no path, no traversal)."""
    return sha256_text("page\n" + page_path)[:16]


def link_id(source: str, target: str, kind: str) -> str:
    """The id of the manual link source → target of ``kind`` (one link per triple)."""
    return sha256_text(f"link\n{source}\n{target}\n{kind}")[:16]


def now_iso() -> str:
    """The current UTC time, to the second, as ISO 8601."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class Created:
    """A raw note the API wrote."""

    id: str
    raw: str            # raw-relative path
    page: str           # wiki-relative path of its page
    sha256: str         # of the bytes as written: a note changed since is not ours to delete
    tenant: str
    agent: str
    scope: str
    team: str | None
    created_at: str
    via: str            # "documents" (POST /documents) or "upload"


@dataclass(frozen=True)
class Overlay:
    """Metadata set through the API; None leaves the compiled value."""

    title: str | None = None
    tags: tuple[str, ...] | None = None
    type: str | None = None

    def is_empty(self) -> bool:
        """True when it changes nothing."""
        return self.title is None and self.tags is None and self.type is None

    def to_json(self) -> dict[str, Any]:
        """Only the fields it sets."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()
                if v is not None}


@dataclass(frozen=True)
class ManualLink:
    """A typed link made through the API."""

    id: str
    source: str         # page paths
    target: str
    kind: str
    context: str
    tenant: str
    agent: str
    created_at: str = field(default="", compare=False)


class DocumentRecords:
    """The three files, read and changed under one lock."""

    def __init__(self, state_dir: Path):
        self.folder = Path(state_dir) / FOLDER
        self._lock = threading.RLock()

    # -- reading ------------------------------------------------------------------------
    def created(self) -> dict[str, Created]:
        """The API's raw notes by document id."""
        return {k: Created(**v) for k, v in self._read("created").items()}

    def overlays(self) -> dict[str, Overlay]:
        """Overlays by page path."""
        return {page: Overlay(title=v.get("title"), type=v.get("type"),
                              tags=tuple(v["tags"]) if v.get("tags") is not None else None)
                for page, v in self._read("overlays").items()}

    def links(self) -> dict[str, ManualLink]:
        """Manual links by id."""
        return {k: ManualLink(**v) for k, v in self._read("links").items()}

    # -- changing -----------------------------------------------------------------------
    def move_page(self, old: str, new: str) -> None:
        """A page moved (ingest/moves.py): its overlay and the manual links from and to it
        follow it to ``new`` (a link's id is of its ends, so a moved link gets a new one)."""
        with self.change() as data:
            moved = move_records(data["overlays"], data["links"], old, new)
            data["overlays"], data["links"] = moved

    @contextlib.contextmanager
    def change(self) -> Iterator[dict[str, dict[str, Any]]]:
        """The three files as dicts to change in place; written back when the block ends
        without an error (only the files that changed)."""
        with self._lock, self._file_lock():
            data = {name: self._read(name) for name in _FILES}
            before = {name: json.dumps(value, sort_keys=True) for name, value in data.items()}
            yield data
            for name in _FILES:
                if json.dumps(data[name], sort_keys=True) != before[name]:
                    atomic_write_json(self.folder / f"{name}.json", data[name])

    def _read(self, name: str) -> dict[str, Any]:
        path = self.folder / f"{name}.json"
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            from ..errors import ConfigError
            raise ConfigError(f"{path} cannot be read ({exc}); restore it from a backup or "
                              f"delete it (the API's {name} records are lost then).") from exc
        return value if isinstance(value, dict) else {}

    def _file_lock(self) -> contextlib.AbstractContextManager[None]:
        return exclusive_lock(self.folder / ".lock")


def move_records(overlays: dict[str, Any], links: dict[str, Any], old: str, new: str
                 ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Overlays and links (as stored) with page ``old`` named ``new``: the overlay keyed by
    it (what ``new`` set already wins), each link from or to it (a link that would repeat
    one ``new`` has is dropped; a link of the page to itself too)."""
    overlays = dict(overlays)
    if old in overlays:
        overlays[new] = {**overlays.pop(old), **overlays.get(new, {})}
    moved: dict[str, Any] = {}
    for key, link in links.items():
        if old not in (link.get("source"), link.get("target")):
            moved.setdefault(key, link)
            continue
        ends = {k: new if link.get(k) == old else link.get(k) for k in ("source", "target")}
        if ends["source"] == ends["target"]:
            continue
        fresh = link_id(ends["source"], ends["target"], str(link.get("kind")))
        if fresh not in links:
            moved[fresh] = {**link, **ends, "id": fresh}
    return overlays, moved


def as_json(record: Any) -> dict[str, Any]:
    """A record as it is stored."""
    return asdict(record)


__all__ = ["Created", "DocumentRecords", "ManualLink", "Overlay", "as_json", "document_id",
           "link_id", "move_records", "now_iso"]
