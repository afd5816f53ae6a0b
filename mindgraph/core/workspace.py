"""``Mindgraph``: a workspace put together from the core's parts, with its scopes and views."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings, load_settings
from ..scopes.views import ScopedQueries
from .queries import Queries
from .services import Services
from .vectors import VectorSearch

if TYPE_CHECKING:
    from ..scopes import Identity, Scopes
    from ..scopes.views import ViewRegistry


class Mindgraph(Queries, VectorSearch, Services):
    """A workspace: raw notes, the compiled wiki and everything derived from them."""

    def __init__(self, settings: Settings, *, auto_refresh: bool = True):
        super().__init__(settings, auto_refresh=auto_refresh)

    @classmethod
    def open(cls, base_dir: str | Path = ".", config: str | Path | None = None) -> "Mindgraph":
        """Load settings from ``base_dir``/mindgraph.yml (or ``config``) and wire everything."""
        return cls(load_settings(base_dir, config))

    @functools.cached_property
    def scopes(self) -> Scopes:
        """Identities and the folder → tenant/scope mapping (mindgraph/scopes/)."""
        from ..scopes import load_scopes

        return load_scopes(self.settings)

    def as_identity(self, identity: Identity) -> "Mindgraph":
        """The workspace as ``identity`` sees it: this core for the local identity (or when
        no identities are configured), else a view's core sharing this one's model and store."""
        if identity.is_local or not self.scopes.enabled:
            return self
        from ..scopes import View

        return self._views.get(View(identity, self.scopes.mapping),
                               lambda view: ScopedMindgraph(self, view))

    @functools.cached_property
    def _views(self) -> ViewRegistry:
        from ..scopes.views import ViewRegistry

        return ViewRegistry()

    def close(self) -> None:
        """Save the state files behind memory; flush and release the vector store (files or
        connections) and the wiki watch."""
        with self._lock:
            self.save_state()
            if self._cache is not None:
                self._cache.close()
            if self._store is not None:
                self._store.close()
                self._store = None
                self._vector = None
                self._hybrid = None


class ScopedMindgraph(ScopedQueries, Mindgraph):
    """The workspace as one identity sees it (built by ``Mindgraph.as_identity``)."""
