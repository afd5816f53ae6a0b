"""The ingest state file: round trip, the state machine, atomic replacement, clear errors."""

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
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
    # the moves file beside it (moves_file.py), and no temp file of either
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "s.json.moves"]


def journaled_state(path):
    state = IngestState(path)
    state.journaled = True
    state.transition("a.md", "pending", sha256="1", title="A")
    state.transition("a.md", "ingested", wiki="a.md")
    state.transition("b.md", "pending", sha256="2", title="B")
    state.save()
    return state


def test_appended_records_are_replayed_and_a_whole_save_folds_them(tmp_path):
    path = tmp_path / "s.json"
    state = journaled_state(path)
    before = path.read_bytes()
    state.transition("a.md", "pending", sha256="3", title="A")
    state.transition("a.md", "ingested", wiki="a.md", mentions=("b",))
    state.drop("b.md")
    state.moves["old.md"] = {"page": "a.md"}
    state.index = {"generic_of": "x"}
    state.append()
    assert path.read_bytes() == before          # the file itself is not rewritten
    loaded = IngestState.load(path)
    assert loaded.files == state.files and loaded.moves == state.moves
    assert loaded.index == {"generic_of": "x"} and not loaded.changed
    loaded.save()                               # a whole save, without a generation
    assert not (tmp_path / "s.json.journal").exists()
    assert IngestState.load(path).files == state.files
    assert "generation" not in json.loads(path.read_text())


def test_a_torn_journal_line_is_skipped_and_later_lines_still_count(tmp_path):
    path = tmp_path / "s.json"
    state = journaled_state(path)
    state.transition("b.md", "ingested", wiki="b.md")
    state.append()
    with open(tmp_path / "s.json.journal", "ab") as journal:   # killed mid-append
        journal.write(b'{"base": "' + state.generation.encode() + b'", "files": {"a.md": nu')
    state.transition("b.md", "pending", sha256="4", title="B")
    state.append()                              # the next process appends after it
    loaded = IngestState.load(path)
    assert loaded.files == state.files
    assert loaded.get("b.md").sha256 == "4" and loaded.get("a.md").status == "ingested"


def test_journal_lines_of_an_older_save_are_never_replayed(tmp_path):
    path = tmp_path / "s.json"
    state = journaled_state(path)
    state.transition("b.md", "ingested", wiki="b.md")
    state.append()
    journal = (tmp_path / "s.json.journal").read_bytes()
    state.transition("b.md", "pending", sha256="5", title="B")
    state.save()                                # a new generation, the journal removed...
    (tmp_path / "s.json.journal").write_bytes(journal)    # ...or a kill before it was
    loaded = IngestState.load(path)
    assert loaded.get("b.md").status == "pending" and loaded.get("b.md").sha256 == "5"


def test_a_damaged_journal_line_is_an_error_naming_the_journal(tmp_path):
    """An intact line whose records are not records (damage, not a kill) stops the load with
    an error naming the journal, not the state file: deleting the journal is the cheap fix."""
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    (tmp_path / "raw" / "Kayak.md").write_text("# Kayak\nA narrow boat.\n")
    assert runner.invoke(cli, ["ingest", "-C", str(tmp_path)]).exit_code == 0
    path = tmp_path / ".mindgraph" / ".ingest-state.json"
    state = IngestState.load(path)
    state.journaled = True          # as the watcher's state is
    state.save()
    journal = tmp_path / ".mindgraph" / ".ingest-state.json.journal"
    for bad in ('{"Kayak.md": {"status": "weird"}}', '{"Kayak.md": {"status": "ingested", '
                '"aliases": 5}}', '{}, "moves": {"a.md": 1}', '{"Kayak.md": 5}'):
        journal.write_text('\n{"base": "' + state.generation + '", "files": ' + bad + "}\n")
        result = runner.invoke(cli, ["ingest", "-C", str(tmp_path)])
        assert result.exit_code == 1, (bad, result.output)
        assert f"{journal}: the ingest state's journal is damaged" in result.output, bad
        assert "delete it" in result.output and "Traceback" not in result.output
    journal.unlink()
    assert "Ingested 0, unchanged 1, skipped 0" in runner.invoke(
        cli, ["ingest", "-C", str(tmp_path)]).output


def test_checkpoints_append_what_changed_and_the_final_save_is_the_plain_file(tmp_path):
    """A first run's commits before its last are journal lines onto one whole save: the
    file is not rewritten, a load (after a kill) sees every record, and the last save
    leaves exactly the file a run that saved whole each time leaves."""
    path = tmp_path / "s.json"
    state = IngestState(path)
    for name in ("a.md", "b.md", "c.md"):
        state.transition(name, "pending", sha256=name, title=name.upper())
    state.checkpoint()                          # whole, with a generation lines can name
    first = path.read_bytes()
    assert "generation" in json.loads(first)
    state.transition("a.md", "ingested", wiki="a.md", mentions=("b", "c"))
    state.transition("b.md", "failed", error="bad: 'x'")
    state.drop("c.md")
    state.moves["old.md"] = {"page": "a.md"}
    state.index = {"generic_of": "x"}
    state.checkpoint()
    state.transition("c.md", "pending", sha256="c2", title="C é")
    state.checkpoint()
    assert path.read_bytes() == first           # the file itself is not rewritten
    assert state.changed                        # until the last save folds the journal
    killed = IngestState.load(path)             # what a run killed here leaves
    assert killed.files == state.files and killed.moves == state.moves
    assert killed.index == {"generic_of": "x"}
    state.save()
    assert not state.changed and not (tmp_path / "s.json.journal").exists()
    plain = IngestState(tmp_path / "plain.json", state.files, state.moves, state.index)
    plain.save()
    assert path.read_bytes() == (tmp_path / "plain.json").read_bytes()


def test_a_record_is_encoded_as_json_dumps_encodes_it(tmp_path):
    from mindgraph.ingest.state import FileState, _dumps, _record_json

    records = [FileState("pending"), FileState("ingested", title='Q "é" \\ \n\t\u2028 日本',
                                                 aliases=("a", "ß"), mentions=(),
                                                 warnings=("x:1: odd",), stat="1/2/3/4"),
               FileState("failed", error="e", aliases=["a list"])]     # a list stays a list
    for record in records:
        assert _record_json(record) == _dumps(record.to_json())
