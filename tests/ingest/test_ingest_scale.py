"""Ingest at scale: the cost of a run grows with the notes, not with their square (issue 20)."""

from __future__ import annotations

import time

from mindgraph.ingest import IngestState, run_ingest
from mindgraph.ingest import pipeline
from mindgraph.ingest.compile_offline import OfflineCompiler


class _Clock:
    """A clock that moves only when the test says: a note costs 0.1 s, a state save 1 s (as
    saving every record of a large vault does)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def perf_counter(self) -> float:
        return time.perf_counter()


def test_a_slow_state_save_is_not_repeated_after_every_note(workspace, settings, write_raw,
                                                            monkeypatch):
    for i in range(40):
        write_raw(f"notes/n{i:02}.md", f"# Note {i}\n\nSome text about topic {i}.\n")
    clock = _Clock()
    monkeypatch.setattr(pipeline, "time", clock)
    saves = []
    real_save, real_compile = IngestState.save, OfflineCompiler.compile

    def slow_save(self):
        clock.now += 1.0
        saves.append(len(self.files))
        real_save(self)

    def slow_compile(self, note, index):
        clock.now += 0.1
        return real_compile(self, note, index)

    monkeypatch.setattr(IngestState, "save", slow_save)
    monkeypatch.setattr(OfflineCompiler, "compile", slow_compile)
    report = run_ingest(settings)
    assert report.ingested == 40
    # a save every 0.5 s of work became a save after every note once a save took longer than
    # that (40 saves here, and at 10,000 notes most of the run); now saving takes at most a
    # tenth of the run: the pending records, the final save, and none in between
    assert len(saves) <= 3, saves
    state = IngestState.load(settings.state_dir / pipeline.STATE_FILENAME)
    assert {r.status for r in state.files.values()} == {"ingested"}
