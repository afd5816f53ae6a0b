"""The attachment file an embed names, found in raw/ and safe to serve to the dashboard.

A file is served only when all of these hold: the link target is relative, and a ``..``
part in it only climbs from the linking page's folder and stays inside raw/ (Obsidian's
``![[../pics/x.png]]`` in ``sub/C.md`` is ``pics/x.png``); the file is found as the vault's
attachment resolution finds it (its path from raw/ or from the linking page's folder, else
its file name alone: dashboard/attachment_index.py; a path with ``..`` is that path or none),
seen by the caller's view; it is a regular file reached through no symlink (the view is
checked on the path as written: a link could lead into another tenant's folder, or out of
raw/); and its name is an image, pdf, audio or video type. Anything else is
"not found": the answer never says whether a file exists outside what may be served.

A hard link is served (decided, not overlooked): it is not a pointer but the file itself under
one more name, and which other names it has cannot be known — ``st_nlink > 1`` says only that
there are some, which rsnapshot or Time Machine copies, ``cp -al`` and deduplicators give every
file of a vault. Refusing those would refuse whole vaults, and ingest compiles a hard-linked
note anyway. What a symlink allows and a hard link does not: reading a file its maker could
not read (the server follows a symlink with its own rights), or one that appears later at the
pointed-to path. Linking a file needs its owner or read and write access to it on Linux
(``fs.protected_hardlinks``, on by default), so a link in raw/ serves nothing its maker could
not have copied there.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Callable

from .attachment_index import attachment_index

MEDIA_TYPES = {
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
    "bmp": "image/bmp", "svg": "image/svg+xml", "webp": "image/webp", "avif": "image/avif",
    "pdf": "application/pdf",
    "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "m4a": "audio/mp4",
    "flac": "audio/flac", "webm": "video/webm", "mp4": "video/mp4", "mov": "video/quicktime",
    "mkv": "video/x-matroska", "ogv": "video/ogg",
}


def media_type(name: str) -> str | None:
    """The content type served for a file name, None for any type that is not served."""
    return MEDIA_TYPES.get(name.rsplit(".", 1)[-1].lower()) if "." in name else None


def missing_attachment(target: str, source: str) -> str:
    """What the route says of an attachment it does not serve (one answer for every reason:
    it never tells whether a file exists beyond what it may serve)."""
    return (f"No attachment '{target}' in raw/ for {source or 'the vault'}: only image, pdf, "
            f"audio and video files in raw/ that the page's embed finds are served.")


def attachment_file(raw_dir: Path, target: str, source: str,
                    visible: Callable[[str], bool] | None = None,
                    by_name: Callable[[str, str], str | None] | None = None
                    ) -> tuple[Path, str] | None:
    """(real path, content type) of the attachment ``target`` linked from the page at
    ``source``, or None when it may not be served (see the module docstring); ``by_name``:
    the index's lookup for this view (``AttachmentIndex.locator``), for many questions."""
    raw = target.replace("\\", "/")
    if (not raw.strip() or raw.startswith("/") or "\x00" in raw or ":" in raw
            or media_type(raw) is None):
        return None
    relative = _find(raw_dir, raw, source, visible, by_name)
    if relative is None:
        return None
    root = raw_dir.resolve()
    asked = root / posixpath.normpath(relative)
    try:
        real = asked.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    # no symlink anywhere below raw/ (ingest follows none either): the caller's view was
    # checked on the path as written, and a link could lead into another tenant's folder
    kind = media_type(real.name)
    if real != asked or kind is None or not real.is_file():
        return None
    return real, kind


def _find(raw_dir: Path, target: str, source: str, visible: Callable[[str], bool] | None,
          by_name: Callable[[str, str], str | None] | None = None) -> str | None:
    """The path (relative to raw/) the vault's attachment resolution gives ``target``."""
    folder = posixpath.dirname(source)
    climbs = ".." in target.split("/")
    # a path that climbs is read from the page's folder only, as Obsidian reads it
    candidates = (posixpath.join(folder, target),) if climbs else \
        (target, posixpath.join(folder, target) if folder else target)
    for candidate in candidates:
        path = posixpath.normpath(candidate)
        if path in (".", "..") or path.startswith("../") or \
                (visible is not None and not visible(path)):
            continue
        if (raw_dir / path).is_file() and not (raw_dir / path).is_symlink():
            return path                       # the usual case: no walk of raw/
    if climbs:
        return None                           # not another file of that name elsewhere
    if by_name is not None:
        return by_name(target, source)
    return attachment_index(raw_dir).locate(target, source, visible)   # no walk: kept current


__all__ = ["MEDIA_TYPES", "attachment_file", "media_type", "missing_attachment"]
