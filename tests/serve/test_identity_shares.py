"""The share is held until an answer starts, not until its last byte: a stream of one identity
(an attachment, a long answer) does not hold up its identity's next request while another
identity is served (the ``TokenGate`` of a real workspace's identities, around an app that
streams)."""

from __future__ import annotations

import asyncio

import httpx

from mindgraph.core import Mindgraph
from mindgraph.scopes import Authenticator
from mindgraph.serve.token_gate import TokenGate


TOKENS = {"flooder": "f" * 40, "quiet": "q" * 40}
SHARED = """\
embedding: {provider: hashing, dimension: 64}
serve: {share_per_identity: 1}
scopes:
  identities:
    - {name: flooder, tenant: acme, agent: flooder, token_env: TOKEN_FLOODER}
    - {name: quiet, tenant: acme, agent: quiet, token_env: TOKEN_QUIET}
"""


def streaming_app(body_may_go: asyncio.Event):
    """/stream sends its status line at once and its body when ``body_may_go`` is set; any
    other path answers at once."""

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if scope["path"] == "/stream":
            await body_may_go.wait()
        await send({"type": "http.response.body", "body": b"done"})

    return app


def test_a_started_stream_gives_its_share_back(workspace, monkeypatch):
    (workspace / "mindgraph.yml").write_text(SHARED)
    monkeypatch.setenv("TOKEN_FLOODER", TOKENS["flooder"])
    monkeypatch.setenv("TOKEN_QUIET", TOKENS["quiet"])
    mg = Mindgraph.open(workspace)

    async def scenario():
        body_may_go = asyncio.Event()
        gate = TokenGate(streaming_app(body_may_go), Authenticator(mg.scopes),
                         per_identity=16, share=1)

        def as_(name):
            return httpx.AsyncClient(transport=httpx.ASGITransport(app=gate),
                                     base_url="http://127.0.0.1:8765",
                                     headers={"Authorization": f"Bearer {TOKENS[name]}"})

        async with as_("flooder") as flooder, as_("quiet") as quiet:
            assert (await quiet.get("/quick")).status_code == 200     # another identity, now
            stream = asyncio.create_task(flooder.get("/stream"))
            await asyncio.sleep(0.2)                # its status line is sent, its body is not
            assert not stream.done()
            held = gate.shares.working("flooder")
            quick = await asyncio.wait_for(flooder.get("/quick"), 5)
            body_may_go.set()
            return held, quick.status_code, (await stream).text

    try:
        held, quick, streamed = asyncio.run(scenario())
    finally:
        mg.close()
    assert held == 0 and quick == 200 and streamed == "done"
