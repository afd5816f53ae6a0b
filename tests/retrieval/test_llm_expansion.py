"""Pass 2 asks the configured LLM for extra queries — through the real CLI, against a local
server speaking OpenAI's chat-completions API — cached across processes and bounded in time."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from fake_openai import FakeOpenAI

from mindgraph.cli import cli

QUERY = "how can I carve a passage out on its own"


def _workspace(tmp_path, base_url: str, extra: str = "") -> str:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Note composer.md").write_text(
        "# Note composer\n\nMerge notes, or extract a selection into a new note.\n")
    (wiki / "Templates.md").write_text("# Templates\n\nInsert a template file.\n")
    (wiki / "Canvas.md").write_text("# Canvas\n\nCards on an infinite board.\n")
    (tmp_path / "mindgraph.yml").write_text(
        "compile:\n  provider: openai\n  model: fake-model\n"
        f"  base_url: {base_url}\n"
        "embedding:\n  provider: hashing\n"
        f"retrieval:\n  expansion: always\n{extra}")
    return str(tmp_path)


def _search(workspace: str, query: str = QUERY) -> dict:
    result = CliRunner().invoke(cli, ["search", "--hybrid", query, "-C", workspace, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_expansion_asks_the_llm_once_and_finds_what_only_its_queries_find(tmp_path):
    with FakeOpenAI(lambda prompt: '["extract selection into new note", "merge notes"]') as llm:
        workspace = _workspace(tmp_path, llm.base_url)
        data = _search(workspace)
        assert len(llm.requests) == 1
        sent = llm.requests[0]
        assert sent["path"] == "/v1/chat/completions"
        assert sent["body"]["model"] == "fake-model"
        assert QUERY in sent["body"]["messages"][-1]["content"]
        assert data["expanded_queries"] == ["extract selection into new note", "merge notes"]
        # no word of the question is on the page: only the LLM's queries find it
        top = data["results"][0]
        assert top["page"] == "Note composer.md"
        assert "extract selection into new note" in top["found_by"]
        # a new process asks the same question: answered from the cache in the state folder
        assert _search(workspace)["expanded_queries"] == data["expanded_queries"]
        assert len(llm.requests) == 1
        _search(workspace, "infinite board")
        assert len(llm.requests) == 2
    # the cache holds what agents asked: private (0600) like the usage log, not 0644
    cache = tmp_path / ".mindgraph" / "llm-search-cache.sqlite"
    assert cache.stat().st_mode & 0o777 == 0o600


def test_no_llm_configured_means_no_request(tmp_path):
    with FakeOpenAI(lambda prompt: '["x"]') as llm:
        workspace = _workspace(tmp_path, llm.base_url, "  expansion_llm: false\n")
        assert _search(workspace)["expanded_queries"] == []
        assert llm.requests == []


def test_a_slow_llm_costs_the_time_budget_not_the_search(tmp_path):
    with FakeOpenAI(lambda prompt: '["merge notes"]', delay_s=3.0) as llm:
        workspace = _workspace(tmp_path, llm.base_url, "  expansion_timeout_s: 0.5\n")
        started = time.perf_counter()
        data = _search(workspace, "note composer")
        assert time.perf_counter() - started < 2.5
        assert len(llm.requests) == 1          # asked once: no retries inside the budget
        assert data["results"][0]["page"] == "Note composer.md"
        assert any("query expansion" in d and "timed out" in d for d in data["degradation"])
        assert data["expanded_queries"] == []


def test_a_missing_key_is_a_note_not_an_error(tmp_path, monkeypatch):
    monkeypatch.delenv("MINDGRAPH_TEST_NO_KEY", raising=False)
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Canvas.md").write_text("# Canvas\n\nCards on a board.\n")
    (tmp_path / "mindgraph.yml").write_text(
        "compile:\n  provider: anthropic\n  api_key_env: MINDGRAPH_TEST_NO_KEY\n"
        "embedding:\n  provider: hashing\nretrieval:\n  expansion: always\n")
    data = _search(str(tmp_path), "canvas")
    assert data["results"][0]["page"] == "Canvas.md"
    assert any("LLM query expansion failed" in d and "MINDGRAPH_TEST_NO_KEY" in d
               for d in data["degradation"])


def test_auto_asks_the_llm_only_when_pass_1_is_weak_or_the_query_names_several_concepts(
        tmp_path):
    """DESIGN: pass 2 runs "only when needed (top score under 0.5, or a multi-concept query)".
    Every test above forces `expansion: always`; under the default a well-answered question
    must cost no LLM call, or every agent query pays one."""
    with FakeOpenAI(lambda prompt: '["merge notes", "extract selection"]') as llm:
        workspace = _workspace(tmp_path, llm.base_url)
        config = tmp_path / "mindgraph.yml"
        config.write_text(config.read_text().replace("  expansion: always\n", ""))
        strong = _search(workspace, "note composer")
        assert strong["results"][0]["page"] == "Note composer.md"
        assert strong["results"][0]["score"] >= 0.5
        assert strong["expanded_queries"] == [] and llm.requests == []

        weak = _search(workspace)           # no word of it is on any page: pass 1 is weak
        assert len(llm.requests) == 1
        assert "query" not in weak["results"][0]["found_by"]
        assert weak["expanded_queries"] == ["merge notes", "extract selection"]

        versus = _search(workspace, "canvas vs templates")
        assert len(llm.requests) == 2       # strong hits, but two concepts: pass 2 runs
        assert versus["expanded_queries"][:2] == ["canvas", "templates"]
        assert QUERY not in llm.requests[1]["body"]["messages"][-1]["content"]
        assert "canvas vs templates" in llm.requests[1]["body"]["messages"][-1]["content"]
