"""The ETA of long work (cli/eta.py): in work (a chunk's tokens), at the recent rate.

Replayed on a recorded `mindgraph embed` of the Obsidian help vault (tests/cli/
embed_recording.json: per batch, the time, chunks and tokens), on the same run slowed down
after its first 10 s as the tester's was ("1408 of 6834 chunks (20%), 10 s, ETA 39 s" on a
run of 177 s), and through the progress lines `embed` prints."""

import json
import statistics
from pathlib import Path

import pytest

from mindgraph.cli import progress
from mindgraph.cli.eta import WINDOW_S, EtaEstimator

RECORDING = json.loads((Path(__file__).parent / "embed_recording.json").read_text())["batches"]


def replay(batches, start=0.15, end=0.92):
    """(seconds left estimated now, before (items since the start), actually) at each batch
    between ``start`` and ``end`` of the run's time."""
    chunks, tokens = sum(b[1] for b in batches), sum(b[2] for b in batches)
    finish = batches[-1][0]
    eta = EtaEstimator(tokens, 0.0)
    items = work = 0
    out = []
    for t, n, k in batches:
        items, work = items + n, work + k
        eta.add(t, work)
        if start * finish <= t <= end * finish:
            out.append((eta.seconds_left(), t * (chunks - items) / items, finish - t))
    return out


def errors(points, which):
    return [(p[which] - p[2]) / p[2] for p in points]


def test_the_recorded_embed_run():
    points = replay(RECORDING)
    new = errors(points, 0)
    assert statistics.median(abs(e) for e in new) <= 0.12
    assert max(abs(e) for e in new) <= 0.4
    assert statistics.mean(new) >= -0.05          # never the optimistic kind on average


def slowed(batches, first_s=10.0, chunks_fast=1408, slower=3.5):
    """The recording's batches, the first ``chunks_fast`` chunks done in ``first_s`` seconds
    and the rest ``slower`` times slower per token (the machine got busy)."""
    fast = [b for b in batches if sum(x[1] for x in batches[:batches.index(b) + 1])
            <= chunks_fast]
    rate = sum(b[2] for b in fast) / first_s
    out, t, items = [], 0.0, 0
    for _, n, k in batches:
        t += k / (rate if items < chunks_fast else rate / slower)
        items += n
        out.append([t, n, k])
    return out


def test_a_run_that_slows_down_as_the_testers_did():
    batches = slowed(RECORDING)
    points = replay(batches, start=0.0, end=0.95)
    at_first_line = next(p for p in points if p[1] > 0 and batches[-1][0] - p[2] >= 10.0)
    # before: "ETA 39 s"-like, a third of what was left
    assert at_first_line[1] < 0.45 * at_first_line[2]
    settled = [p for p in points if batches[-1][0] - p[2] >= 10.0 + WINDOW_S]
    assert settled and all(abs(p[0] - p[2]) / p[2] <= 0.1 for p in settled)
    assert statistics.median(abs(e) for e in errors(settled, 1)) > 0.25    # before: off


def test_progress_lines_count_the_work_not_the_items(monkeypatch, capsys):
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(progress, "is_terminal", lambda: False)
    monkeypatch.setattr(progress, "EVERY_S", 0.0)
    work = [10.0] * 50 + [100.0] * 50               # short chunks first, long ones last
    with progress.Progress("Embedding", "chunks", 100, work=work) as shown:
        for _ in range(5):
            clock[0] += 10 * 10 / 50.0              # 50 tokens a second
            shown.advance(10)
        clock[0] += 10 * 100 / 50.0
        shown.advance(10)
    lines = capsys.readouterr().err.splitlines()
    # 50 of 100 chunks in 10 s: by chunks 10 s more; by tokens 5000 at 50 a second
    assert lines[4] == "Embedding: 50 of 100 chunks (50%), 10 s, ETA 100 s"
    assert lines[5] == "Embedding: 60 of 100 chunks (60%), 30 s, ETA 80 s"


def test_an_estimator_says_nothing_before_any_work_or_after_all_of_it():
    eta = EtaEstimator(100, 0.0)
    assert eta.seconds_left() is None
    eta.add(5.0, 0)
    assert eta.seconds_left() is None
    eta.add(10.0, 50)
    assert eta.seconds_left() == pytest.approx(10.0)
    eta.add(20.0, 100)
    assert eta.seconds_left() is None
