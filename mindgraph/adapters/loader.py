"""Turn the `adapters:` entries of mindgraph.yml into adapter objects.

``type`` is a built-in name (``filesystem``, ``ticktick``) or a dotted path to a class
(``pkg.mod.Class`` or ``pkg.mod:Class``), which is called with the entry's ``options`` as
keyword arguments. A class that declares ``remote = True`` (a note app over the network) is
also given ``name`` (the entry's) and ``cache``: its corpus cache under ``<state>/apps/``
(adapters/cache.py), kept ``cache_ttl_s`` seconds. Given ``listing_bytes`` (every caller
gives ``limits.max_pull_bytes``), a remote adapter's listing reads no more of the app's answers
(its ``limit_listing``) and its cache file is not read past that size. ``limit_listing`` is
called as ``limit_listing(max_bytes, max_notes)`` (adapters/base.py, ``ListingLimits``); the
older one-argument form ``limit_listing(max_bytes)`` is still called (pull then cuts the notes
after the listing), and any other signature is refused when the adapter is loaded, naming its
module and the signature to give it (not a TypeError in the middle of a pull).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..config import AdapterSettings
from ..errors import AdapterError
from .base import DataSourceAdapter, safe_target
from .cache import CorpusCache
from .filesystem import FilesystemAdapter

# built-in types; a note app's module (and its HTTP client) is imported only when configured,
# so a keyword search that passes through here loads no httpx (tests/cli/test_start_imports.py)
BUILTIN_ADAPTERS: dict[str, type | str] = {"filesystem": FilesystemAdapter,
                                           "ticktick": "mindgraph.adapters.ticktick:TickTickAdapter"}
CACHE_FOLDER = "apps"


@dataclass(frozen=True)
class ConfiguredAdapter:
    """An adapter object with its configured name and the (sanitised) folder under raw/."""

    name: str
    adapter: DataSourceAdapter
    target: str


def adapter_class(type_name: str, where: str = "adapter") -> type:
    """The class for a built-in name or a dotted path; AdapterError says why it cannot load."""
    if type_name in BUILTIN_ADAPTERS:
        builtin = BUILTIN_ADAPTERS[type_name]
        if isinstance(builtin, str):
            module_name, _, class_name = builtin.partition(":")
            return getattr(importlib.import_module(module_name), class_name)
        return builtin
    if "." not in type_name and ":" not in type_name:
        raise AdapterError(f"{where}: unknown adapter type {type_name!r}. Built-in types: "
                           f"{', '.join(sorted(BUILTIN_ADAPTERS))}; for your own adapter give a "
                           f"dotted path such as mypackage.adapters.NotesAdapter.")
    module_name, _, class_name = type_name.partition(":") if ":" in type_name \
        else type_name.rpartition(".")
    if not module_name or not class_name:
        raise AdapterError(f"{where}: type {type_name!r} is not a dotted path to a class "
                           f"(module.Class or module:Class). Fix it in mindgraph.yml.")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AdapterError(f"{where}: cannot import module {module_name!r} for adapter type "
                           f"{type_name!r} ({exc}). Check the dotted path in mindgraph.yml and "
                           f"that the module is installed or on PYTHONPATH.") from exc
    except Exception as exc:  # noqa: BLE001 - user code may raise anything at import time
        raise AdapterError(f"{where}: importing {module_name!r} failed with "
                           f"{type(exc).__name__}: {exc}. Fix the error in that module.") from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise AdapterError(f"{where}: module {module_name!r} has no attribute {class_name!r}. "
                           f"Check the class name in mindgraph.yml.")
    if not callable(cls) or not callable(getattr(cls, "fetch", None)):
        raise AdapterError(f"{where}: {type_name} is not an adapter class: it needs a "
                           f"fetch() method returning a list of RawDocument.")
    return cls


def load_adapter(entry: AdapterSettings, base_dir: Path = Path("."),
                 state_dir: Path | None = None,
                 max_bytes: int | None = None,
                 listing_bytes: int | None = None,
                 listing_notes: int | None = None) -> ConfiguredAdapter:
    """Build the adapter for one `adapters:` entry (``state_dir``: where a remote adapter's
    corpus cache lives, None keeps it in memory; the filesystem adapter reads no file over
    ``max_bytes``; a remote adapter's listing and cache file stop at ``listing_bytes``, its
    listing also at ``listing_notes`` items: `pull`'s ``limits.max_pull_notes``)."""
    where = f"adapter {entry.name!r}"
    cls = adapter_class(entry.type, where)
    options: dict[str, Any] = dict(entry.options)
    if getattr(cls, "remote", False):
        path = None if state_dir is None else \
            Path(state_dir) / CACHE_FOLDER / f"{safe_target(entry.name) or 'app'}.json"
        options.update(name=entry.name, cache=CorpusCache(path, entry.cache_ttl_s,
                                                            max_bytes=listing_bytes))
    if cls is FilesystemAdapter:
        if "path" not in options:
            raise AdapterError(f"{where}: the filesystem adapter needs options.path (the folder "
                               f"to read). Add it to the entry in mindgraph.yml.")
        path = Path(str(options["path"])).expanduser()
        options["path"] = path if path.is_absolute() else Path(base_dir) / path
        options.setdefault("max_bytes", max_bytes)
    try:
        adapter = cls(**options)
    except TypeError as exc:
        raise AdapterError(f"{where}: {entry.type} rejected its options {sorted(options)} "
                           f"({exc}). Fix options in mindgraph.yml.") from exc
    except Exception as exc:  # noqa: BLE001 - a constructor may fail in many ways
        raise AdapterError(f"{where}: creating {entry.type} failed with "
                           f"{type(exc).__name__}: {exc}.") from exc
    limit_listing = getattr(adapter, "limit_listing", None)
    if callable(limit_listing):
        limit = _listing_limiter(limit_listing, cls, where)
        if listing_bytes is not None:
            limit(listing_bytes, listing_notes)
    target = entry.target or str(getattr(adapter, "target", "") or "") or entry.name
    return ConfiguredAdapter(entry.name, adapter, safe_target(target))


LIMIT_LISTING_SIGNATURE = ("def limit_listing(self, max_bytes: int | None, "
                           "max_notes: int | None = None) -> None")


def _listing_limiter(limit_listing: Callable[..., Any], cls: type, where: str
                     ) -> Callable[[int, int | None], Any]:
    """How to call an adapter's ``limit_listing`` with (max_bytes, max_notes): as documented
    (``max_notes`` by keyword or by position), or in the older form that takes ``max_bytes``
    alone. AdapterError, naming the class's module and the signature to give it, when it can
    be called in none of these ways."""
    try:
        signature = inspect.signature(limit_listing)
    except (TypeError, ValueError):     # no signature to read: call it as documented
        return lambda max_bytes, max_notes: limit_listing(max_bytes, max_notes=max_notes)
    forms: list[tuple[tuple[Any, ...], dict[str, Any], Callable[[int, int | None], Any]]] = [
        ((0,), {"max_notes": 0},
         lambda max_bytes, max_notes: limit_listing(max_bytes, max_notes=max_notes)),
        ((0, 0), {}, lambda max_bytes, max_notes: limit_listing(max_bytes, max_notes)),
        ((0,), {}, lambda max_bytes, _max_notes: limit_listing(max_bytes))]
    for args, kwargs, call in forms:
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            continue
        return call
    raise AdapterError(f"{where}: {cls.__module__}.{cls.__qualname__}.limit_listing"
                       f"{signature} cannot be called as limit_listing(max_bytes, max_notes) "
                       f"(adapters/base.py, ListingLimits). Define it in module "
                       f"{cls.__module__!r} as `{LIMIT_LISTING_SIGNATURE}`, or remove it.")
