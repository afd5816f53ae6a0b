"""Fairness between identities: one token flooding a real `mindgraph serve` with searches
gets 429 past its share (``serve.requests_per_identity``), while another token's searches
are all answered — first come first served, the flood's queue made every other identity's
request wait past its budget (504)."""

from __future__ import annotations

import asyncio
import collections
import os
import subprocess
import sys
import threading
import time

import httpx
from live_server import flood, free_port, stop, wait_healthy

TOKENS = {"flooder": "f" * 40, "quiet": "q" * 40}
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
serve: {request_timeout_s: 1.5}    # requests_per_identity: 16, the default
scopes:
  identities:
    - {name: flooder, tenant: acme, agent: flooder, token_env: TOKEN_FLOODER}
    - {name: quiet, tenant: acme, agent: quiet, token_env: TOKEN_QUIET}
"""
FLOOD_CONNECTIONS = 120


def many_pages(wiki, count=400):
    """Enough pages that one search takes a few milliseconds."""
    words = "trunks zeppelins packing airships harbour cargo ballast mooring".split()
    for i in range(count):
        body = " ".join(words[(i + j) % len(words)] + str(j % 17) for j in range(300))
        (wiki / f"Page {i}.md").write_text(f"# Page {i}\n\n{body}\n\n## More\n\n{body}\n")


async def flood_and_ask(base: str, seconds: float
                        ) -> tuple[collections.Counter, list[int], list[bytes]]:
    """The flooder's statuses (and an answer of each) and the quiet agent's statuses, the quiet
    one asking one search at a time while ``FLOOD_CONNECTIONS`` requests of the flooder are
    in flight."""
    done = asyncio.Event()
    flooding = asyncio.create_task(flood(
        base, "/smart_search?q=trunks+cargo", {"Authorization": f"Bearer {TOKENS['flooder']}"},
        FLOOD_CONNECTIONS, done))
    quiet: list[int] = []
    async with httpx.AsyncClient(base_url=base, timeout=30,
                                 headers={"Authorization": f"Bearer {TOKENS['quiet']}"}) as agent:
        await asyncio.sleep(1.0)                # the flood is under way
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            answer = await agent.get("/smart_search", params={"q": "airships ballast"})
            quiet.append(answer.status_code)
    done.set()
    statuses, samples = await flooding
    return statuses, quiet, samples


def test_a_flooding_token_gets_429_and_another_token_is_still_answered(tmp_path):
    (tmp_path / "wiki").mkdir()
    many_pages(tmp_path / "wiki")
    (tmp_path / "mindgraph.yml").write_text(CONFIG)
    port = free_port()
    env = {**os.environ, "MINDGRAPH_API_TOKEN": "", "TOKEN_FLOODER": TOKENS["flooder"],
           "TOKEN_QUIET": TOKENS["quiet"]}
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(tmp_path),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(server, base)
        warm = httpx.get(f"{base}/smart_search", params={"q": "trunks"}, timeout=30,
                         headers={"Authorization": f"Bearer {TOKENS['quiet']}"})
        assert warm.status_code == 200, warm.text
        flooded, quiet, samples = asyncio.run(flood_and_ask(base, seconds=4.0))
    finally:
        stop(server)
    assert quiet and set(quiet) == {200}, (sorted(set(quiet)), flooded)
    assert flooded["429"] and not flooded["504"], flooded
    assert flooded["200"]                   # its share is still served
    refused = next(s for s in samples if s.startswith(b"HTTP/1.1 429"))
    assert b"\r\nretry-after: 1\r\n" in refused
    assert b"serve.requests_per_identity" in refused

def test_a_lane_takes_each_caller_in_turn():
    """Three calls of one caller queued before one of another while the lane is busy: the
    other's runs second, not fourth."""
    from mindgraph.serve.lanes import Lane

    lane = Lane("query", 1)
    ran: list[str] = []
    running, release = threading.Event(), threading.Event()
    gate = lane.submit(lambda: (running.set(), release.wait(5)), who="a")
    assert running.wait(5)
    calls = [lane.submit(lambda n=n: ran.append(n), who=who)
             for n, who in (("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"))]
    release.set()
    for call in [gate, *calls]:
        call.result(5)
    lane.close()
    assert ran == ["a1", "b1", "a2", "a3"]


SHARED = """\
embedding: {provider: hashing, dimension: 64}
serve: {share_per_identity: 1, slow_workers: 1, slow_queue: 0}
scopes:
  identities:
    - {name: flooder, tenant: acme, agent: flooder, token_env: TOKEN_FLOODER}
    - {name: quiet, tenant: acme, agent: quiet, token_env: TOKEN_QUIET}
"""


class Held:
    """A timeline that blocks until released, counting how many run at once."""

    def __init__(self, timeline):
        self.timeline, self.release = timeline, threading.Event()
        self.running = self.most = 0
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
        return self.timeline(*args, **kwargs)


def held_timelines(workspace, monkeypatch, config: str):
    """The two identities' server over ``config``, its timelines held (as long as we like):
    the Held probe, the open Mindgraph (close it) and a client factory per identity."""
    import mindgraph.timeline.build as timelines
    from mindgraph.core import Mindgraph
    from mindgraph.serve.rest import create_app

    (workspace / "mindgraph.yml").write_text(config)
    monkeypatch.setenv("TOKEN_FLOODER", TOKENS["flooder"])
    monkeypatch.setenv("TOKEN_QUIET", TOKENS["quiet"])
    held = Held(timelines.build_timeline)
    monkeypatch.setattr(timelines, "build_timeline", held)
    mg = Mindgraph.open(workspace)
    app = create_app(mg)

    def as_(name):
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://127.0.0.1:8765", timeout=30,
                                 headers={"Authorization": f"Bearer {TOKENS[name]}"})

    return held, mg, as_


async def held_timeline(client, held) -> "asyncio.Task":
    """``client``'s timeline request, once the server runs it (held until released)."""
    first = asyncio.create_task(client.get("/timeline", params={"concept": "trunks"}))
    while not held.running:
        assert not first.done(), (await first).text
        await asyncio.sleep(0.01)
    return first


def second_timeline_while_first_held(workspace, monkeypatch, quiet_asks: bool):
    """The flooder's timeline held on the slow lane (one worker, no queue); then, the quiet
    agent having searched or not, a second timeline of the flooder: its status once the first
    is released, whether it was still waiting before, and the timelines that ran at once."""
    held, mg, as_ = held_timelines(workspace, monkeypatch, SHARED)

    async def scenario():
        async with as_("flooder") as flooder, as_("quiet") as quiet:
            first = await held_timeline(flooder, held)
            if quiet_asks:
                assert (await quiet.get("/search", params={"q": "trunks"})).status_code == 200
            second = asyncio.create_task(flooder.get("/timeline", params={"concept": "trunks"}))
            await asyncio.sleep(0.3)
            waited = not second.done()
            if quiet_asks:      # the quiet agent is still served meanwhile
                assert (await quiet.get("/search", params={"q": "trunks"})).status_code == 200
            held.release.set()
            return (await first).status_code, (await second).status_code, waited

    try:
        first, second, waited = asyncio.run(scenario())
    finally:
        held.release.set()
        mg.close()
    assert first == 200
    return second, waited, held.most


def test_while_another_identity_is_served_a_flooders_next_request_waits_its_turn(
        workspace, monkeypatch):
    """share_per_identity 1: with the quiet agent around, the flooder's second timeline waits
    (admitted) until its first is answered, then runs — not refused by the full slow lane."""
    second, waited, most = second_timeline_while_first_held(workspace, monkeypatch, True)
    assert waited and second == 200 and most == 1


def test_an_identity_alone_has_all_its_requests_worked_on_at_once(workspace, monkeypatch):
    """Without another identity around, the flooder's second timeline goes straight to the
    slow lane, which is full: 503 at once (no share held it back)."""
    second, waited, _ = second_timeline_while_first_held(workspace, monkeypatch, False)
    assert second == 503 and not waited


def test_a_full_slow_lane_still_queues_an_identity_with_nothing_on_it(workspace, monkeypatch):
    """The slow lane (one worker, no queue) is full with the flooder's timeline: its next one
    is 503 at once, but the quiet agent's first one is queued and answered — one identity
    cannot fill the lane for the others."""
    held, mg, as_ = held_timelines(workspace, monkeypatch, SHARED.replace(
        "share_per_identity: 1", "share_per_identity: 0"))

    async def scenario():
        async with as_("flooder") as flooder, as_("quiet") as quiet:
            first = await held_timeline(flooder, held)
            again = await flooder.get("/timeline", params={"concept": "trunks"})
            theirs = asyncio.create_task(quiet.get("/timeline", params={"concept": "trunks"}))
            await asyncio.sleep(0.3)
            queued = not theirs.done()
            held.release.set()
            return (await first).status_code, again, (await theirs).status_code, queued

    try:
        first, again, theirs, queued = asyncio.run(scenario())
    finally:
        held.release.set()
        mg.close()
    assert first == 200 and again.status_code == 503 and "serve.slow_workers" in again.text
    assert queued and theirs == 200 and held.most == 1
