"""The serving side: an authenticated request → the identity it acts as.

The identity is taken from the bearer token alone (``Authorization: Bearer <token>``), never
from a parameter or another header the caller sets. The one thing a URL may carry instead is a
signature made with a token (``sign``/``redeem``): proof that whoever holds the token asked
for that one message (serve/attachment_tickets.py: one file, for a while), from which the
token, never a name the caller gives, is found again. A signature leads with its token's key
id (a digest of the token, which tells nothing of it), so it is checked against that token
alone: trying each token cost one HMAC per identity for any request with no token (1,000
identities: 4 ms of the event loop each, and a flood of them slowed every other caller 10x). With no identities configured, the
server's one token (``serve.token_env``), or none on loopback, stands for the local identity,
as before scoping existed.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Mapping

from ..errors import Unauthenticated
from .identities import Scopes
from .identity import LOCAL, Identity

DEFAULT_TOKEN_ENV = "MINDGRAPH_API_TOKEN"      # serve.token_env's default


class Authenticator:
    """Maps a request's Authorization header to an identity (Unauthenticated: 401)."""

    def __init__(self, scopes: Scopes, server_token: tuple[str, str] | None = None,
                 environ: Mapping[str, str] | None = None,
                 token_env: str = DEFAULT_TOKEN_ENV):
        """``server_token``: (variable, token) of serve.token_env when one is set;
        ``token_env``: serve.token_env, named in a 401 when none is."""
        self.scopes = scopes
        self._tokens = [(t.encode(), i) for t, i in scopes.tokens(
            server_token, environ).items()] if scopes.enabled else \
            ([(server_token[1].encode(), LOCAL)] if server_token else [])
        self._by_key_id = {_key_id(token): token for token, _ in self._tokens}
        self._variable = server_token[0] if server_token else token_env
        self._has_server_token = server_token is not None

    @property
    def required(self) -> bool:
        """True when every request needs a token."""
        return bool(self._tokens)

    def identity_for(self, authorization: str | bytes | None) -> Identity:
        """The identity of a request with this Authorization header value."""
        if not self._tokens:
            return LOCAL
        return self._match(authorization)[1]

    def _match(self, authorization: str | bytes | None) -> tuple[bytes, Identity]:
        raw = authorization.encode() if isinstance(authorization, str) else authorization or b""
        scheme, _, given = raw.strip().partition(b" ")
        given = given.strip()
        found = None
        for token, identity in self._tokens:   # compare with every token: constant time
            if hmac.compare_digest(given, token) and scheme.lower() == b"bearer":
                found = (token, identity)
        if found is None:
            raise Unauthenticated(self._refusal(raw.strip(), scheme))
        return found

    def sign(self, authorization: str | bytes | None, message: str) -> str | None:
        """``message`` signed with the token of this Authorization header, as
        ``<key id>.<HMAC>`` (Unauthenticated when it is no token of this server), or None
        when the server needs no token."""
        if not self._tokens:
            return None
        token = self._match(authorization)[0]
        return f"{_key_id(token)}.{_signature(token, message)}"

    def redeem(self, signature: str, message: str) -> bytes | None:
        """The Authorization header value (``Bearer <token>``) of the token that signed
        ``message`` as ``signature``, or None when no token of this server did (one HMAC:
        of the token the key id names)."""
        key_id, _, given = signature.partition(".")
        token = self._by_key_id.get(key_id)
        if token is None:
            return None
        expected = _signature(token, message).encode()
        return b"Bearer " + token if hmac.compare_digest(
            given.encode("utf-8", "replace"), expected) else None

    def token_state(self, authorization: str | bytes | None) -> str:
        """"not needed", "accepted", "missing", "not bearer" or "not recognised": what
        /health says of the token it was sent (it answers without one), as a 401 would."""
        if not self._tokens:
            return "not needed"
        try:
            self.identity_for(authorization)
        except Unauthenticated:
            raw = authorization.encode() if isinstance(authorization, str) else \
                authorization or b""
            scheme, _, given = raw.strip().partition(b" ")
            if not raw.strip():
                return "missing"
            return "not bearer" if scheme.lower() != b"bearer" or not given.strip() \
                else "not recognised"
        return "accepted"

    def _refusal(self, raw: bytes, scheme: bytes) -> str:
        """Why a request is refused: no header, not a bearer token, or a token no identity
        has; and where the token comes from (the variable, never a token)."""
        told = []
        if self.scopes.enabled:
            told.append("an identity's token is the value of the environment variable its "
                        "scopes.identities entry names")
        if self._has_server_token:
            told.append(f"the server's own token is the value of {self._variable} where it "
                        f"runs")
        where = "; ".join(told) or f"set {self._variable} where the server runs"
        if not raw:
            return (f"No Authorization header: this server needs 'Authorization: Bearer "
                    f"<token>' ({where}).")
        if scheme.lower() != b"bearer" or not raw.partition(b" ")[2].strip():
            return (f"The Authorization header is not 'Bearer <token>': send the token as "
                    f"'Authorization: Bearer <token>' ({where}).")
        return (f"The token in 'Authorization: Bearer <token>' is not recognised: it is none "
                f"of the tokens this server accepts ({where}). Send the value the server "
                f"was started with.")


def _key_id(token: bytes) -> str:
    # which token signed, for redeem to check that one alone; a digest tells nothing of it
    return hashlib.sha256(b"mindgraph signing key id\n" + token).hexdigest()[:16]


def _signature(token: bytes, message: str) -> str:
    # the purpose leads the message: a signature made for one use is never another's
    return hmac.new(token, b"mindgraph signed url\n" + message.encode("utf-8", "surrogatepass"),
                    hashlib.sha256).hexdigest()


def usage_identity(scopes: Scopes, identity: Identity) -> dict[str, str]:
    """The usage-log field naming who asked (nothing when no identities are configured, so
    the log stays as it was)."""
    return {"identity": identity.name} if scopes.enabled else {}


def identity_for_request(authenticator: Authenticator, headers: Mapping[str, str]) -> Identity:
    """The identity of a request given its headers (only Authorization is read)."""
    return authenticator.identity_for(headers.get("authorization"))


__all__ = ["Authenticator", "DEFAULT_TOKEN_ENV", "identity_for_request", "usage_identity"]
