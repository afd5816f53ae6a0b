"""An attachment a note names, as the dashboard's markup: an image whose ``data-src`` is the
attachment route (the page's script loads it with the token), or a link to that route, or
its name marked missing. The renderer draws ``![[x.png]]``, ``![alt](x.png)`` and
``[[x.pdf]]`` with it (dashboard/render.py), and the raw-HTML allow-list a note's
``<img src="x.png">`` (dashboard/raw_html.py): one route, the same rules for each.

The browser opens that route URL itself (an ``<img>``'s source, a link to a new tab), so the
file is a document of the route: served with its sandbox (serve/dashboard.py), not a
``blob:`` running under the dashboard's page. ``ticket(target, page)``, when the server needs
a token, is what the URL adds to stand for it (serve/attachment_tickets.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote

from markdown_it.common.utils import escapeHtml

ATTACHMENT_ROUTE = "/dashboard/attachment"
IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif"})
_NEW_TAB = ' target="_blank" rel="noopener noreferrer"'
_SIZE_RE = re.compile(r"^(\d{1,5})(?:x(\d{1,5}))?$")


Ticket = Callable[[str, str], str]


def attachment_href(target: str, source: str, ticket: Ticket | None = None) -> str:
    """The route URL that serves ``target`` as the page ``source`` names it."""
    return (f"{ATTACHMENT_ROUTE}?target={quote(target, safe='')}"
            f"&page={quote(source, safe='')}" + (ticket(target, source) if ticket else ""))


def attachment_link(target: str, label: str, source: str,
                    has_attachment: Callable[[str], bool] | None = None,
                    ticket: Ticket | None = None) -> str:
    """A link (not an embed) to an attachment, ``[[diagram.png|see it]]``: it opens the
    file, as in Obsidian; a file ``has_attachment`` says is not there is marked missing."""
    if has_attachment is not None and not has_attachment(target):
        return (f'<span class="attachment missing" title="not found in raw/">'
                f'{escapeHtml(label)}</span>')
    href = attachment_href(target, source, ticket)
    return (f'<a class="attachment" href="{escapeHtml(href)}" data-attachment="1"'
            f'{_NEW_TAB}>{escapeHtml(label)}</a>')


def attachment_html(target: str, alias: str | None, source: str,
                    has_attachment: Callable[[str], bool] | None = None,
                    element_id: str | None = None, ticket: Ticket | None = None,
                    size: str | None = None) -> str:
    """An attachment embed: an image (sized by ``|300`` or ``|300x200``) or a link; a
    file ``has_attachment`` says is not there: its name, marked missing. ``element_id``: the
    block id written after it (``![[x.png]]^id``), which a ``[[Note#^id]]`` link lands on.
    ``size`` (``300`` or ``300x200``): the size of an image whose ``alias`` is its alt text
    (a note's ``<img alt="A map" width="300">``)."""
    id_attr = f' id="{escapeHtml(element_id)}"' if element_id else ""
    if has_attachment is not None and not has_attachment(target):
        return (f'<span class="attachment missing"{id_attr} title="not found in raw/">'
                f'{escapeHtml(alias or target)}</span>')
    href = attachment_href(target, source, ticket)
    size_given = _SIZE_RE.match(size or "")
    size = size_given or _SIZE_RE.match(alias or "")
    name = target.rsplit("/", 1)[-1]
    if name.rsplit(".", 1)[-1].lower() in IMAGE_EXTENSIONS:
        alt = alias if alias and (size_given or not size) else name
        dims = ""
        if size:
            dims = f' width="{size.group(1)}"' + (f' height="{size.group(2)}"'
                                                  if size.group(2) else "")
        return (f'<img class="attachment-image"{id_attr} data-src="{escapeHtml(href)}" '
                f'alt="{escapeHtml(alt)}"{dims}>')
    return (f'<a class="attachment"{id_attr} href="{escapeHtml(href)}" data-attachment="1"'
            f'{_NEW_TAB}>{escapeHtml(alias or target)}</a>')


__all__ = ["ATTACHMENT_ROUTE", "IMAGE_EXTENSIONS", "attachment_href", "attachment_html",
           "attachment_link"]
