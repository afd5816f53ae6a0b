"""The ingest state file: round trip, the state machine, atomic replacement, clear errors."""

import json

import pytest

from mindgraph.errors import IngestError
from mindgraph.ingest.state import IngestState, compile_key


def test_state_round_trips_and_is_sorted_json(tmp_path):
    state = IngestState(tmp_path / "s.json")
    state.transition("b.md", "pending", sha256="1", title="B", aliases=("x",))
    state.transition("b.md", "ingested", wiki="b.md", wiki_sha256="2", mentions=("t",))
    state.transition("a.md", "pending", sha256="3")
    state.transition("a.md", "failed", error="bad")
    state.save()
    data = json.loads((tmp_path / "s.json").read_text())
    assert list(data["files"]) == ["a.md", "b.md"]
    loaded = IngestState.load(tmp_path / "s.json")
    assert loaded.files == state.files
    assert loaded.get("b.md").aliases == ("x",)
    assert loaded.get("a.md").status == "failed"


def test_missing_state_is_empty(tmp_path):
    assert IngestState.load(tmp_path / "none.json").files == {}


@pytest.mark.parametrize("content", ["{not json", '{"version": 99, "files": {}}',
                                     '{"version": 1, "files": {"a.md": {"status": "odd"}}}'])
def test_unreadable_state_says_how_to_recover(tmp_path, content):
    path = tmp_path / "s.json"
    path.write_text(content)
    with pytest.raises(IngestError, match="delete it and the next `mindgraph ingest` "
                                          "recompiles"):
        IngestState.load(path)


def test_state_machine_rejects_skipping_pending(tmp_path):
    state = IngestState(tmp_path / "s.json")
    with pytest.raises(IngestError):
        state.transition("a.md", "ingested")
    state.transition("a.md", "pending")
    state.transition("a.md", "ingested")
    with pytest.raises(IngestError):
        state.transition("a.md", "failed")
    state.transition("a.md", "pending")
    state.transition("a.md", "failed")


def test_compile_key_depends_on_content_and_compiler():
    assert compile_key("h", "offline:v1") == compile_key("h", "offline:v1")
    assert compile_key("h", "offline:v1") != compile_key("h", "offline:v2")
    assert compile_key("h", "fake:a:prompt-v1") != compile_key("h", "fake:b:prompt-v1")
    assert compile_key("h1", "offline:v1") != compile_key("h2", "offline:v1")


def test_save_leaves_no_temp_files(tmp_path):
    state = IngestState(tmp_path / "s.json")
    state.transition("a.md", "pending")
    for _ in range(3):
        state.save()
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]
