"""The vault files a note's raw HTML shows: ``<img src="img/cat.png">``.

The dashboard draws such an image as the attachment embed ``![[img/cat.png]]`` is
(dashboard/raw_html.py); `check` reports one whose file is missing as it reports a missing
embed. An image from the web (``https:``, ``data:``, ``//host``) or from the root (``/x``) is
no vault file; code and comments are not read.
"""

from __future__ import annotations

import re
from typing import Iterator
from urllib.parse import unquote

from .links import SCHEME_RE, is_attachment_target
from .markdown import mask_code, mask_comments
from .model import Page

_IMG_SRC_RE = re.compile(r"""<img\b[^<>]*?\bsrc\s*=\s*(?:"([^"<>]*)"|'([^'<>]*)'|([^\s"'<>]+))"""
                         r"[^<>]*>", re.IGNORECASE)

_ANY_IMG_RE = re.compile(r"<img\b", re.IGNORECASE)


def local_images(page: Page) -> Iterator[tuple[int, str, str]]:
    """(file line, vault path the ``src`` names, the tag as written) of each ``<img>`` of a
    vault file in ``page``'s body."""
    if _ANY_IMG_RE.search(page.body) is None:
        return                  # most pages: one scan, no masking
    lines = page.body.split("\n")
    for offset, line in enumerate(mask_code(mask_comments(page.body).split("\n"))):
        if "<" not in line:
            continue
        for match in _IMG_SRC_RE.finditer(line):
            src = unquote(next(g for g in match.groups() if g is not None).strip())
            if (src and not SCHEME_RE.match(src) and not src.startswith(("/", "\\"))
                    and is_attachment_target(src)):
                yield page.body_line + offset, src, lines[offset][match.start():match.end()]


__all__ = ["local_images"]
