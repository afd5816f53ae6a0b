"""`mindgraph calibrate` on a synthetic usage log whose right λ is known: simulated readers
read, after each query, the page that ranks first under λ = 0.01; the fit must find a λ
that ranks every read page first, which the default λ (0.003) does not."""

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.calibrate.recency_fit import Example, fit_lambda
from mindgraph.calibrate.usage_signals import used_queries

TRUE_LAMBDA = 0.01
WORDS = ["zorblat", "quentix", "mavrolen", "sprindle", "toxwerth", "glimmick", "brasque",
         "vontari", "chelmic", "drubnik", "felquor", "hastrel"]
FILLER = ("This note describes how the team handles the matter in daily work, with the steps "
          "people follow and the reasons behind them.")


def make_vault(root: Path) -> list[str]:
    """Per made-up word: an old page that says it often and a newer one that says it less,
    the pair further apart in time for each next word (so each needs another λ to flip)."""
    wiki = root / "wiki"
    wiki.mkdir()
    newest = dt.date(2025, 6, 1)
    for i, word in enumerate(WORDS):
        gap = 3 + 2 * i                         # days between the old and the new page
        new_date = newest - dt.timedelta(days=3 * i)
        old_date = new_date - dt.timedelta(days=gap)
        (wiki / f"{word} old.md").write_text(
            f"---\ndate: {old_date}\n---\n# {word.title()} guide\n\nThe {word} process: {word} "
            f"first, then {word} again, and {word} once more. {FILLER}\n")
        (wiki / f"{word} new.md").write_text(
            f"---\ndate: {new_date}\n---\n# {word.title()} notes\n\nThe {word} process as it "
            f"is done now. {FILLER}\n")
    return [f"how does the {word} process work" for word in WORDS]


def write_config(root: Path, decay: float) -> None:
    (root / "mindgraph.yml").write_text(
        "# my settings\nembedding:\n  provider: hashing\n\nretrieval:\n  recency: on   # keep\n"
        f"  recency_lambda: {decay}\n")


def simulate_readers(root: Path, queries: list[str]) -> list[dict]:
    """The usage log of readers who open the page ranked first under TRUE_LAMBDA."""
    write_config(root, TRUE_LAMBDA)
    mg = Mindgraph(load_settings(root))
    lines, t = [], dt.datetime(2025, 6, 2, 9, 0, tzinfo=dt.timezone.utc)
    for query in queries:
        first = mg.smart_search(query, 5).results[0].page
        stamp = t.strftime("%Y-%m-%dT%H:%M:%S%z")
        lines.append({"time": stamp, "interface": "mcp", "kind": "query", "query": query,
                      "intent": "smart_search", "top": [first], "results": 5})
        lines.append({"time": (t + dt.timedelta(seconds=20)).strftime("%Y-%m-%dT%H:%M:%S%z"),
                      "interface": "mcp", "kind": "lookup", "query": first,
                      "intent": "get_page", "top": [first], "results": 1})
        t += dt.timedelta(minutes=1)
    # a lookup long after the last query is about nothing
    lines.append({"time": (t + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S%z"),
                  "interface": "mcp", "kind": "lookup", "query": "x", "intent": "get_page",
                  "top": [f"{WORDS[0]} old.md"]})
    return lines


@pytest.fixture
def calibrated(tmp_path):
    queries = make_vault(tmp_path)
    lines = simulate_readers(tmp_path, queries)
    read = {line["top"][0] for line in lines if line["kind"] == "lookup"}
    assert any(p.endswith("old.md") for p in read) and any(p.endswith("new.md") for p in read)
    write_config(tmp_path, 0.003)
    log = tmp_path / ".mindgraph" / "usage.jsonl"
    log.parent.mkdir(exist_ok=True)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp_path


def test_the_fit_finds_a_lambda_that_ranks_every_read_page_first(calibrated):
    result = CliRunner().invoke(cli, ["-C", str(calibrated), "calibrate", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    curve = {point["lambda"]: point["mrr"] for point in data["curve"]}
    assert data["examples"] == len(WORDS) and data["current"] == 0.003
    assert curve[TRUE_LAMBDA] == 1.0 and curve[data["proposed"]] == 1.0
    assert curve[0.003] < 1.0 and curve[0.0] < 1.0
    assert data["written"] is None
    assert "recency_lambda: 0.003" in (calibrated / "mindgraph.yml").read_text()


def test_write_changes_only_that_line_and_the_next_run_agrees(calibrated):
    before = (calibrated / "mindgraph.yml").read_text()
    result = CliRunner().invoke(cli, ["-C", str(calibrated), "calibrate", "--write"])
    assert result.exit_code == 0, result.output
    assert "proposal: λ 0.003 →" in result.output and "wrote retrieval.recency_lambda" in result.output
    after = (calibrated / "mindgraph.yml").read_text()
    changed = [(a, b) for a, b in zip(before.split("\n"), after.split("\n")) if a != b]
    assert len(changed) == 1 and changed[0][1].startswith("  recency_lambda: ")
    assert "# my settings" in after and "recency: on   # keep" in after
    proposed = yaml.safe_load(after)["retrieval"]["recency_lambda"]
    again = json.loads(CliRunner().invoke(cli, ["-C", str(calibrated), "calibrate",
                                                "--json"]).output)
    assert again["current"] == proposed == again["proposed"]


def test_questions_count_too_and_a_log_without_reads_says_so(tmp_path):
    queries = make_vault(tmp_path)
    write_config(tmp_path, 0.003)
    empty = json.loads(CliRunner().invoke(cli, ["-C", str(tmp_path), "calibrate",
                                                "--json"]).output)
    assert empty["examples"] == 0 and any("nothing to calibrate" in n for n in empty["notes"])
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"id": str(i), "query": q,
                                             "relevant": [f"{WORDS[i]} old.md"]}) + "\n"
                                 for i, q in enumerate(queries)))
    data = json.loads(CliRunner().invoke(cli, ["-C", str(tmp_path), "calibrate", "--json",
                                               "--questions", str(questions)]).output)
    curve = {point["lambda"]: point["mrr"] for point in data["curve"]}
    assert data["examples"] == len(WORDS) and curve[0.0] == 1.0        # the old pages win:
    assert data["proposed"] < 0.003 and curve[data["proposed"]] == 1.0  # less decay


def test_usage_signals_join_reasked_queries_and_ignore_late_lookups():
    lines = [
        {"time": "2025-01-01T10:00:00+0000", "interface": "mcp", "kind": "query",
         "query": "Sync  history"},
        {"time": "2025-01-01T10:00:30+0000", "interface": "mcp", "kind": "lookup",
         "intent": "get_section", "top": ["A.md"]},
        {"time": "2025-01-01T11:00:00+0000", "interface": "mcp", "kind": "query",
         "query": "sync history"},
        {"time": "2025-01-01T11:30:00+0000", "interface": "mcp", "kind": "lookup",
         "intent": "get_page", "top": ["Late.md"]},
        {"time": "2025-01-01T11:00:05+0000", "interface": "rest", "kind": "lookup",
         "intent": "get_page", "top": ["Other.md"]},
        {"time": "2025-01-01T12:00:00+0000", "interface": "mcp", "kind": "query",
         "query": "unread"},
    ]
    (only,) = used_queries(lines)
    assert only.asked == 2 and only.used == {"A.md"}


def test_evergreen_pages_are_old_pages_used_often_that_the_decay_pushes_down():
    ages = {"old.md": 900, "new.md": 10, "mid.md": 300, "x.md": 50}
    examples = [Example(f"q{i}", frozenset({"old.md"}), (("old.md", 1.0), ("new.md", 0.9)))
                for i in range(3)]
    examples += [Example(f"n{i}", frozenset({"new.md"}), (("mid.md", 1.0), ("new.md", 0.8)))
                 for i in range(3)]
    fit = fit_lambda(examples, ages, current=0.003)
    assert fit.evergreen == ("old.md",) and fit.evergreen_mrr == 1.0
    assert fit.mrr(fit.proposed) < 1.0


def test_rest_and_mcp_give_the_same_proposal_and_write_nothing(calibrated):
    import anyio
    from mcp import Client
    from starlette.testclient import TestClient

    from mindgraph.serve.mcp import create_mcp_server
    from mindgraph.serve.rest import create_app

    cli_fit = json.loads(CliRunner().invoke(cli, ["-C", str(calibrated), "calibrate",
                                                  "--json"]).output)
    before = (calibrated / "mindgraph.yml").read_bytes()
    mg = Mindgraph(load_settings(calibrated))
    rest = TestClient(create_app(mg), base_url="http://127.0.0.1:8765").get("/calibrate")
    assert rest.status_code == 200, rest.text
    assert rest.json()["proposed"] == cli_fit["proposed"]
    assert rest.json()["curve"][0] == {"lambda": 0.0, "mrr": cli_fit["curve"][0]["mrr"]}

    async def main():
        async with Client(create_mcp_server(mg)) as client:
            return await client.call_tool("calibrate", {})

    result = anyio.run(main)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text)["proposed"] == cli_fit["proposed"]
    assert (calibrated / "mindgraph.yml").read_bytes() == before


def test_cli_get_and_rest_page_reads_are_lookups_calibrate_learns_from(tmp_path):
    from fastapi.testclient import TestClient

    from mindgraph.serve.rest import create_app

    queries = make_vault(tmp_path)
    write_config(tmp_path, 0.003)
    runner = CliRunner()

    def examples():
        return json.loads(runner.invoke(cli, ["-C", str(tmp_path), "calibrate",
                                              "--json"]).output)["examples"]

    assert runner.invoke(cli, ["-C", str(tmp_path), "search", queries[0]]).exit_code == 0
    assert examples() == 0                              # asked, nothing read yet
    read = runner.invoke(cli, ["-C", str(tmp_path), "get", f"{WORDS[0]} old"])
    assert read.exit_code == 0, read.output
    assert examples() == 1
    client = TestClient(create_app(Mindgraph(load_settings(tmp_path))),
                        base_url="http://127.0.0.1:8765")
    assert client.get("/search", params={"q": queries[1]}).status_code == 200
    assert client.get("/page", params={"page": f"{WORDS[1]} new"}).status_code == 200
    assert client.get("/search", params={"q": queries[2]}).status_code == 200
    section = client.get("/page", params={"page": f"{WORDS[2]} old"}).json()["sections"][-1]
    assert client.get("/section", params={"page": f"{WORDS[2]} old",
                                          "section_id": section["id"]}).status_code == 200
    log = [json.loads(line) for line in
           (tmp_path / ".mindgraph" / "usage.jsonl").read_text().splitlines()]
    lookups = [(x["interface"], x["intent"], x["top"]) for x in log if x["kind"] == "lookup"]
    assert lookups == [("cli", "get", [f"{WORDS[0]} old.md"]),
                       ("rest", "page", [f"{WORDS[1]} new.md"]),
                       ("rest", "page", [f"{WORDS[2]} old.md"]),
                       ("rest", "section", [f"{WORDS[2]} old.md"])]
    used = {q.query: q.used for q in used_queries(log)}
    assert used[queries[0]] == {f"{WORDS[0]} old.md"}
    assert used[queries[1]] == {f"{WORDS[1]} new.md"}
    assert used[queries[2]] == {f"{WORDS[2]} old.md"}
    assert client.get("/calibrate").json()["examples"] == examples() >= 2
