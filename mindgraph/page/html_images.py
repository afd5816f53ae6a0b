"""The vault files a note's raw HTML shows: ``<img src="img/cat.png">``.

The dashboard draws such an image as the attachment embed ``![[img/cat.png]]`` is
(dashboard/raw_html.py), so the page model counts it as that embed's attachment link
(parse.py: stats, links, graph and `check`, which reports one whose file is missing). An
image from the web (``https:``, ``data:``, ``//host``) or from the root (``/x``), a name of
no attachment type, or a tag with an attribute that could act (``onerror``) is no vault
file; code and comments are not read.
"""

from __future__ import annotations

import html
import re
from typing import Any, Iterator
from urllib.parse import unquote

from .links import SCHEME_RE, is_attachment_target
from .model import Link

# what a local image may say beyond its src: nothing that acts (the dashboard's rule too)
LOCAL_IMAGE_ATTRIBUTES = frozenset({"src", "alt", "title", "width", "height"})

_IMG_RE = re.compile(r"<img\b([^<>]*)>", re.IGNORECASE)
_ATTR_RE = re.compile(r"""([A-Za-z_:][A-Za-z0-9:._-]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?""")


def vault_file(attributes: str) -> str | None:
    """The vault path an ``<img>`` with these attributes (the text after ``<img``) shows, or
    None: a ``src`` with a scheme or from the root, a name of no attachment type, or an
    attribute beyond ``LOCAL_IMAGE_ATTRIBUTES``."""
    found = {m.group(1).lower(): html.unescape((m.group(2) or "").strip("\"'")).strip()
             for m in _ATTR_RE.finditer(attributes.rstrip("/"))}
    src = unquote(found.get("src", ""))
    if (set(found) - LOCAL_IMAGE_ATTRIBUTES or not src or SCHEME_RE.match(src)
            or src.startswith(("/", "\\")) or not is_attachment_target(src)):
        return None
    return src


def image_tags(masked_lines: list[str]) -> Iterator[tuple[int, str, tuple[int, int]]]:
    """(line offset, vault path, the tag's span on its line) of each ``<img>`` of a vault file
    in ``masked_lines`` (a body with code and comments masked)."""
    for offset, line in enumerate(masked_lines):
        if "<" not in line:
            continue
        for match in _IMG_RE.finditer(line):
            src = vault_file(match.group(1))
            if src is not None:
                yield offset, src, match.span()


def image_links(masked_lines: list[str], first_line: int, section_at: Any) -> list[Link]:
    """Each ``<img>`` of a vault file as the attachment embed it is drawn as;
    ``section_at(line)`` gives the section id for a 1-based line."""
    return [Link(target=src, syntax="embed", line=first_line + offset,
                 section_id=section_at(first_line + offset), is_attachment=True)
            for offset, src, _ in image_tags(masked_lines)]


def image_tag(line: str, src: str) -> str | None:
    """The ``<img>`` on ``line`` (a body line) that shows ``src``, as written, or None."""
    for match in _IMG_RE.finditer(line):
        if vault_file(match.group(1)) == src:
            return match.group(0)
    return None


__all__ = ["LOCAL_IMAGE_ATTRIBUTES", "image_links", "image_tag", "image_tags", "vault_file"]
