"""A misspelt or unknown filter is refused, not ignored: REST query keys a route does not
have (422 naming them and the route's keys, as for a key given twice) and MCP arguments a
tool does not take; lint's rule filter over REST and MCP, as `lint --rule` has it."""

import json

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app


@pytest.fixture
def mg(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Bare.md").write_text("# Bare\n\n## Only\nNo lead at all.\n")
    (tmp_path / "wiki" / "Gone.md").write_text(
        "---\nsources:\n  - path: notes/gone.md\n    sha256: abc\n---\nA page compiled from a "
        "note that is no longer there.\n")
    return Mindgraph(settings_from_dict({}, base_dir=tmp_path))


def test_rest_lint_filters_by_rule_and_refuses_unknown_keys(mg):
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    everything = client.get("/lint").json()
    assert everything["counts"] == {"no-summary": 1, "dangling-reference": 1}
    only = client.get("/lint", params={"rule": "dangling-reference"}).json()
    assert only["counts"] == {"dangling-reference": 1}
    assert [f["page"] for f in only["findings"]] == ["Gone.md"]
    both = client.get("/lint", params={"rule": "no-summary,dangling-reference"}).json()
    assert both["counts"] == everything["counts"]
    bogus = client.get("/lint", params={"rule": "bogus"})
    assert bogus.status_code == 422 and bogus.json()["errors"][0]["loc"] == ["query", "rule"]
    misspelt = client.get("/lint", params={"rules": "no-summary"})
    assert misspelt.status_code == 422
    assert misspelt.json()["detail"] == ("/lint has no query parameter rules; its parameters: "
                                         "judge, limit, rule.")
    # every route, the same rule; the old names of /page and /section still count as known
    typo = client.get("/search", params={"q": "lead", "limt": "5", "zz": "1"})
    assert typo.status_code == 422 and "no query parameter limt, zz;" in typo.json()["detail"]
    assert client.get("/health", params={"verbose": "1"}).status_code == 422
    assert client.get("/page", params={"name": "Bare"}).json()["path"] == "Bare.md"
    assert client.get("/page", params={"page": "Bare", "name": "Gone"}).json()["path"] == \
        "Bare.md"
    assert client.get("/section", params={"page": "Bare", "id": "only"}).status_code == 200


def test_mcp_lint_filters_by_rule_and_refuses_unknown_arguments(mg):
    async def main():
        async with Client(create_mcp_server(mg)) as client:
            return [await client.call_tool("lint", args) for args in (
                {"rules": ["dangling-reference"]}, {"rules": ["bogus"]}, {"rule": "no-summary"},
                {"query": "lead", "limt": 5})] + [
                await client.call_tool("search", {"query": "lead", "limt": 5})]

    only, bogus, misspelt, two, search = anyio.run(main)
    assert json.loads(only.content[0].text)["counts"] == {"dangling-reference": 1}
    assert bogus.is_error and bogus.content[0].text == (
        "lint: 'rules.0' must be one of 'no-summary', 'dangling-reference', 'conflicting-fact', "
        "'deprecated-but-current', 'near-duplicate', 'unresolved-link', not 'bogus'.")
    assert misspelt.is_error and misspelt.content[0].text == (
        "lint takes no argument 'rule'; it takes 'judge', 'limit', 'rules'.")
    assert two.is_error and "lint takes no argument 'limt';" in two.content[0].text \
        and "lint takes no argument 'query';" in two.content[0].text
    assert search.is_error and search.content[0].text.startswith(
        "search takes no argument 'limt'; it takes 'query', 'limit',")
