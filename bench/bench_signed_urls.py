"""What checking a made-up attachment ticket costs the token gate, by number of identities
(scopes/auth.py ``Authenticator.redeem``; the gate runs it on the event loop for any request
to /dashboard/attachment with no Authorization header).

    python bench/bench_signed_urls.py
    python bench/bench_signed_urls.py --identities 1 100 1000 --calls 2000

Side by side in one run: trying every token of the server, one HMAC each (how redeem found
the signer before), and the key id the signature leads with (now: one HMAC); a wrong bearer
token's refusal beside them for scale. Reported: the median of 5 batches of --calls, in
microseconds per call.

End to end (not timed here: it needs a server of 1,000 identities): 20 connections sending
made-up tickets with no token made another caller's GET /dashboard/graph take 361 ms (median)
where a flood of wrong bearer tokens left it at 37 ms; with the key id, 22 ms against 23.
"""

from __future__ import annotations

import argparse
import hmac
import statistics
import time

from mindgraph.errors import Unauthenticated
from mindgraph.scopes import Authenticator, Identity, Scopes
from mindgraph.scopes.auth import _signature

MESSAGE = '["attachment", "a.png", "Note.md", "pics/a.png", 1796650000]'


def _authenticator(count: int) -> Authenticator:
    identities = tuple(Identity(f"a{i}", "t", f"a{i}", frozenset({"x"})) for i in range(count))
    environ = {f"T_{i}": f"token-{i:05d}-" + "q" * 32 for i in range(count)}
    return Authenticator(Scopes(identities, {f"a{i}": f"T_{i}" for i in range(count)}),
                         environ=environ)


def _every_token(auth: Authenticator, signature: str, message: str) -> bytes | None:
    found = None
    given = signature.encode()
    for token, _identity in auth._tokens:
        if hmac.compare_digest(given, _signature(token, message).encode()):
            found = b"Bearer " + token
    return found


def _wrong_bearer(auth: Authenticator) -> None:
    try:
        auth.identity_for("Bearer wrong-token-" + "x" * 30)
    except Unauthenticated:
        pass


def _per_call_us(call, calls: int) -> float:
    batches = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            call()
        batches.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--identities", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    forged = "0" * 16 + "." + "0" * 64
    for count in args.identities:
        auth = _authenticator(count)
        before = _per_call_us(lambda: _every_token(auth, forged, MESSAGE), args.calls)
        now = _per_call_us(lambda: auth.redeem(forged, MESSAGE), args.calls)
        bearer = _per_call_us(lambda: _wrong_bearer(auth), args.calls)
        print(f"{count:>5} identities: every token {before:9.1f} us, key id {now:6.1f} us, "
              f"a wrong bearer token {bearer:6.1f} us")


if __name__ == "__main__":
    main()
