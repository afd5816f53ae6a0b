"""What `pull` may overwrite in raw/: only a file that still holds the bytes pull last wrote
there. Anything else at a document's path (a note a person wrote, a pulled note someone
edited since, another adapter's file) is kept as it is, and the document is filed beside it
under a name of its own, ``<name> (<adapter> <6 hex of its id>).md``, the same at every pull
so a second pull updates that copy instead of making another.

The hashes are the pull manifest's (mirror.py): raw path → SHA-256 of what pull wrote there,
one manifest per adapter. A file whose bytes are already the document's is taken as pull's
(nothing in it would be lost), so a workspace pulled before the manifest held every adapter
keeps its paths. When the path is free again (the person's file deleted or renamed), the
document goes back to it and the copy beside it is removed if it is still pull's.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..filenames import collision_key
from .base import safe_name_part
from .mirror import file_digest


@dataclass(frozen=True)
class Placement:
    """Where one document goes: ``rel`` (relative to the adapter's folder), the path it
    belongs at when a file pull may not overwrite holds it (``instead_of``), and why; ``rel``
    is "" when the copy's name is held too (the document is not filed)."""

    rel: str
    instead_of: str = ""
    reason: str = ""


def digest(data: bytes) -> str:
    """The SHA-256 the manifest keeps of ``data``."""
    return hashlib.sha256(data).hexdigest()


def place(folder: Path, raw_prefix: str, rel: str, data: bytes, owned: Mapping[str, str],
          adapter: str, key: str, strangers: Mapping[str, str] | None = None) -> Placement:
    """Where the document of ``rel`` and ``data`` may be written in ``folder`` (raw/<target>;
    ``raw_prefix`` is that folder's raw path, "" or "target/"): its own path while that is
    free or pull's, else its copy's (``beside``), else nowhere. ``strangers`` (``strangers``
    of the folder): while ``rel`` does not exist, a file pull did not write whose name is
    ``rel``'s as macOS and Windows compare names holds it too."""
    wanted = digest(data)
    twin = (strangers or {}).get(collision_key(rel), rel)
    if twin != rel and not os.path.lexists(folder / rel):
        rel_held, why = twin, (f"raw/{raw_prefix}{twin} holds a file pull did not write, whose "
                               f"name is this document's on macOS and Windows (they differ "
                               f"only in case or Unicode folding)")
    elif may_overwrite(folder / rel, raw_prefix + rel, wanted, owned):
        return Placement(rel)
    else:
        rel_held, why = rel, (f"raw/{raw_prefix}{rel} holds a file pull did not write there "
                              f"(or one edited since pull wrote it)")
    copy = beside(rel, adapter, key)
    if may_overwrite(folder / copy, raw_prefix + copy, wanted, owned):
        return Placement(copy, rel_held, (
            f"{why}: kept as it is, and this document filed beside it as "
            f"raw/{raw_prefix}{copy}. Merge the two by hand if they should be one; once "
            f"raw/{raw_prefix}{rel_held} is deleted or renamed, pull files the document at "
            f"raw/{raw_prefix}{rel} again."))
    return Placement("", rel, (
        f"raw/{raw_prefix}{rel} and raw/{raw_prefix}{copy} both hold files pull did not write "
        f"there (or edited since): kept both, and this document not filed. Rename or delete "
        f"one of them."))


def strangers(folder: Path, raw_prefix: str, owned: Mapping[str, str]) -> dict[str, str]:
    """The files under ``folder`` pull did not write (not in ``owned``), by
    ``collision_key`` of their path: what a case-insensitive file system would open for a
    document whose name differs from theirs only in case or Unicode folding. Hidden folders
    and files are left out (no document is filed under a leading dot)."""
    found: dict[str, str] = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(root).relative_to(folder).as_posix()
        for name in files:
            rel = name if base == "." else f"{base}/{name}"
            if not name.startswith(".") and raw_prefix + rel not in owned:
                found.setdefault(collision_key(rel), rel)
    return found


def beside(rel: str, adapter: str, key: str) -> str:
    """The name of a document's copy beside the file it may not overwrite: the same folder,
    ``<stem> (<adapter> <6 hex of key>)<extension>``, within 255 bytes."""
    folder, name = posixpath.split(rel)
    stem, ext = posixpath.splitext(name)
    if len(ext) > 17:
        stem, ext = name, ""
    tag = safe_name_part(adapter)[:40] or "pull"
    ending = f" ({tag} {digest(key.encode('utf-8'))[:6]}){ext}"
    return posixpath.join(folder, (safe_name_part(stem, ending) or "copy") + ending)


def left_copy(folder: Path, raw_prefix: str, rel: str, owned: Mapping[str, str],
              adapter: str, key: str) -> tuple[str, bool]:
    """The copy pull wrote beside ``rel`` for this document (once it is back at ``rel``) and
    whether it may go (nobody edited it since); ("", False) when there is none."""
    copy = beside(rel, adapter, key)
    held = owned.get(raw_prefix + copy)
    if held is None:
        return "", False
    return copy, file_digest(folder / copy) == held


def may_overwrite(path: Path, raw_rel: str, wanted: str, owned: Mapping[str, str]) -> bool:
    """Free, holding the document's own bytes already (``wanted``, its SHA-256), or holding
    what pull last wrote. A folder counts as free: writing there fails and pull says why.
    Pull asks again just before it renames its written file over ``path``."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return True
    except OSError:
        return True                       # e.g. a file where a folder should be: said later
    if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return True                       # refused where it is written, with the reason
    found = file_digest(path)
    return found is not None and found in (wanted, owned.get(raw_rel))


__all__ = ["Placement", "beside", "digest", "left_copy", "may_overwrite", "place",
           "strangers"]
