"""Time budgets and lanes: a slow or hung request cannot hold the server, slow endpoints cannot
starve the fast ones, and a server whose wiki vanished says so (REST in-process)."""

import asyncio
import shutil
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.lanes import Lane, LaneBusy, LaneTimeout
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"


def mindgraph(workspace, **serve):
    return Mindgraph(settings_from_dict({"serve": serve}, base_dir=workspace))


class Gate:
    """A fake slow call: blocks until released, counting how many run at once, then calls
    ``then`` (the real thing) if given."""

    def __init__(self, then=None):
        self.then = then
        self.release = threading.Event()
        self.running = 0
        self.most = 0
        self._lock = threading.Lock()

    def __call__(self, *args, **kwargs):
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            self.release.wait(30)
        finally:
            with self._lock:
                self.running -= 1
        return self.then(*args, **kwargs) if self.then else None


async def _get(http, path, params, timeout=10):
    return await asyncio.wait_for(http.get(path, params=params), timeout)


def while_timelines_held(workspace, workers, queue, during):
    """Fill the slow lane (``workers`` timelines running and held, ``queue`` waiting), await
    ``during(http)`` meanwhile, then release them: (its result, the held timelines' responses,
    the gate that held them)."""
    mg = mindgraph(workspace, slow_workers=workers, slow_queue=queue)
    slow = Gate(then=mg.timeline)
    mg.timeline = slow                          # a timeline that takes as long as we like
    app = create_app(mg)

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url=LOCAL) as http:
            waiting = [asyncio.create_task(_get(http, "/timeline", {"concept": "trunks"}, 30))
                       for _ in range(workers + queue)]
            while slow.running < workers:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
            assert slow.running == workers           # the rest wait
            result = await during(http)
            slow.release.set()
            return result, await asyncio.gather(*waiting)

    try:
        result, held = asyncio.run(scenario())
    finally:
        slow.release.set()
    return result, held, slow


def test_slow_requests_get_their_own_bounded_lane(workspace):
    async def during(http):                      # 2 run, 3 wait
        extra = await _get(http, "/timeline", {"concept": "trunks"})
        started = time.monotonic()
        search = await _get(http, "/search", {"q": "trunks"})
        return extra, search, time.monotonic() - started

    (extra, search, fast), slowest, slow = while_timelines_held(workspace, 2, 3, during)
    assert extra.status_code == 503 and "serve.slow_workers" in extra.json()["detail"]
    assert extra.headers["retry-after"] == "1"
    assert search.status_code == 200 and search.json()["count"] == 2 and fast < 5
    assert slow.most == 2
    assert [r.status_code for r in slowest] != [503] * 5


def test_a_hung_coverage_is_504_and_holds_no_other_query(workspace, monkeypatch):
    hung = Gate()
    monkeypatch.setattr("mindgraph.coverage.units.discover_units", hung)   # a read that blocks
    app = create_app(mindgraph(workspace, request_timeout_s=1))

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url=LOCAL) as http:
            coverage = asyncio.create_task(_get(http, "/coverage", {"codebase": "code"}))
            while not hung.running:
                await asyncio.sleep(0.01)
            search = await _get(http, "/search", {"q": "trunks"}, timeout=5)
            page = await _get(http, "/page", {"name": "Home"}, timeout=5)
            return await coverage, search, page

    try:
        coverage, search, page = asyncio.run(scenario())
    finally:
        hung.release.set()
    assert coverage.status_code == 504
    assert "serve.request_timeout_s" in coverage.json()["detail"]
    assert search.status_code == 200 and page.status_code == 200


def test_a_query_waiting_past_its_budget_is_504_and_never_runs():
    lane = Lane("query", 1)
    hung, ran = Gate(), []

    async def scenario():
        first = asyncio.ensure_future(lane.run(hung, 5))
        while not hung.running:
            await asyncio.sleep(0.01)
        with pytest.raises(LaneTimeout, match="within 0.2 s"):
            await lane.run(lambda: ran.append(1), 0.2)
        hung.release.set()
        await first

    asyncio.run(scenario())
    time.sleep(0.1)
    assert ran == [] and lane.pending == 0


def test_a_full_lane_is_busy_at_once_and_frees_its_slots():
    lane = Lane("slow", 1, max_waiting=1, busy_hint=" (raise it)")
    hung = Gate()
    lane.submit(hung)
    waiting = lane.submit(lambda: "done")
    with pytest.raises(LaneBusy, match=r"2 slow requests.*\(raise it\)"):
        lane.submit(lambda: None)
    waiting.cancel()                    # its caller gave up: the slot is free again
    assert lane.pending == 1
    assert lane.submit(lambda: "next") is not None
    hung.release.set()


def test_closing_a_lane_does_not_wait_for_a_stuck_worker():
    lane = Lane("slow", 1)
    hung = Gate()
    lane.submit(hung)
    while not hung.running:
        time.sleep(0.01)
    started = time.monotonic()
    lane.close(wait_s=0.2)
    assert time.monotonic() - started < 2
    stuck = [t for t in threading.enumerate() if t.name.startswith("mindgraph-slow")]
    assert stuck and all(t.daemon for t in stuck)       # it cannot keep the process alive
    hung.release.set()


def test_a_reindex_past_its_budget_is_504_and_still_holds_the_409(workspace, monkeypatch):
    hung = Gate()
    mg = mindgraph(workspace, reindex_timeout_s=0.5)
    monkeypatch.setattr(mg, "embed", hung)
    client = TestClient(create_app(mg), base_url=LOCAL)
    try:
        late = client.post("/reindex")
        assert late.status_code == 504 and "goes on in the background" in late.json()["detail"]
        assert client.post("/reindex").status_code == 409
    finally:
        hung.release.set()
    deadline = time.monotonic() + 5
    while hung.running and time.monotonic() < deadline:
        time.sleep(0.02)
    monkeypatch.setattr(mg, "embed", lambda **kw: (_Report(), None))
    assert client.post("/reindex").status_code == 200


class _Report:
    def as_dict(self):
        return {"embedded": 0}


def test_a_vanished_wiki_is_503_naming_the_folder(workspace):
    client = TestClient(create_app(mindgraph(workspace)), base_url=LOCAL)
    assert client.get("/health").json()["pages"] == 2
    shutil.rmtree(workspace / "wiki")
    for path, params in (("/health", {}), ("/search", {"q": "trunks"}), ("/stats", {})):
        gone = client.get(path, params=params)
        assert gone.status_code == 503, (path, gone.text)
        # named relative to the workspace: an agent is not shown the server's folders
        assert "Wiki folder wiki does not exist" in gone.json()["detail"]
    (workspace / "wiki").mkdir()
    (workspace / "wiki" / "Back.md").write_text("# Back\n\nTrunks again.\n")
    assert client.get("/health").json()["pages"] == 1


def test_a_backwards_timeline_window_is_400_at_once_while_the_slow_lane_is_full(workspace):
    """since > until was found only after waiting for the slow lane and reading every note
    (a full lane answered 503 instead): it is refused before either."""
    async def during(http):                      # 1 runs, 1 waits: the lane is full
        started = time.monotonic()
        backwards = await _get(http, "/timeline", {"concept": "trunks",
                                                   "since": "2025-01-01",
                                                   "until": "2020-01-01"})
        return backwards, time.monotonic() - started

    (backwards, took), held, slow = while_timelines_held(workspace, 1, 1, during)
    assert backwards.status_code == 400, backwards.text
    assert backwards.json()["detail"] == "since (2025-01-01) is after until (2020-01-01); " \
                                         "swap them."
    assert took < 5 and slow.most == 1               # never queued behind the held ones
    assert [r.status_code for r in held] == [200, 200]
