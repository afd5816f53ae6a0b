"""Signed attachment URLs: how the dashboard opens a file of raw/ by its own route URL on a
server that needs a bearer token, which a browser opening a URL (a link, an ``<img>``)
cannot send.

The dashboard showed such a file from a ``blob:`` URL it fetched with the token; a ``blob:``
document runs under the dashboard page's own origin and policy, not the attachment route's
``sandbox`` (serve/dashboard.py), so an SVG opened from it was a document of the dashboard.
Now the rendered page names each attachment by its route URL, signed when a token is needed:
``&file=<the file it opens, from raw/>&expires=<unix time>&ticket=<HMAC-SHA256 of the target,
page, file and expiry, keyed by the token that asked for the page>``. The token gate
(serve/token_gate.py) lets a request to the attachment route with no Authorization header
through when its ticket verifies for exactly that target, page, file and expiry, not past, as
the token that signed it: everything after the gate (the identity, its view of raw/, its
lane) is as if that token had been sent, and the route serves the embed's file only while it
is still the one signed (``opens_signed_file``). A ticket opens one file as one identity until
it expires or the token is changed; the dashboard's pages send no referrer, so it leaves with
no request.

Its expiry is the end of a time bucket: at least ``TICKET_TTL_S`` after the page was asked
for, at most ``TICKET_BUCKET_S`` more (``ticket_expiry``). Every render of a page within one
bucket signs the same URLs, so the page's JSON is the same and the browser keeps the images it
has; an expiry of the second it was asked for made every render's URLs new. The page renews
its URLs before they expire (dashboard.js ``renewAttachments``), so one left open past the
hour does not get a 401 for its files.

Why the file is signed, not only the embed's target: the route finds a target again on each
request, and what it finds changes when files do. A ticket for a shared ``report.pdf``, once
that file was moved, opened the viewer's own personal ``report.pdf`` (found by name in the
viewer's view) for whoever held the URL: from a browser's history, or pasted to a colleague
as the shared report. The fields are signed as a JSON list, each apart: joined by newlines,
a target "a" in page "b\\nc" was the target "a\\nb" in page "c".
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

from ..dashboard.attachment_markup import ATTACHMENT_ROUTE
from ..scopes import Authenticator

TICKET_TTL_S = 3600            # a ticket lasts at least this long after its page was asked for
TICKET_BUCKET_S = 600          # and ends at the end of a bucket this long: at most this longer
_FIELDS = ("target", "page", "file", "expires", "ticket")
_TIME_DIGITS = 12              # an expiry of more digits is no time a ticket is signed for


def _message(target: str, page: str, file: str, expires: int) -> str:
    return json.dumps(["attachment", target, page, file, expires])


def raw_relative(path: Path, raw_dir: Path) -> str:
    """The path of a served file (as ``attachment_file`` resolved it) from raw/ (resolved, as
    ``Settings.raw_dir`` is), as signed."""
    return path.relative_to(raw_dir).as_posix()


def ticket_query(auth: Authenticator, authorization: str | None, target: str, page: str,
                 file: str, now: float | None = None) -> str:
    """What the attachment route URL of (``target``, ``page``) adds for a caller of this
    Authorization header, the embed finding ``file`` (from raw/) now: ``&file=…&expires=…
    &ticket=…``, or "" when the server needs no token."""
    expires = ticket_expiry(time.time() if now is None else now)
    signature = auth.sign(authorization, _message(target, page, file, expires))
    return "" if signature is None else \
        f"&file={quote(file, safe='')}&expires={expires}&ticket={quote(signature)}"


def ticket_expiry(now: float) -> int:
    """When a ticket signed at ``now`` expires: the first bucket end ``TICKET_TTL_S`` or more
    after it, the same for every ticket signed within one bucket (``TICKET_BUCKET_S``)."""
    return -(-(int(now) + TICKET_TTL_S) // TICKET_BUCKET_S) * TICKET_BUCKET_S


def opens_signed_file(path: Path, raw_dir: Path, ticket: str | None, file: str | None) -> bool:
    """Whether a request may be served ``path``: one without a ticket, any file its caller
    sees; one with a ticket (the gate checked it was signed with ``file``), that file only."""
    return ticket is None or (file is not None and raw_relative(path, raw_dir) == file)


def _is_time(text: str) -> bool:
    # a Unix time in digits; a few thousand of them were a 500 (int()'s digit limit)
    return text.isascii() and text.isdigit() and len(text) <= _TIME_DIGITS


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
    if "ticket" not in given or "target" not in given or "file" not in given or \
            not _is_time(given.get("expires", "")):
        return None
    expires = int(given["expires"])
    clock = time.time() if now is None else now
    if not clock <= expires <= clock + TICKET_TTL_S + TICKET_BUCKET_S + 60:
        return None
    return auth.redeem(given["ticket"], _message(given["target"], given.get("page", ""),
                                                 given["file"], expires))


__all__ = ["TICKET_BUCKET_S", "TICKET_TTL_S", "opens_signed_file", "raw_relative",
           "ticket_authorization", "ticket_expiry", "ticket_query"]
