"""State files a process loads survive a version upgrade: a page cache, keyword index or graph
written by an older mindgraph (a bare pickle, or another version in the header), cut short or
garbage is detected and rebuilt from the wiki, through the real CLI, with the same answers."""

from __future__ import annotations

import json
import pickle

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.statefile import MAGIC, header, read_state, write_state

STATE_FILES = ("pages.pickle", "keyword.pickle", "graph.pickle")


@pytest.fixture()
def workspace(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Zeppelins.md").write_text(
        "# Zeppelins\n\nAirships carry trunks. See [[Submarines]].\n")
    (tmp_path / "wiki" / "Submarines.md").write_text("# Submarines\n\nThey dive deep. #boats\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 32\n")
    return tmp_path


def answers(workspace) -> tuple:
    """What a fresh process answers: a keyword search, the graph's hubs, the stats."""
    def run(*args):
        result = CliRunner().invoke(cli, ["-C", str(workspace), *args, "--json"],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)
    hits = [(h["page"], h["section_id"]) for h in run("search", "airships dive")["results"]]
    return hits, run("graph", "hubs"), run("stats")["pages"]


def old_versions(current: bytes) -> dict[str, bytes]:
    """The ways a file may be left by another mindgraph or a crash."""
    line, _, body = current[len(MAGIC):].partition(b"\n")
    older = {**json.loads(line), "mindgraph": "0.0.9"}
    return {"bare pickle (mindgraph before versioned state files)": body,
            "older mindgraph": MAGIC + json.dumps(older).encode() + b"\n" + body,
            "older format": current.replace(b'"format": "', b'"format": "0', 1),
            "cut short": current[:len(current) // 2],
            "garbage": b"\x80\x05not a pickle at all",
            "empty": b""}


@pytest.mark.parametrize("name", STATE_FILES)
def test_an_old_or_damaged_state_file_is_rebuilt_and_answers_stay_the_same(workspace, name):
    expected = answers(workspace)
    state = workspace / ".mindgraph"
    current = (state / name).read_bytes()
    assert current.startswith(MAGIC)
    for why, data in old_versions(current).items():
        (state / name).write_bytes(data)
        assert answers(workspace) == expected, why
        rebuilt = (state / name).read_bytes()
        assert rebuilt.startswith(MAGIC), f"{why}: not rewritten"
        kind = json.loads(rebuilt[len(MAGIC):].partition(b"\n")[0])
        assert kind["mindgraph"] == header("x", 1)["mindgraph"], why


def test_read_state_checks_the_header_before_unpickling(tmp_path):
    class Exploding:
        def __reduce__(self):
            return (eval, ("1/0",))

    path = tmp_path / "s.pickle"
    write_state(path, "graph", 2, {"graph": 1})
    assert read_state(path, "graph", 2) == {"graph": 1}
    assert read_state(path, "graph", 3) is None and read_state(path, "pages", 2) is None
    path.write_bytes(MAGIC + json.dumps(header("graph", 1)).encode() + b"\n"
                     + pickle.dumps({"x": Exploding()}))
    assert read_state(path, "graph", 2) is None      # another format: never unpickled
    assert read_state(path, "graph", 1) is None      # unpickling fails: rebuilt, no traceback
    assert read_state(tmp_path / "absent", "graph", 2) is None


def test_reading_a_state_file_holds_its_state_once_not_its_bytes_too(tmp_path):
    import tracemalloc

    size = 40_000_000
    write_state(tmp_path / "big.pickle", "big", 1, {"blob": bytes(size)})
    tracemalloc.start()
    try:
        state = read_state(tmp_path / "big.pickle", "big", 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert state is not None and len(state["blob"]) == size
    # the file's bytes read first, then sliced past the header, then unpickled: 3 copies
    assert peak < 1.25 * size, f"peak {peak / size:.2f}x the state"
