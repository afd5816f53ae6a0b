"""Who is calling: the one place every documents route (REST and MCP) takes the caller's view
from.

The identity comes from the request's bearer token alone (``scopes.Authenticator``: a token
configured for an identity under ``scopes.identities``, or the server's one token standing for
the local identity); without a request (stdio MCP) it is the configured local identity. The
view pairs it with the folder mapping, so every answer is filtered by what that identity sees.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from ..config import Settings
from ..scopes import Authenticator, Identity, View, identity_for_request, load_scopes


class Callers:
    """Maps a request to its caller's ``View`` (Unauthenticated, a 401, without a valid
    token when tokens are required)."""

    def __init__(self, settings: Settings, server_token: str | None = None,
                 environ: Mapping[str, str] | None = None):
        self.scopes = load_scopes(settings)
        self._given = (settings.serve.token_env, server_token) if server_token else None
        self._environ = os.environ if environ is None else environ
        self._token_env = settings.serve.token_env
        self._authenticator: Authenticator | None = None

    @property
    def authenticator(self) -> Authenticator:
        """Made on the first request that carries headers: stdio MCP, which has none and
        is the local identity, needs no identity's token in its environment (an MCP client
        starts it with a minimal one); HTTP servers check every token before they start."""
        if self._authenticator is None:
            self._authenticator = Authenticator(self.scopes, self._given, self._environ,
                                                token_env=self._token_env)
        return self._authenticator

    def view_of(self, identity: Identity) -> View:
        """The view of ``identity``."""
        return View(identity, self.scopes.mapping)

    def view(self, request: Any = None) -> View:
        """The view of the caller of ``request`` (headers read: Authorization only); no
        request: the local identity's."""
        if request is None:
            return self.view_of(self.scopes.local)
        return self.view_of(identity_for_request(self.authenticator, request.headers))


__all__ = ["Callers"]
