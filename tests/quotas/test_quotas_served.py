"""Per-identity quotas over the real servers: an identity's LLM calls per hour and documents
per day (limits.llm_calls_per_hour, limits.documents_per_day).

Before, any token could make the server call the owner's LLM (search expansion, the lint
judge, triage, compiling its notes) and create documents without end. Real REST app (with
tokens) and MCP over streamable HTTP, a local server speaking OpenAI's API that counts the
requests it gets, the two-tenant workspace. A used-up quota is a 429 with Retry-After (a
tool error over MCP) naming the setting, and the provider is not called; the owner's token
is never limited; the counts survive a restart (and so are shared by `serve --workers`).
"""

import json
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval"))
sys.path.insert(0, str(Path(__file__).parents[1] / "scopes"))
sys.path.insert(0, str(Path(__file__).parents[1] / "serve"))
from fake_openai import FakeOpenAI  # noqa: E402
from scopes_support import SERVER_TOKEN, TOKENS, config_text, set_tokens, \
    write_workspace  # noqa: E402
from test_mcp_documents import call_over_http  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from mindgraph.cli import cli  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.serve.mcp import create_http_app, create_mcp_server  # noqa: E402
from mindgraph.serve.rest import create_app  # noqa: E402

QUESTIONS = ["what did the merger memo decide", "which terms were in the deal",
             "who studies the axolotl merger", "what is on the globex roadmap"]


def _bearer(who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {SERVER_TOKEN if who == 'owner' else TOKENS[who]}"}


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """The two-tenant workspace compiled offline (its tokens set)."""
    write_workspace(tmp_path)
    set_tokens(monkeypatch)
    core = Mindgraph.open(tmp_path)
    assert core.ingest().ok
    core.close()
    return tmp_path


@pytest.fixture
def llm():
    """A local OpenAI-compatible server answering every prompt with two search phrasings."""
    with FakeOpenAI(lambda prompt: '["merger terms", "deal memo"]') as fake:
        yield fake


def _configure(root: Path, llm: FakeOpenAI | None, limits: str) -> None:
    compile_ = (f"compile:\n  provider: openai\n  model: fake-model\n"
                f"  base_url: {llm.base_url}\n") if llm else ""
    (root / "mindgraph.yml").write_text(config_text() + compile_
                                        + "retrieval:\n  expansion: always\n"
                                        + f"limits:\n{limits}")


def _rest(root: Path):
    core = Mindgraph.open(root)
    return core, TestClient(create_app(core, SERVER_TOKEN), base_url="http://127.0.0.1:8765")


def _search(client, who: str, question: str):
    return client.get("/smart_search", params={"q": question}, headers=_bearer(who))


def test_rest_llm_calls_stop_at_the_hourly_quota_per_identity(workspace, llm):
    _configure(workspace, llm, "  llm_calls_per_hour: 2\n")
    core, client = _rest(workspace)
    with client:
        assert [_search(client, "carol", q).status_code for q in QUESTIONS[:2]] == [200, 200]
        assert len(llm.requests) == 2
        refused = _search(client, "carol", QUESTIONS[2])
        assert len(llm.requests) == 2               # the provider was not asked
        assert refused.status_code == 429, refused.text
        assert 1 <= int(refused.headers["Retry-After"]) <= 3600
        body = refused.json()
        assert body["error"] == "QuotaExceeded"
        assert body["setting"] == "limits.llm_calls_per_hour"
        assert "carol" in body["detail"] and "limits.llm_calls_per_hour" in body["detail"]
        # a question already answered is cached: no call, so no quota needed
        assert _search(client, "carol", QUESTIONS[0]).status_code == 200
        context = client.get("/context", params={"situation": QUESTIONS[3]},
                             headers=_bearer("carol"))
        assert context.status_code == 429, context.text
        assert context.json()["setting"] == "limits.llm_calls_per_hour"
        assert len(llm.requests) == 2
        # another identity, of the same tenant too, has its own quota
        assert _search(client, "erin", QUESTIONS[2]).status_code == 200
        assert len(llm.requests) == 3
        # the owner is never limited
        for question in QUESTIONS:
            assert _search(client, "owner", question).status_code == 200
        assert len(llm.requests) == 3 + len(QUESTIONS)
    core.close()
    # a restart (or another worker of `serve --workers`) reads the same counts
    core, client = _rest(workspace)
    with client:
        assert _search(client, "carol", QUESTIONS[3]).status_code == 429
        assert _search(client, "erin", QUESTIONS[3]).status_code == 200
    core.close()
    assert len(llm.requests) == 3 + len(QUESTIONS) + 1


CONTRADICTING = {
    "globex/shared/Encryption.md": "# Encryption\n\nGlobex Sync encrypts every remote vault "
                                   "end to end with your own password.\n",
    "globex/shared/Security.md": "# Security\n\nGlobex Sync never encrypts a remote vault end "
                                 "to end with your own password.\n"}


def _judge_or_expand(prompt: str) -> str:
    """The lint judge's verdicts (every pair contradicts), else two search phrasings."""
    pairs = prompt.count("Pair ")
    if pairs:
        return json.dumps({"pairs": [{"n": n, "verdict": "contradicts", "reason": "never"}
                                     for n in range(1, pairs + 1)]})
    return '["merger terms", "deal memo"]'


def test_rest_lint_judge_and_llm_compiles_stop_at_the_quota_cli_does_not(tmp_path,
                                                                          monkeypatch):
    write_workspace(tmp_path)
    for path, text in CONTRADICTING.items():
        (tmp_path / "raw" / path).write_text(text)
    set_tokens(monkeypatch)
    core = Mindgraph.open(tmp_path)
    assert core.ingest().ok
    core.close()
    with FakeOpenAI(_judge_or_expand) as llm:
        _configure(tmp_path, llm, "  llm_calls_per_hour: 1\n")
        core, client = _rest(tmp_path)
        with client:
            judged = client.get("/lint", params={"judge": "llm"}, headers=_bearer("carol"))
            assert judged.status_code == 200, judged.text
            assert len(llm.requests) == 1
            again = client.get("/lint", params={"judge": "llm"}, headers=_bearer("carol"))
            write = client.post("/documents", json={"title": "Carol plan", "text": "A plan."},
                                headers=_bearer("carol"))
            assert len(llm.requests) == 1             # neither reached the provider
            owner = client.get("/lint", params={"judge": "llm"}, headers=_bearer("owner"))
            assert owner.status_code == 200 and len(llm.requests) == 2
        core.close()
        cli_lint = CliRunner().invoke(cli, ["-C", str(tmp_path), "lint", "--judge", "llm",
                                            "--json"])
        assert cli_lint.exit_code == 0, cli_lint.output
        assert len(llm.requests) == 3                 # the CLI is the owner's: no quota
    assert any(f["rule"] == "conflicting-fact" and f["judged_by"].startswith("llm:openai:")
               for f in judged.json()["findings"])
    assert again.status_code == 429, again.text
    assert again.json()["setting"] == "limits.llm_calls_per_hour"
    assert write.status_code == 429 and write.json()["setting"] == "limits.llm_calls_per_hour"
    assert not (tmp_path / "raw/globex/personal/carol/api-notes").exists()


def test_rest_documents_stop_at_the_daily_quota_nothing_written(workspace):
    _configure(workspace, None, "  documents_per_day: 2\n")
    core, client = _rest(workspace)
    notes = workspace / "raw/globex/personal/carol/api-notes"
    with client:
        made = [client.post("/documents", json={"title": f"Carol note {n}", "text": "Plans."},
                            headers=_bearer("carol")) for n in range(2)]
        assert [m.status_code for m in made] == [200, 200], made[-1].text
        refused = client.post("/documents", json={"title": "Carol note 3", "text": "More."},
                              headers=_bearer("carol"))
        upload = client.post("/upload", headers=_bearer("carol"),
                             files=[("files", ("a.md", b"# A\n\nText.\n", "text/markdown"))])
        dave = client.post("/upload", headers=_bearer("dave"),
                           files=[("files", (f"{n}.md", b"# N\n\nText.\n", "text/markdown"))
                                  for n in "abc"])
        owner = [client.post("/documents", json={"title": f"Owner note {n}", "text": "Mine."},
                             headers=_bearer("owner")).status_code for n in range(3)]
    core.close()
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["Retry-After"]) > 3600          # a day's window
    assert refused.json()["setting"] == "limits.documents_per_day"
    assert "limits.documents_per_day" in refused.json()["detail"]
    assert upload.status_code == 429
    assert sorted(p.name for p in notes.iterdir()) == ["Carol-note-0.md", "Carol-note-1.md"]
    # three files at once do not fit a quota of two: all refused, none written
    assert dave.status_code == 429 and "3 documents created at once" in dave.json()["detail"]
    assert not (workspace / "raw/acme/personal/dave/api-notes").exists()
    assert owner == [200, 200, 200]


def test_mcp_over_http_quota_is_a_tool_error_and_no_call(workspace, llm):
    _configure(workspace, llm, "  llm_calls_per_hour: 1\n  documents_per_day: 1\n")
    core = Mindgraph.open(workspace)
    app = create_http_app(create_mcp_server(core), scopes=core.scopes)
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        first = call_over_http(client, TOKENS["carol"], "smart_search", {"query": QUESTIONS[0]})
        second = call_over_http(client, TOKENS["carol"], "smart_search",
                                {"query": QUESTIONS[1]})
        documents = call_over_http(client, TOKENS["carol"], "search_documents",
                                   {"query": QUESTIONS[2]})
        alice = call_over_http(client, TOKENS["alice"], "smart_search", {"query": QUESTIONS[1]})
    core.close()
    assert not first.get("isError"), first
    assert second["isError"] is True
    text = second["content"][0]["text"]
    assert "limits.llm_calls_per_hour" in text and "carol" in text
    assert documents["isError"] is True and "limits.llm_calls_per_hour" in \
        documents["content"][0]["text"]
    assert not alice.get("isError"), alice
    assert len(llm.requests) == 2           # carol's first, alice's


def test_mcp_create_document_stops_at_the_daily_quota(workspace):
    _configure(workspace, None, "  documents_per_day: 1\n")
    core = Mindgraph.open(workspace)
    app = create_http_app(create_mcp_server(core), scopes=core.scopes)
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        made = call_over_http(client, TOKENS["carol"], "create_document",
                              {"title": "Carol one", "text": "First."})
        refused = call_over_http(client, TOKENS["carol"], "create_document",
                                 {"title": "Carol two", "text": "Second."})
    core.close()
    assert not made.get("isError"), made
    assert refused["isError"] is True
    assert "limits.documents_per_day" in refused["content"][0]["text"]
    written = workspace / "raw/globex/personal/carol/api-notes"
    assert [p.name for p in written.iterdir()] == ["Carol-one.md"]
    assert json.loads(json.dumps(made))["structuredContent"]["raw"].endswith("Carol-one.md")
