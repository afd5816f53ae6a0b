"""A note app's items as raw notes: one markdown file per item, its ids and deep link in the
frontmatter, so that every page compiled from it (and every answer citing that page) links
back into the app.

::

    ---
    title: Renew passport
    app: tasks                    the configured adapter's name
    item_id: 63b7bebb91c0a5474805fcd4
    project_id: 6226ff9877acee87727f6bca
    project: Errands
    url: https://ticktick.com/webapp/#p/6226ff9877acee87727f6bca/tasks/63b7bebb91c0a5474805fcd4
    tags: [admin]
    due: '2026-12-14T00:00:00+00:00'
    modified: '2026-11-30T18:02:11+00:00'
    completed: null                 the time it was completed, once it is
    ---
    The item's content.

Files go to ``<project>/<title>.md``, the project and the title each one safe file name
(``safe_file_name``: a ``/`` in a title is a ``_``, never a folder; no control characters, no
leading dot, no Windows device name, at most 255 bytes of UTF-8). Two items whose names meet
(one title twice in a project, ``a/b`` and ``a_b``, titles alike in their first 250 bytes,
titles a case-insensitive file system takes for one: ``Straße`` and ``Strasse``, ``ǅ`` and
``Ǆ``, filenames.collision_key) are told apart by the start of their ids
(``<title> (63b7bebb).md``, the whole id if even that meets), in id order, so the names are
stable: the older item keeps its name when a newer one's meets it.
"""

from __future__ import annotations

from typing import Callable, Iterable

import yaml

from ..filenames import collision_key, cut_utf8
from .base import Item, RawDocument, safe_file_name

ITEM_ID_KEY = "item_id"
APP_KEY = "app"
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def item_documents(app: str, items: Iterable[Item],
                   url_for: Callable[[Item], str]) -> list[RawDocument]:
    """Every item as a RawDocument (``metadata``: item_id, mtime), in file-name order."""
    items = list(items)
    plain = {item.id: _name(item, ".md") for item in items}
    names: dict[str, str] = {}
    taken: set[str] = set()
    # items whose names meet take them in id order (ids grow as items are made, in TickTick
    # and most apps): the older keeps its name, the newer gets its id, at every pull
    for item in sorted(items, key=lambda i: (collision_key(plain[i.id]), i.id)):
        names[item.id] = _free_name(item, taken)
        taken.add(collision_key(names[item.id]))
    return [RawDocument(item_note(app, item, url_for(item)), names[item.id],
                        {ITEM_ID_KEY: item.id, "mtime": _mtime(item)})
            for item in sorted(items, key=lambda i: (i.project_name, i.title, i.id))]


def _name(item: Item, ending: str) -> str:
    """``<project>/<title><ending>``, each a safe file name."""
    folder = safe_file_name(item.project_name or "Inbox", "", "Inbox")
    return f"{folder}/{safe_file_name(item.title, ending)}"


def _free_name(item: Item, taken: set[str]) -> str:
    """``<project>/<title>.md``, or with the start of the id (then more of it) when an earlier
    item has that name (compared as macOS and Windows may: ``collision_key``)."""
    tag = safe_file_name(item.id, "", "")
    for ending in (".md", f" ({tag[:8]}).md", f" ({cut_utf8(tag, 100)}).md"):
        name = _name(item, ending)
        if collision_key(name) not in taken:
            break
    return name     # taken still (ids alike in 100 bytes): pull rejects it, names both


def item_note(app: str, item: Item, url: str) -> str:
    """The markdown text of one item."""
    data = item.to_json()
    meta = {"title": item.title, APP_KEY: app, ITEM_ID_KEY: item.id,
            "project_id": item.project, "project": item.project_name, "url": url,
            "tags": list(item.tags), "due": data["due"], "modified": data["modified"],
            "completed": data["completed"]}
    head = yaml.dump(meta, Dumper=_DUMPER, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=10_000)
    body = item.content.strip()
    return f"---\n{head}---\n{body}\n" if body else f"---\n{head}---\n"


def _mtime(item: Item) -> float | None:
    when = item.modified or item.completed
    return when.timestamp() if when is not None else None
