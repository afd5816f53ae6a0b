"""Shares: how many of an identity's admitted requests are worked on at once while other
identities are being served.

``serve.requests_per_identity`` (16) bounds what one identity may have in flight; the lanes
take each identity's calls in turn. Still, sixteen searches of a flooder in progress at once
meant sixteen requests' parsing, routing and answers queued on the event loop and fighting the
lanes' workers for the interpreter lock, ahead of any other agent's request: a quiet agent's
search took 38 ms at the median instead of 2.3. So while another identity has a request in
flight, or had one within the last ``RECENT_S``, an identity works on at most ``share`` of its
requests at once; its others wait here, admitted (an asyncio future: no thread, no work), and
start in order as its own finish. Alone, an identity works on all of them.

The share trades the flooder's throughput for the others' latency: the fewer of its requests
at work, the more often the query lane waits for its next one to be parsed and prepared
(`bench/bench_fair_lanes.py --share N`; figures in the README, "Identities are served
fairly"). The default, 4, about halved a quiet agent's flooded p50 and p95 under load for a
few percent of the flooder's answers.

A request counts from its arrival here until its answer starts (its status line): a stream
(an attachment, a server-sent answer) still counts against ``requests_per_identity`` until its
last byte, but not against the share, so a long download does not hold its identity's searches.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque

RECENT_S = 1.0      # an identity whose last request ended this long ago no longer counts


class Shares:
    """Per identity: requests being worked on, requests waiting for their turn, and when its
    last request ended (the event loop's own: no lock)."""

    def __init__(self, share: int):
        self.share = share                          # 0: no share, everything at once
        self._working: Counter[str] = Counter()
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}
        self._last_seen: dict[str, float] = {}      # identity → when its last request ended

    def working(self, who: str) -> int:
        """How many of ``who``'s requests are being worked on."""
        return self._working[who]

    def waiting(self, who: str) -> int:
        """How many of ``who``'s requests wait for their turn."""
        return len(self._waiting.get(who, ()))

    async def start(self, who: str) -> None:
        """Return once ``who`` may work on one more request (at once when it has fewer than
        its share working, or no other identity is being served)."""
        self._last_seen.pop(who, None)
        if not self._waiting.get(who) and self._may_start(who):
            self._working[who] += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(who, deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():   # its turn came as it was cancelled
                self.finish(who)
            else:
                self._forget(who, turn)
            raise

    def finish(self, who: str) -> None:
        """One of ``who``'s requests is no longer worked on: its next one starts."""
        self._working[who] -= 1
        if not self._working[who]:
            del self._working[who]
            self._last_seen[who] = time.monotonic()
        calls = self._waiting.get(who)
        while calls and self._may_start(who):
            self._working[who] += 1
            calls.popleft().set_result(None)
        if calls is not None and not calls:
            del self._waiting[who]

    def _may_start(self, who: str) -> bool:
        return not self.share or self._working[who] < self.share or not self._others(who)

    def _others(self, who: str) -> bool:
        """Is another identity being served, or was it within the last ``RECENT_S``?"""
        if any(name != who for name in self._working) or \
                any(name != who for name in self._waiting):
            return True
        now = time.monotonic()
        for name, ended in list(self._last_seen.items()):
            if now - ended > RECENT_S:
                del self._last_seen[name]
            elif name != who:
                return True
        return False

    def _forget(self, who: str, turn: asyncio.Future[None]) -> None:
        calls = self._waiting.get(who)
        if calls is not None and turn in calls:
            calls.remove(turn)
            if not calls:
                del self._waiting[who]


__all__ = ["RECENT_S", "Shares"]
