"""Optional LLM reranking (retrieval.rerank: llm) through the real CLI, against a local server
speaking OpenAI's chat-completions API: off by default, cached, bounded in time."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from fake_openai import FakeOpenAI

from mindgraph.cli import cli

QUERY = "kayak"


def _workspace(tmp_path, base_url: str, retrieval: str) -> str:
    wiki = tmp_path / "wiki"
    wiki.mkdir(parents=True)
    for name, text in {"Trips": "kayak kayak kayak trips on the river",
                       "Rental": "kayak kayak rental in town",
                       "Safety": "kayak safety: wear a vest and never kayak alone at night",
                       "Gear": "paddles, a kayak and a dry bag"}.items():
        (wiki / f"{name}.md").write_text(f"# {name}\n\n{text}.\n")
    (tmp_path / "mindgraph.yml").write_text(
        f"compile:\n  provider: openai\n  model: fake-model\n  base_url: {base_url}\n"
        "embedding:\n  provider: hashing\n"
        f"retrieval:\n  expansion: 'off'\n  min_score: 0\n{retrieval}")
    return str(tmp_path)


def _pages(workspace: str) -> tuple[list[str], dict]:
    result = CliRunner().invoke(cli, ["search", "--hybrid", QUERY, "-C", workspace, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    return [r["page"] for r in data["results"]], data


def _third_then_first(prompt: str) -> str:
    return "[3, 1]"


def test_the_llm_order_comes_first_and_is_asked_once(tmp_path):
    with FakeOpenAI(_third_then_first) as llm:
        plain, _ = _pages(_workspace(tmp_path / "a", llm.base_url, ""))
        assert llm.requests == []                  # off by default, even with an LLM
        workspace = _workspace(tmp_path / "b", llm.base_url, "  rerank: llm\n")
        pages, data = _pages(workspace)
        assert len(llm.requests) == 1
        prompt = llm.requests[0]["body"]["messages"][-1]["content"]
        assert f"Question: {QUERY}" in prompt
        listed = re.findall(r"^\[(\d)\] (\w+)", prompt, re.M)
        assert [name for _, name in listed] == [p.removesuffix(".md") for p in plain]
        assert pages == [plain[2], plain[0], plain[1], plain[3]]
        scores = [r["score"] for r in data["results"]]
        assert scores == sorted(scores, reverse=True)
        assert data["results"][0]["boosts"]["reranked"] > 0
        assert _pages(workspace)[0] == pages and len(llm.requests) == 1   # cached


def test_a_slow_llm_keeps_the_order(tmp_path):
    with FakeOpenAI(_third_then_first, delay_s=3.0) as llm:
        plain, _ = _pages(_workspace(tmp_path / "a", llm.base_url, ""))
        workspace = _workspace(tmp_path / "b", llm.base_url,
                               "  rerank: llm\n  rerank_timeout_s: 0.5\n")
        pages, data = _pages(workspace)
        assert pages == plain and len(llm.requests) == 1
        assert any("reranking" in d and "timed out" in d for d in data["degradation"])
