"""The validator as a read-only service: POST /validate and the `validate` MCP tool take a
text and its evidence and return the verdict JSON, writing nothing to the workspace."""

from __future__ import annotations

import json

import anyio
from fastapi.testclient import TestClient
from mcp import Client

from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app
from trust_support import LOCAL

EVIDENCE = ["Sync keeps 12 months of version history. Each vault holds up to 10 GB."]


def _tree(base):
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*"))
            if p.is_file()}


def test_post_validate_returns_the_verdict_per_claim_and_writes_nothing(compiled):
    client = TestClient(create_app(Mindgraph(load_settings(compiled))), base_url=LOCAL)
    client.get("/health")
    before = _tree(compiled)
    ok = client.post("/validate", json={"text": "Sync keeps 12 months of version history.",
                                        "evidence": EVIDENCE}).json()
    assert ok["verdict"] == "pass" and ok["validator"] == "offline:v1"
    assert ok["checks"] == [{"claim": "Sync keeps 12 months of version history.",
                             "verdict": "supported", "source": "evidence[0]",
                             "quote": "Sync keeps 12 months of version history."}]
    wrong = client.post("/validate", json={
        "text": "Sync keeps 24 months of version history.\n\n- It runs on toasters.",
        "evidence": EVIDENCE}).json()
    assert wrong["verdict"] == "fail" and [c["verdict"] for c in wrong["checks"]] == [
        "contradicted", "unsupported"]
    none = client.post("/validate", json={"text": "Anything at all.", "evidence": []}).json()
    assert none["verdict"] == "unverifiable"
    bad = client.post("/validate", json={"text": "x"})
    assert bad.status_code == 422 and "evidence" in bad.text
    assert _tree(compiled) == before


def test_the_validate_mcp_tool_judges_too(compiled):
    server = create_mcp_server(Mindgraph(load_settings(compiled)))

    async def main():
        async with Client(server) as client:
            result = await client.call_tool("validate", {
                "text": "Each vault holds up to 10 GB. Sync never keeps history.",
                "evidence": EVIDENCE})
            return json.loads(result.content[0].text)

    answer = anyio.run(main)
    assert answer["verdict"] == "fail" and answer["supported"] == 1
    assert [c["verdict"] for c in answer["checks"]] == ["supported", "contradicted"]
    assert answer["checks"][1]["quote"] == "Sync keeps 12 months of version history."
