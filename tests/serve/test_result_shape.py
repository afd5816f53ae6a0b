"""One result shape for keyword and hybrid search, over CLI --json, REST and MCP: flat
section_id and heading, integer ranks, no rank for a source that ranks nothing (the graph)."""

import json

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app

from test_mcp import payload, run_session

# The fields every search result has, keyword or hybrid, in every interface (README table).
COMMON = ["rank", "page", "title", "section_id", "heading", "snippet", "score"]


@pytest.fixture()
def workspace(tmp_path):
    """Three pages about zebras; the hub links the other two, so the graph boosts it."""
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Hub.md").write_text("---\ntitle: Hub\n---\nZebras overview: see [[Stripes]] and "
                                 "[[Herds]].\n\n## Zebras in zoos\nZebras live in zoos too.\n")
    (wiki / "Stripes.md").write_text("---\ntitle: Stripes\n---\nWhy zebras have stripes. "
                                     "Back to [[Hub]], see [[Herds]].\n")
    (wiki / "Herds.md").write_text("---\ntitle: Herds\n---\nZebras live in herds. "
                                   "Back to [[Hub]] and [[Stripes]].\n")
    return tmp_path


def cli_json(workspace, *args):
    result = CliRunner().invoke(cli, ["search", *args, "--json", "-C", str(workspace)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["results"]


def assert_shape(results, extra):
    assert results, "no results"
    for rank, hit in enumerate(results, 1):
        assert list(hit)[:len(COMMON)] == COMMON and set(hit) == {*COMMON, *extra}, hit
        assert hit["rank"] == rank and type(hit["rank"]) is int
        assert "section" not in hit
        for name, source in hit.get("sources", {}).items():
            if name == "graph":      # the graph found the page by its links, ranked nothing
                assert set(source) == {"linked"} and type(source["linked"]) is int
            else:
                assert set(source) == {"rank", "score"} and type(source["rank"]) is int


def test_keyword_and_hybrid_results_have_one_shape_in_cli_rest_and_mcp(workspace):
    keyword_extra = {"scores", "matched_terms", "why", "retrievers", "url", "trust"}
    hybrid_extra = {"sources", "boosts", "found_by", "retrievers", "url", "trust"}
    cli_keyword = cli_json(workspace, "zebras")
    cli_hybrid = cli_json(workspace, "--hybrid", "zebras")
    assert_shape(cli_keyword, keyword_extra)
    assert_shape(cli_hybrid, hybrid_extra)
    assert any("graph" in hit["sources"] for hit in cli_hybrid)   # the case under test

    mg = Mindgraph(load_settings(workspace))
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    rest_keyword = client.get("/search", params={"q": "zebras"}).json()["results"]
    rest_hybrid = client.get("/smart_search", params={"q": "zebras"}).json()["results"]
    assert_shape(rest_keyword, keyword_extra)
    assert_shape(rest_hybrid, hybrid_extra)
    assert rest_keyword == cli_keyword and rest_hybrid == cli_hybrid

    async def script(client):
        return [payload(await client.call_tool(name, {"query": "zebras", "verbose": True}))
                for name in ("search", "smart_search")]

    mcp_keyword, mcp_hybrid = run_session(create_mcp_server(mg), script)
    assert_shape(mcp_keyword["results"], keyword_extra)
    assert_shape(mcp_hybrid["results"], hybrid_extra)
    assert [h["page"] for h in mcp_hybrid["results"]] == [h["page"] for h in cli_hybrid]

