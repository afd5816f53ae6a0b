"""Signed attachment URLs: how the dashboard opens a file of raw/ by its own route URL on a
server that needs a bearer token, which a browser opening a URL (a link, an ``<img>``)
cannot send.

The dashboard showed such a file from a ``blob:`` URL it fetched with the token; a ``blob:``
document runs under the dashboard page's own origin and policy, not the attachment route's
``sandbox`` (serve/dashboard.py), so an SVG opened from it was a document of the dashboard.
Now the rendered page names each attachment by its route URL, signed when a token is needed:
``&expires=<unix time>&ticket=<HMAC-SHA256 of the target, page and expiry, keyed by the
token that asked for the page>``. The token gate (serve/token_gate.py) lets a request to the
attachment route with no Authorization header through when its ticket verifies for exactly
that target, page and expiry, not past, as the token that signed it: everything after the
gate (the identity, its view of raw/, its lane) is as if that token had been sent. A ticket
opens one file as one identity until it expires (``TICKET_TTL_S``) or the token is changed;
the dashboard's pages send no referrer, so it leaves with no request.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qsl, quote

from ..dashboard.attachment_markup import ATTACHMENT_ROUTE
from ..scopes import Authenticator

TICKET_TTL_S = 3600            # a page left open this long is opened again to view its files
_FIELDS = ("target", "page", "expires", "ticket")


def _message(target: str, page: str, expires: int) -> str:
    return f"attachment\n{target}\n{page}\n{expires}"


def ticket_query(auth: Authenticator, authorization: str | None, target: str, page: str,
                 now: float | None = None) -> str:
    """What the attachment route URL of (``target``, ``page``) adds for a caller of this
    Authorization header: ``&expires=…&ticket=…``, or "" when the server needs no token."""
    expires = int(time.time() if now is None else now) + TICKET_TTL_S
    signature = auth.sign(authorization, _message(target, page, expires))
    return "" if signature is None else f"&expires={expires}&ticket={quote(signature)}"


def ticket_authorization(auth: Authenticator, scope: dict[str, Any],
                         now: float | None = None) -> bytes | None:
    """The Authorization header an attachment request without one stands for by its ticket,
    or None: another path, a header already sent, no ticket, a field given twice, a ticket
    past its expiry or one no token of this server signed for exactly this file."""
    if scope.get("path") != ATTACHMENT_ROUTE or \
            any(k == b"authorization" for k, _ in scope.get("headers", ())):
        return None
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    given: dict[str, str] = {}
    for key, value in pairs:
        if key in _FIELDS:
            if key in given:
                return None                 # which one the route reads is not ours to guess
            given[key] = value
    if "ticket" not in given or "target" not in given or not (given.get("expires", "").isascii() and given["expires"].isdigit()):
        return None
    expires = int(given["expires"])
    clock = time.time() if now is None else now
    if not clock <= expires <= clock + TICKET_TTL_S + 60:
        return None
    return auth.redeem(given["ticket"], _message(given["target"], given.get("page", ""),
                                                 expires))


__all__ = ["TICKET_TTL_S", "ticket_authorization", "ticket_query"]
