"""The serving side: an authenticated request → the identity it acts as.

The identity is taken from the bearer token alone (``Authorization: Bearer <token>``), never
from a parameter or another header the caller sets. With no identities configured, the
server's one token (``serve.token_env``), or none on loopback, stands for the local identity,
as before scoping existed.
"""

from __future__ import annotations

import hmac
from typing import Mapping

from ..errors import Unauthenticated
from .identities import Scopes
from .identity import LOCAL, Identity

UNAUTHENTICATED = ("Send 'Authorization: Bearer <token>' with your identity's token (the "
                   "environment variable its scopes.identities entry names, or the server's "
                   "serve.token_env).")


class Authenticator:
    """Maps a request's Authorization header to an identity (Unauthenticated: 401)."""

    def __init__(self, scopes: Scopes, server_token: tuple[str, str] | None = None,
                 environ: Mapping[str, str] | None = None):
        """``server_token``: (variable, token) of serve.token_env when one is set."""
        self.scopes = scopes
        self._tokens = [(t.encode(), i) for t, i in scopes.tokens(
            server_token, environ).items()] if scopes.enabled else \
            ([(server_token[1].encode(), LOCAL)] if server_token else [])

    @property
    def required(self) -> bool:
        """True when every request needs a token."""
        return bool(self._tokens)

    def identity_for(self, authorization: str | bytes | None) -> Identity:
        """The identity of a request with this Authorization header value."""
        if not self._tokens:
            return LOCAL
        raw = authorization.encode() if isinstance(authorization, str) else authorization or b""
        scheme, _, given = raw.partition(b" ")
        given = given.strip()
        found = None
        for token, identity in self._tokens:   # compare with every token: constant time
            if hmac.compare_digest(given, token) and scheme.lower() == b"bearer":
                found = identity
        if found is None:
            raise Unauthenticated(UNAUTHENTICATED)
        return found


def usage_identity(scopes: Scopes, identity: Identity) -> dict[str, str]:
    """The usage-log field naming who asked (nothing when no identities are configured, so
    the log stays as it was)."""
    return {"identity": identity.name} if scopes.enabled else {}


def identity_for_request(authenticator: Authenticator, headers: Mapping[str, str]) -> Identity:
    """The identity of a request given its headers (only Authorization is read)."""
    return authenticator.identity_for(headers.get("authorization"))


__all__ = ["Authenticator", "UNAUTHENTICATED", "identity_for_request", "usage_identity"]
