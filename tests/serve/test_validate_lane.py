"""A large POST /validate cannot stall the searches: it runs on the slow lane, not the lane
the searches run on, and stops working at its budget (a 504 whose worker keeps running held
that lane's one worker for minutes). REST in-process, as tests/serve/test_lanes.py does."""

import asyncio
import time

import httpx

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
BUDGET_S = 3.0
SEARCH_BOUND_S = 1.0      # a search waiting for the validation would wait for most of BUDGET_S


def test_a_large_validation_does_not_delay_searches_and_stops_at_its_budget(workspace):
    mg = Mindgraph(settings_from_dict({"serve": {
        "request_timeout_s": BUDGET_S, "max_body_bytes": 9_000_000,
        "validate_max_claims": 0, "validate_max_evidence_sentences": 0}}, base_dir=workspace))
    app = create_app(mg)
    lanes = app.state.lanes
    # 8 evidence texts of ~1 MB, ~300,000 sentences: reading them all takes ~15 s here
    evidence = [" ".join(f"Alpha beta runs {n * 100000 + i}." for i in range(38000))
                for n in range(8)]
    text = "\n".join(f"- Alpha beta runs {i}." for i in range(2000))

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=LOCAL,
                                     timeout=60) as http:
            assert (await http.get("/search", params={"q": "trunks"})).status_code == 200
            started = time.monotonic()
            validation = asyncio.create_task(
                http.post("/validate", json={"text": text, "evidence": evidence}))
            while lanes.slow.pending == 0 and not validation.done():
                await asyncio.sleep(0.01)
            searches = []
            while not validation.done():
                began = time.monotonic()
                answer = await http.get("/search", params={"q": "trunks"})
                searches.append((answer.status_code, time.monotonic() - began))
                await asyncio.sleep(0.05)
            answered = time.monotonic()
            while lanes.slow.pending:           # the worker has stopped when this is 0
                await asyncio.sleep(0.01)
            return (await validation, answered - started, time.monotonic() - answered,
                    searches)

    validation, took, stopped_after, searches = asyncio.run(scenario())
    assert validation.status_code == 504, validation.text
    assert "serve.request_timeout_s" in validation.json()["detail"]
    assert BUDGET_S - 0.2 < took < BUDGET_S + 3
    assert len(searches) >= 3
    assert all(status == 200 for status, _ in searches), searches
    assert max(seconds for _, seconds in searches) < SEARCH_BOUND_S, searches
    # the check honoured the budget: the worker stopped, it did not read the rest
    assert stopped_after < 1.5, stopped_after


def test_a_validation_on_the_slow_lane_still_answers(workspace):
    app = create_app(Mindgraph(settings_from_dict({}, base_dir=workspace)))

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url=LOCAL) as http:
            return await http.post("/validate", json={
                "text": "Fold the trunks. Trunks fly.", "evidence": ["Fold the trunks."]})

    answer = asyncio.run(scenario())
    assert answer.status_code == 200
    assert [c["verdict"] for c in answer.json()["checks"]] == ["supported", "unsupported"]
