"""Writing to a note app: `create` and `update` through its adapter, never into raw/.

``NoteApps`` is what the CLI (`mindgraph create`, `mindgraph update`), the REST routes
(serve/rest_apps.py) and the MCP tools (serve/mcp_apps.py) call. A created or updated item
reaches raw/ the way every item does, with the next `mindgraph pull` (from the corpus cache:
the write already put it there, so that pull costs no listing). Each answer is one dict
(``item_result``): the app, what was done, the item, its deep link and the raw note `pull`
will file it as.

Who may write: the app is the workspace owner's, so the local identity (the CLI, stdio MCP, the
server's own token) always may, and an identity of ``scopes.identities`` only when the entry
lists it under ``writers``.
"""

from __future__ import annotations

import threading
from typing import Any

from ..config import AdapterSettings, Settings
from ..errors import AdapterError, ConfigError, Forbidden, InputError
from .base import Item, ItemNotFound, ListingTooLarge, safe_relative_path
from .loader import ConfiguredAdapter, adapter_class, load_adapter
from .mirror import load_manifest, manifest_path
from .notes import ITEM_ID_KEY, item_documents
from .owned import beside, place, strangers

WRITE_METHODS = ("create", "update", "get", "url_for")
NEXT = "`mindgraph pull` files it under raw/ (writes go to the app, never to raw/)"


class NoteApps:
    """The configured adapters that can write (create, update) to their app."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._loaded: dict[str, ConfiguredAdapter] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        """The names of the entries whose adapter can create and update items."""
        return [e.name for e in self.settings.adapters if _writable(e)]

    def app(self, name: str | None = None) -> ConfiguredAdapter:
        """The named app, or the only one; ConfigError says which exist."""
        names = self.names()
        if name is None:
            if len(names) != 1:
                raise ConfigError(f"{self.settings.source}: "
                                  + ("no adapter can create or update items (add a note app, "
                                     "e.g. `type: ticktick`, under adapters:)." if not names
                                     else f"several note apps are configured "
                                          f"({', '.join(names)}); name one with --app."))
            name = names[0]
        if name not in names:
            raise ConfigError(f"{self.settings.source}: no note app named {name!r}; note apps: "
                              f"{', '.join(names) or 'none'}.")
        with self._lock:
            if name not in self._loaded:
                entry = next(e for e in self.settings.adapters if e.name == name)
                self._loaded[name] = load_adapter(
                    entry, self.settings.base_dir, self.settings.state_dir,
                    listing_bytes=self.settings.limits.max_pull_bytes)
            return self._loaded[name]

    def check_writer(self, app: str | None, identity: str, is_local: bool) -> None:
        """Forbidden unless ``identity`` may write to the app."""
        configured = self.app(app)
        entry = next(e for e in self.settings.adapters if e.name == configured.name)
        if is_local or identity in entry.writers:
            return
        raise Forbidden(f"identity {identity!r} may not write to the note app "
                        f"{configured.name!r}: it is the workspace owner's. List the identity "
                        f"under adapters[].writers of {configured.name!r} in mindgraph.yml to "
                        f"allow it.")

    def projects(self, app: str | None = None) -> dict[str, Any]:
        """The app's projects (id, name, kind)."""
        configured = self.app(app)
        projects = configured.adapter.list_projects()  # type: ignore[attr-defined]
        return {"app": configured.name, "projects": [
            {"id": p.id, "name": p.name, "kind": p.kind} for p in projects]}

    def create(self, title: str, content: str = "", project: str | None = None,
               app: str | None = None) -> dict[str, Any]:
        """A new item in the app."""
        if not title.strip():
            raise InputError("create: give the item a title (it is empty).")
        configured = self.app(app)
        item = configured.adapter.create(title, content, project)  # type: ignore[attr-defined]
        return item_result(configured, item, "created", self.settings)

    def update(self, ref: str, *, title: str | None = None, content: str | None = None,
               append: str | None = None, app: str | None = None) -> dict[str, Any]:
        """Change an item's title or content, or append a line to its content."""
        if title is None and content is None and append is None:
            raise InputError("update: nothing to change; give a title, content or a line "
                             "to append.")
        if content is not None and append is not None:
            raise InputError("update: give either the new content or a line to append, "
                             "not both.")
        configured = self.app(app)
        adapter: Any = configured.adapter
        item_id = self._item_id(configured, ref)
        if append is not None:
            current = adapter.get(item_id).content.rstrip()
            content = f"{current}\n{append.strip()}" if current else append.strip()
        item = adapter.update(item_id, title=title, content=content)
        return item_result(configured, item, "updated", self.settings)

    def _item_id(self, configured: ConfiguredAdapter, ref: str) -> str:
        """An item id from an id, the raw path of its pulled note (or of the copy pull filed
    beside a person's note) or its exact title."""
        items = _corpus(configured)
        if any(i.id == ref for i in items):
            return ref
        wanted = ref.strip().removesuffix(".md").casefold()
        prefix = f"{configured.target}/" if configured.target else ""
        by_name = {name.removesuffix(".md").casefold(): d.metadata[ITEM_ID_KEY]
                   for d in _documents(configured, items)
                   for name in (d.filename, beside(d.filename, configured.name,
                                                   str(d.metadata[ITEM_ID_KEY])))}
        found = by_name.get(wanted) or by_name.get(wanted.removeprefix(prefix.casefold()))
        if found:
            return str(found)
        titles = [i.id for i in items if i.title.casefold() == wanted]
        if len(titles) == 1:
            return titles[0]
        if len(titles) > 1:
            raise InputError(f"update: {len(titles)} items of {configured.name!r} are titled "
                             f"{ref!r}; give the item's id ({', '.join(titles)}).")
        return ref      # the adapter says it does not exist, in its own words


def item_result(configured: ConfiguredAdapter, item: Item, action: str,
                settings: Settings | None = None) -> dict[str, Any]:
    """The one answer of create and update: app, action, item, deep link, future raw note
    (with ``settings``: beside a file in raw/ that pull may not overwrite, as pull files it)."""
    adapter: Any = configured.adapter
    try:
        corpus = _corpus(configured)
    except ListingTooLarge as exc:  # written already: say so, and why pull cannot file it yet
        return {"app": configured.name, "action": action, "item": item.to_json(),
                "url": adapter.url_for(item), "raw_note": "",
                "next": f"{exc} `mindgraph pull` files the item once the listing fits."}
    # the listing's copy of the item when it has one: with cache_ttl_s 0 the written item
    # comes back without its list's name (no cached corpus to read it from)
    documents = _documents(configured, [item, *corpus])
    doc = next((d for d in documents if d.metadata.get(ITEM_ID_KEY) == item.id), None)
    try:        # the name pull writes, not the title's own (`../x` is filed as `x`)
        name = safe_relative_path(doc.filename) if doc else ""
    except AdapterError:
        name = ""
    if name and settings is not None:
        name = _placed(settings, configured, name, doc.data, item.id)  # type: ignore[union-attr]
    raw = f"{configured.target}/{name}" if configured.target and name else name
    return {"app": configured.name, "action": action, "item": item.to_json(),
            "url": adapter.url_for(item), "raw_note": raw, "next": NEXT}


def _placed(settings: Settings, configured: ConfiguredAdapter, rel: str, data: bytes,
            item_id: str) -> str:
    """Where pull will file the note of ``rel``: there, or beside a file it may not
    overwrite (owned.py)."""
    raw_root = settings.raw_dir.resolve()
    folder = raw_root / configured.target if configured.target else raw_root
    prefix = f"{configured.target}/" if configured.target else ""
    owned = load_manifest(manifest_path(settings.state_dir, configured.name), raw_root)
    return place(folder, prefix, rel, data, owned, configured.name, item_id,
                 strangers(folder, prefix, owned)).rel or rel


def _corpus(configured: ConfiguredAdapter) -> list[Item]:
    listing = getattr(configured.adapter, "list_all", None)
    return list(listing()) if callable(listing) else []


def _documents(configured: ConfiguredAdapter, items: list[Item]) -> list[Any]:
    unique = list({i.id: i for i in items}.values())
    return item_documents(configured.name, unique, configured.adapter.url_for)  # type: ignore


def _writable(entry: AdapterSettings) -> bool:
    try:
        cls = adapter_class(entry.type, f"adapter {entry.name!r}")
    except AdapterError:
        return False
    return all(callable(getattr(cls, m, None)) for m in WRITE_METHODS)


__all__ = ["ItemNotFound", "NoteApps", "item_result"]
