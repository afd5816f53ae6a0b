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

Files go to ``<project>/<title>.md``; two items of one name in one project are told apart by
the start of their ids (``<title> (63b7bebb).md``), in id order, so the names are stable.
"""

from __future__ import annotations

from typing import Callable, Iterable

import yaml

from ..errors import AdapterError
from .base import Item, RawDocument, safe_relative_path

ITEM_ID_KEY = "item_id"
APP_KEY = "app"
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def item_documents(app: str, items: Iterable[Item],
                   url_for: Callable[[Item], str]) -> list[RawDocument]:
    """Every item as a RawDocument (``metadata``: item_id, mtime), in file-name order."""
    taken: set[str] = set()
    documents = []
    for item in sorted(items, key=lambda i: (i.project_name, i.title, i.id)):
        folder = item.project_name or "Inbox"
        title = item.title.strip() or "Untitled"
        name = f"{folder}/{title}.md"
        if _key(name) in taken:
            name = f"{folder}/{title} ({item.id[:8]}).md"
        taken.add(_key(name))
        documents.append(RawDocument(item_note(app, item, url_for(item)), name,
                                     {ITEM_ID_KEY: item.id, "mtime": _mtime(item)}))
    return documents


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


def _key(name: str) -> str:
    try:
        return safe_relative_path(name).casefold()
    except AdapterError:   # a name with nothing usable: pull rejects it and says why
        return name.casefold()


def _mtime(item: Item) -> float | None:
    when = item.modified or item.completed
    return when.timestamp() if when is not None else None
