"""Two tenants, several agents and teams, against every REST endpoint and every MCP tool (over
HTTP with tokens), on both vector stores: nothing of another tenant or an invisible scope
comes back — not in results, counts, snippets, links or errors — and a token missing, wrong or
of another tenant gets 401 / 403 / 404, never a 5xx.

Every check is one (endpoint or tool, identity, argument) request; ``CASES`` lists them and
the README states how many there are (``test_the_readme_states_the_number_of_checks``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_http_app, create_mcp_server
from mindgraph.serve.rest import create_app

from scopes_support import (
    IDENTITIES, NOTES, SERVER_TOKEN, TOKENS, VISIBLE, WORDS, leaks, set_tokens,
    write_workspace,
)

WHO = [name for name, *_ in IDENTITIES] + ["local"]
TITLES = sorted({Path(p).stem for p in NOTES}) + ["Nowhere Page"]
WORD_QUERIES = sorted({w.split()[0] for w in WORDS.values()})
ECHOES = {"query", "situation", "concept", "terms", "matched_terms", "suggestions",
          "expanded_queries", "expansions", "tokens"}


def title_of(path: str) -> str:
    return Path(path).stem


def visible_titles(who: str) -> set[str]:
    return {title_of(p) for p in VISIBLE[who]}


# (surface, endpoint or tool, arguments) for one identity; a title argument is probed for
# every page title and one that no page has
def rest_cases() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = [("/health", {}), ("/stats", {}),
                                               ("/communities", {}), ("/check", {}),
                                               ("/coverage", {"codebase": "code"}),
                                               ("/lint", {}), ("/calibrate", {}),
                                               ("/propagate/queue", {})]
    for title in TITLES:
        cases += [("/page", {"page": title}), ("/section", {"page": title, "section_id": "lead"}),
                  ("/extract", {"page": title}), ("/related", {"page": title}),
                  ("/path", {"source": title, "target": "Handbook"}),
                  ("/timeline", {"concept": title})]
    for word in WORD_QUERIES:
        cases += [("/search", {"q": word}), ("/smart_search", {"q": word}),
                  ("/context", {"situation": f"working on {word}"}),
                  ("/timeline", {"concept": word})]
    cases.append(("/smart_search", {"q": " ".join(WORD_QUERIES), "limit": 50}))
    return cases


def mcp_cases() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = [
        ("stats", {}), ("communities", {}), ("coverage", {"codebase": "code"}),
        ("lint", {}), ("calibrate", {}), ("propagation_queue", {}),
        ("validate", {"text": "The kettle boils.", "evidence": ["The kettle boils at noon."]})]
    for title in TITLES:
        cases += [("get_page", {"page": title}), ("list_sections", {"page": title}),
                  ("get_section", {"page": title, "section_id": "lead"}),
                  ("backlinks", {"page": title}), ("extract", {"page": title}),
                  ("related", {"page": title}),
                  ("path", {"source": title, "target": "Handbook"}),
                  ("timeline", {"concept": title})]
    for word in WORD_QUERIES:
        cases += [("search", {"query": word}), ("smart_search", {"query": word}),
                  ("context", {"situation": f"working on {word}"})]
    return cases


REST = rest_cases()
MCP = mcp_cases()
CASES = [("rest", *c, who) for c in REST for who in WHO] + \
        [("mcp", *c, who) for c in MCP for who in WHO]
STORES = ("embedded", "pgvector")


@pytest.fixture(scope="module", params=STORES)
def tenants(request, tmp_path_factory):
    """(Mindgraph, REST client, MCP client) of the two-tenant workspace, compiled and
    embedded, on one vector store."""
    root = write_workspace(tmp_path_factory.mktemp(f"tenants-{request.param}"), request.param)
    dsn = request.getfixturevalue("pg_dsn") if request.param == "pgvector" else None
    with pytest.MonkeyPatch.context() as patch:
        set_tokens(patch, dsn)
        mg = Mindgraph.open(root)
        assert mg.ingest().ok
        mg.embed()
        rest = TestClient(create_app(mg, SERVER_TOKEN), base_url="http://127.0.0.1:8765")
        mcp_app = create_http_app(create_mcp_server(mg), SERVER_TOKEN,
                                  serve=mg.settings.serve, scopes=mg.scopes)
        with rest, TestClient(mcp_app, base_url="http://127.0.0.1:8766") as mcp:
            yield mg, rest, McpClient(mcp)
        mg.close()


def bearer(who: str | None) -> dict[str, str]:
    if who is None:
        return {}
    return {"Authorization": f"Bearer {SERVER_TOKEN if who == 'local' else TOKENS[who]}"}


class McpClient:
    """Streamable HTTP MCP calls, one session per identity."""

    ACCEPT = {"Accept": "application/json, text/event-stream"}

    def __init__(self, client: TestClient):
        self.client = client
        self.sessions: dict[str, dict[str, str]] = {}

    def post(self, body: dict, headers: dict[str, str]) -> Any:
        return self.client.post("/mcp", json=body, headers=self.ACCEPT | headers)

    def session(self, who: str) -> dict[str, str]:
        if who not in self.sessions:
            hello = self.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "pytest", "version": "0"}}}, bearer(who))
            assert hello.status_code == 200, hello.text
            headers = bearer(who) | {"mcp-session-id": hello.headers["mcp-session-id"],
                                     "mcp-protocol-version": "2025-06-18"}
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
            self.sessions[who] = headers
        return self.sessions[who]

    def call(self, who: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        """(is_error, structured result or error text) of one tool call."""
        reply = self.post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}},
                          self.session(who))
        assert reply.status_code == 200, reply.text
        message = _sse_json(reply.text)
        assert "result" in message, message
        result = message["result"]
        if result.get("isError"):
            return True, result["content"][0]["text"]
        return False, result.get("structuredContent")


def _sse_json(text: str) -> dict:
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1] if data else text)


def without_echoes(value: Any) -> Any:
    """``value`` without the fields that repeat what the caller asked (its query words)."""
    if isinstance(value, dict):
        return {k: without_echoes(v) for k, v in value.items() if k not in ECHOES}
    if isinstance(value, list):
        return [without_echoes(v) for v in value]
    return value


def asked(args: dict[str, Any]) -> list[str]:
    """What a request said itself (its query, situation or concept), which answers repeat."""
    return [v for k, v in args.items() if k in ("q", "query", "situation", "concept")
            and isinstance(v, str)]


def unknown_page_words(text: str, title: str) -> str:
    """An error message with the name asked for taken out, up to its suggestions (which
    depend on the name; they may only cite pages the caller sees, checked apart)."""
    return text.replace(title, "<name>").split(". ")[0]


def expect_visible(who: str, args: dict[str, Any]) -> bool:
    """Whether every page the arguments name is one ``who`` sees."""
    names = [args[k] for k in ("page", "source", "target") if k in args]
    return all(n in visible_titles(who) for n in names)


@pytest.mark.parametrize("endpoint, args", REST, ids=[f"{e} {a}" for e, a in REST])
def test_rest_shows_each_identity_only_its_view(tenants, endpoint, args):
    mg, rest, _ = tenants
    for who in WHO:
        reply = rest.get(endpoint, params=args, headers=bearer(who))
        assert reply.status_code < 500, (who, reply.text)
        body = reply.json()
        assert leaks(who, without_echoes(body), asked(args)) == [], (who, body)
        check_answer(who, endpoint, args, reply.status_code, body)


@pytest.mark.parametrize("tool, args", MCP, ids=[f"{t} {a}" for t, a in MCP])
def test_mcp_over_http_shows_each_identity_only_its_view(tenants, tool, args):
    _, _, mcp = tenants
    for who in WHO:
        failed, answer = mcp.call(who, tool, args)
        assert leaks(who, without_echoes(answer), asked(args)) == [], (who, answer)
        check_answer(who, f"mcp {tool}", args, 404 if failed else 200, answer)


NOT_FOUND: dict[tuple[str, str], set[str]] = {}


def check_answer(who: str, endpoint: str, args: dict[str, Any], status: int, body: Any) -> None:
    """What each kind of answer must say for ``who``."""
    named = [args[k] for k in ("page", "source", "target") if k in args]
    kind = endpoint.strip("/").split()[-1]
    if named and kind != "timeline":
        if expect_visible(who, args):
            # the owner sees both tenants' Roadmap: for it the bare name is ambiguous (404)
            ambiguous = who == "local" and "Roadmap" in named
            if kind not in ("path", "extract") and not ambiguous:
                assert status == 200, (who, endpoint, args, body)
        else:
            assert status == 404, (who, endpoint, args, body)
            # the same words whether the page exists in another scope or nowhere
            missing = next(n for n in named if n not in visible_titles(who))
            text = body if isinstance(body, str) else body["detail"]
            NOT_FOUND.setdefault((endpoint, who), set()).add(unknown_page_words(text, missing))
            assert len(NOT_FOUND[(endpoint, who)]) == 1, NOT_FOUND[(endpoint, who)]
    if kind == "health":
        assert body["pages"] == len(VISIBLE[who])
    if kind == "stats" and isinstance(body, dict):
        stats = body.get("stats", body)
        assert stats["pages"] == len(VISIBLE[who]), (who, stats)
        assert stats["raw"]["files"] == len(VISIBLE[who]), (who, stats)
    for found in _cited_pages(body):
        assert found in VISIBLE[who], (who, endpoint, found)


def _cited_pages(body: Any) -> set[str]:
    """Every page path an answer names (values that are paths of pages)."""
    text = json.dumps(body, ensure_ascii=False, default=str)
    return {p for p in NOTES if re.search(re.escape(json.dumps(p)[1:-1]), text)}


def test_no_token_a_wrong_one_or_another_tenants_gets_401_403_404(tenants):
    mg, rest, mcp = tenants
    for endpoint, args in REST:
        for headers in ({}, {"Authorization": "Bearer " + "z" * 40},
                        {"Authorization": TOKENS["alice"]}):
            reply = rest.get(endpoint, params=args, headers=headers)
            if endpoint == "/health":
                assert reply.status_code == 200 and reply.json()["pages"] is None
            else:
                assert reply.status_code == 401, (endpoint, reply.text)
                assert reply.headers["www-authenticate"] == "Bearer"
    # the identity is the token's, whatever a caller says about itself
    spoofed = rest.get("/page", params={"page": "Alice Diary", "identity": "alice",
                                        "tenant": "acme"},
                       headers=bearer("carol") | {"X-Identity": "alice", "X-Tenant": "acme"})
    assert spoofed.status_code in (404, 422)
    for path, body in (("/reindex", {"embed": False}),
                       ("/propagate/apply", {"plan": "0" * 16, "approve": "0" * 64})):
        forbidden = rest.post(path, json=body, headers=bearer("alice"))
        assert forbidden.status_code == 403, forbidden.text
        assert "only the local identity" in forbidden.json()["detail"]
    assert rest.get("/propagate/queue", headers=bearer("carol")).status_code == 403
    assert rest.get("/propagate/queue", headers=bearer("local")).status_code == 200
    for headers in ({}, {"Authorization": "Bearer " + "z" * 40}):
        assert mcp.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                        headers).status_code == 401
    # a session answers only the identity that opened it: another token on it is 404, as
    # for a session that does not exist, and reads nothing
    carol_session = mcp.session("carol") | bearer("alice")
    for page in ("Alice Diary", "Deal Memo"):
        reply = mcp.post({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "get_page", "arguments": {"page": page}}}, carol_session)
        assert reply.status_code == 404 and "Session not found" in reply.text
        assert "zebrafish" not in reply.text and "capybara" not in reply.text
    reply = mcp.post({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "get_page", "arguments": {"page": "Deal Memo"}}},
        mcp.session("carol") | bearer("carol"))
    assert "capybara" in reply.text


def test_the_readme_states_the_number_of_checks():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"([\d,]+) endpoint × identity checks", readme)
    assert stated, "README: state the number of endpoint × identity checks"
    assert int(stated.group(1).replace(",", "")) == len(CASES) * len(STORES)
