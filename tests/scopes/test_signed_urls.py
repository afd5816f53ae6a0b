"""A signed URL (``Authenticator.sign``/``redeem``, the dashboard's attachment tickets) is
checked against the one token that signed it, whatever the number of identities.

``redeem`` tried every token of the server, one HMAC each, for any request to the attachment
route with no Authorization header: with 1,000 identities a made-up ticket cost the event loop
about 4 ms, against 0.1 ms for a wrong bearer token, and 20 connections sending them with no
token made another caller's GET /dashboard/graph take 361 ms instead of 37 (mindgraph serve on
2 cores; ``python bench/bench_signed_urls.py`` measures redeem alone). A ticket names its
token by a key id (a digest of the token, no secret) now: one HMAC."""

from __future__ import annotations

import pytest

from mindgraph.scopes import Authenticator, Identity, Scopes
from mindgraph.scopes import auth as auth_module

COUNT = 1000


def _token(i: int) -> str:
    return f"token-{i:04d}-" + "q" * 32


@pytest.fixture
def many():
    identities = tuple(Identity(f"a{i}", "t", f"a{i}", frozenset({"x"})) for i in range(COUNT))
    scopes = Scopes(identities, {f"a{i}": f"MGT_{i}" for i in range(COUNT)})
    return Authenticator(scopes, environ={f"MGT_{i}": _token(i) for i in range(COUNT)})


def test_a_signature_is_checked_against_its_own_token_alone(many, monkeypatch):
    made: list[bytes] = []
    real = auth_module._signature
    monkeypatch.setattr(auth_module, "_signature",
                        lambda token, message: made.append(token) or real(token, message))
    signed = many.sign(f"Bearer {_token(500)}", "a message")
    made.clear()
    assert many.redeem(signed, "a message") == f"Bearer {_token(500)}".encode()
    assert len(made) == 1
    for forged in ("0" * 64, "0" * 200, "", signed[:-1] + ("0" if signed[-1] != "0" else "1")):
        made.clear()
        assert many.redeem(forged, "a message") is None
        assert len(made) <= 1, forged


def test_a_signature_under_another_tokens_key_id_is_refused(many):
    signed = many.sign(f"Bearer {_token(1)}", "a message")
    other = many.sign(f"Bearer {_token(2)}", "a message")
    key_id, _, signature = signed.partition(".")
    other_id = other.partition(".")[0]
    assert key_id != other_id
    assert many.redeem(f"{other_id}.{signature}", "a message") is None
    assert many.redeem(signed, "another message") is None
    assert len(signed) <= 128               # the route's max_length for a ticket
