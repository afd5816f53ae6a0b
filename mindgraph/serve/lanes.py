"""Lanes: small pools of daemon threads that run a server's blocking work, each call within a
time budget, so one kind of request cannot hold the server.

A lane has a fixed number of workers and, optionally, a bound on the calls waiting for one: a
call that finds the lane full fails at once (``LaneBusy``, a 503) — unless its caller has no
call on the lane yet, so one identity cannot fill it for the others — and a call not finished
within its budget fails (``LaneTimeout``, a 504) — a queued call is then dropped, a running
one finishes in the background on its worker. Slow requests (timeline, coverage, ...) get a
lane of their own, so however many of them arrive, the searches keep their worker.

Why not ``ThreadPoolExecutor``: its threads are joined when the interpreter exits, so one call
stuck in a read (a FIFO, a dead network mount) kept the process alive after SIGTERM. A lane's
threads are daemons, and closing a lane waits for them only briefly.

Fair between callers: each call belongs to a caller (the identity of its bearer token: the
REST ``TokenGate`` names it in ``CALLER``, MCP passes it), and a lane's workers take the
waiting calls one caller at a time in turn, not in arrival order — so one token that floods
a lane delays another's next call by one call of its own, not by its whole queue (first come
first served, every other identity's searches waited behind the flood and got 504). How
many requests one identity may have in flight at all is the ``TokenGate``'s business
(``serve.requests_per_identity``, 429 past it).

A call runs in a copy of the context it was submitted from (as ``asyncio.to_thread``
does): what the request set there — whom its LLM calls are charged to (quotas/) — holds on
the worker too.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..config import ServeSettings


#: the caller a call submitted from this context belongs to ("": anonymous or the only one)
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("mindgraph_lane_caller",
                                                            default="")


class LaneBusy(Exception):
    """The lane's workers are busy and its queue is full."""


class LaneTimeout(Exception):
    """A call did not finish within its budget."""


class _Turns:
    """The calls waiting for a lane's workers: one queue per caller, the callers served in
    turn (a caller with calls left goes to the back after each one). ``get`` returns None
    once the turns are closed and empty."""

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._waiting: dict[str, deque[Any]] = {}
        self._order: deque[str] = deque()       # callers with calls waiting, next first
        self._closed = False

    def put(self, who: str, item: Any) -> None:
        with self._ready:
            calls = self._waiting.get(who)
            if calls is None:
                calls = self._waiting[who] = deque()
                self._order.append(who)
            calls.append(item)
            self._ready.notify()

    def get(self) -> Any:
        with self._ready:
            while not self._order:
                if self._closed:
                    return None
                self._ready.wait()
            who = self._order.popleft()
            calls = self._waiting[who]
            item = calls.popleft()
            if calls:
                self._order.append(who)
            else:
                del self._waiting[who]
            return item

    def close(self) -> None:
        """Let the workers end once the calls queued now have been taken."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()


class Lane:
    """``workers`` daemon threads taking calls from each caller in turn; at most
    ``max_waiting`` calls wait (None: no bound)."""

    def __init__(self, name: str, workers: int, max_waiting: int | None = None,
                 busy_hint: str = ""):
        self.name, self.workers, self.max_waiting = name, workers, max_waiting
        self._busy_hint = busy_hint
        self._calls = _Turns()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._pending = 0               # queued or running
        self._pending_of: Counter[str] = Counter()      # the same, per caller

    @property
    def pending(self) -> int:
        """Calls queued or running."""
        return self._pending

    def submit(self, fn: Callable[[], Any],
               on_dropped: Callable[[], Any] | None = None, who: str | None = None) -> Future:
        """Queue ``fn()`` as a call of ``who`` (default: ``CALLER`` of this context), to run
        in a copy of this context; LaneBusy when the lane is full. ``on_dropped`` runs if
        the call is cancelled before it starts."""
        who = CALLER.get() if who is None else who
        fn = functools.partial(contextvars.copy_context().run, fn)
        with self._lock:
            # full: refused, unless the caller has nothing on the lane yet — one identity
            # filling it (16 in flight against 17 places) must not shut the others out
            if self.max_waiting is not None and self._pending_of[who] and \
                    self._pending >= self.workers + self.max_waiting:
                raise LaneBusy(f"The server is busy: {self._pending} {self.name} requests are "
                               f"running or waiting. Retry in a moment{self._busy_hint}.")
            self._pending += 1
            self._pending_of[who] += 1
            while len(self._threads) < self.workers:   # again after close(): apps restart
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"mindgraph-{self.name}-{len(self._threads)}")
                thread.start()
                self._threads.append(thread)
            future: Future = Future()
            # once: result, error or cancel while queued
            future.add_done_callback(functools.partial(self._done, who))
            if on_dropped is not None:
                future.add_done_callback(lambda f: f.cancelled() and on_dropped())
            self._calls.put(who, (future, fn))
        return future

    async def run(self, fn: Callable[[], Any], timeout_s: float, what: str = "",
                  on_dropped: Callable[[], Any] | None = None, who: str | None = None) -> Any:
        """``fn()`` on a worker as a call of ``who`` (see ``submit``); LaneTimeout after
        ``timeout_s`` (``what`` names the budget)."""
        future = self.submit(fn, on_dropped, who)
        try:
            # cancelling the wrapper cancels ``future`` when it has not started yet
            return await asyncio.wait_for(asyncio.wrap_future(future), max(timeout_s, 0.0))
        except asyncio.TimeoutError:
            raise LaneTimeout(f"The request did not finish within {timeout_s:g} s"
                              f"{f' ({what})' if what else ''} and was abandoned. Ask for less "
                              f"(a smaller limit or folder), or raise the budget.") from None

    def close(self, wait_s: float = 1.0) -> None:
        """Stop the workers once the calls queued before have run, waiting at most ``wait_s``
        for them (a worker stuck in a call is left behind; it dies with the process)."""
        with self._lock:
            threads, self._threads = self._threads, []
            calls, self._calls = self._calls, _Turns()
        calls.close()
        deadline = time.monotonic() + wait_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _done(self, who: str, _: Future) -> None:
        with self._lock:
            self._pending -= 1
            self._pending_of[who] -= 1
            if not self._pending_of[who]:
                del self._pending_of[who]

    def _work(self) -> None:
        calls = self._calls
        while True:
            item = calls.get()
            if item is None:
                return
            future, fn = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as exc:  # noqa: BLE001 - it belongs to the caller
                future.set_exception(exc)
            else:
                future.set_result(result)
            del future, fn, item


class ServerLanes:
    """The lanes of one server.

    - ``core``: one worker, each caller in turn: queries on the warm core (it answers one at
      a time under its lock anyway; more threads only fight for it).
    - ``prepare``: a thread per CPU: work before the core (embedding a query) that needs no
      lock, so one request's model inference overlaps the next one's queued Python work.
    - ``slow``: ``serve.slow_workers`` workers, ``serve.slow_queue`` waiting: requests that
      read many files or walk the whole graph.
    - ``admin``: one worker for reindex (its callers are told 409 when one runs) and the
      documents API's writes.
    """

    def __init__(self, serve: ServeSettings):
        self.serve = serve
        self.core = Lane("query", 1)
        self.prepare = Lane("prepare", os.cpu_count() or 2)
        self.slow = Lane("slow", serve.slow_workers, serve.slow_queue,
                         " (or raise serve.slow_workers / serve.slow_queue)")
        self.admin = Lane("reindex", 1)

    def close(self, wait_s: float = 1.0) -> None:
        """Stop every lane (see ``Lane.close``)."""
        for lane in (self.core, self.prepare, self.slow, self.admin):
            lane.close(wait_s)


__all__ = ["CALLER", "Lane", "LaneBusy", "LaneTimeout", "ServerLanes"]
