"""The page moves in their own small file beside the ingest state (ingest/moves_file.py).

A server, `links` and `check` resolve a link to a moved page's old name from that file, not
from the whole ingest state; a workspace without it (ingested by an older mindgraph), with one
of another version or damaged, or whose state was written since by a mindgraph that does not
write it, answers the same and gets the file rebuilt. Through the real entry points: `mindgraph
ingest`, `links` and `check` (CliRunner), REST /health and /page (the app).
"""

import json

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.ingest import STATE_FILENAME, IngestState
from mindgraph.ingest import state as state_module
from mindgraph.ingest.moves import moves_of
from mindgraph.serve.rest import create_app
from mindgraph.statefile import MAGIC

BODY = ("Sourdough starts with a starter of flour and water kept warm for five days. "
        "Feed it twice a day and discard half before each feeding.\n")
MOVED = "Baking/Sourdough starter.md"


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def moved(workspace, write_raw):
    """A note another note links to by name, then renamed and ingested again: one move."""
    write_raw("Bread/2021-03-04 Sourdough.md", BODY)
    write_raw("Pantry.md", "The pantry holds flour. See [[2021-03-04 Sourdough]].\n")
    run("ingest", "-C", workspace)
    (workspace / "raw" / "Baking").mkdir()
    (workspace / "raw" / "Bread" / "2021-03-04 Sourdough.md").rename(
        workspace / "raw" / MOVED)
    run("ingest", "-C", workspace)
    return workspace


def state_path(workspace):
    return workspace / ".mindgraph" / STATE_FILENAME


def moves_file(workspace):
    return workspace / ".mindgraph" / (STATE_FILENAME + ".moves")


def answers(workspace):
    """What fresh processes answer about the link to the old name: REST /health and /page
    of a new server, `links --json` and `check`."""
    client = TestClient(create_app(Mindgraph(load_settings(workspace))),
                        base_url="http://127.0.0.1:8765")
    health = client.get("/health").json()
    page = client.get("/page", params={"page": "Pantry"}).json()
    stale = [(o["target"], o["page"], o["stale"]) for o in page["outgoing"] if o.get("stale")]
    links = json.loads(run("links", "-C", workspace, "Pantry", "--json"))
    checked = CliRunner().invoke(cli, ["check", "-C", str(workspace)], catch_exceptions=False)
    check = [line for line in checked.output.splitlines() if "stale-link" in line
             or "moved to" in line]
    return health["pages"], stale, links["outgoing"], (checked.exit_code, check)


def test_the_server_resolves_a_moved_page_from_the_moves_file_without_reading_the_state(
        moved, monkeypatch):
    assert moves_file(moved).read_bytes().startswith(MAGIC)
    expected = answers(moved)
    assert expected[0] == 2
    assert [(target, page) for target, page, _ in expected[1]] == [
        ("2021-03-04 Sourdough", MOVED)]
    assert expected[3][0] == 0 and expected[3][1], "check warns of the link to the old name"
    loads = []
    real_load = state_module.IngestState.load.__func__
    monkeypatch.setattr(state_module.IngestState, "load",
                        classmethod(lambda cls, path: loads.append(path) or real_load(cls, path)))
    client = TestClient(create_app(Mindgraph(load_settings(moved))),
                        base_url="http://127.0.0.1:8765")
    assert client.get("/health").json()["pages"] == 2
    page = client.get("/page", params={"page": "Pantry"}).json()
    assert [o["page"] for o in page["outgoing"] if o.get("stale")] == [MOVED]
    assert loads == []                  # the 172 MB of JSON at 100,000 notes: not read


def test_an_old_workspace_without_the_file_answers_the_same_and_gets_it(moved):
    expected = answers(moved)
    moves_file(moved).unlink()          # as ingested by a mindgraph before the file
    assert answers(moved) == expected
    assert moves_file(moved).read_bytes().startswith(MAGIC)    # rebuilt by the first reader
    assert moves_of(moved / ".mindgraph") == IngestState.load(state_path(moved)).moves


def test_a_moves_file_of_another_version_or_damaged_is_rebuilt(moved):
    expected = answers(moved)
    current = moves_file(moved).read_bytes()
    line, _, body = current[len(MAGIC):].partition(b"\n")
    older = MAGIC + json.dumps({**json.loads(line), "mindgraph": "0.0.9"}).encode() + b"\n"
    for why, data in {"older mindgraph": older + body, "bare pickle": body,
                      "cut short": current[:len(current) // 2], "garbage": b"\x80\x05junk",
                      "empty": b""}.items():
        moves_file(moved).write_bytes(data)
        assert answers(moved) == expected, why
        assert moves_file(moved).read_bytes() == current, why


def test_a_state_written_since_by_an_older_mindgraph_wins_over_the_moves_file(moved):
    """An older mindgraph's ingest rewrites the state (here: the move forgotten) and leaves
    the moves file as it was: its stamps no longer match, so the state is read."""
    data = json.loads(state_path(moved).read_text(encoding="utf-8"))
    del data["moves"]
    state_path(moved).write_text(json.dumps(data), encoding="utf-8")
    assert moves_of(moved / ".mindgraph") == {}
    _, stale, outgoing, check = answers(moved)
    assert stale == [] and check[1] == []
    assert [(o["target"], o["status"]) for o in outgoing] == [("2021-03-04 Sourdough", "missing")]


def test_a_journal_line_that_changes_the_moves_rewrites_the_file(moved):
    """The watcher appends small runs to a journal beside the state: the moves file follows
    each line, and a reader gets what a load of the state with its journal gives."""
    state = IngestState.load(state_path(moved))
    state.journaled = True
    state.save()
    state.moves["Old/Name.md"] = {"page": MOVED, "title": "Old name"}
    state.append()
    assert state_path(moved).with_name(STATE_FILENAME + ".journal").exists()
    expected = IngestState.load(state_path(moved)).moves
    assert "Old/Name.md" in expected
    assert moves_of(moved / ".mindgraph") == expected
    assert list(moves_of(moved / ".mindgraph")) == list(expected)      # same order too
