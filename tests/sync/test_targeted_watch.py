"""Targeted runs through `mindgraph watch`: a run that edits raw notes compiles just those, a
run that adds, removes or renames a note or changes a title falls back to the full ingest, and
after every step the watched workspace equals one where each step was followed by an ordinary
`mindgraph ingest` (wiki bytes, ingest records, moves and the index memo), and, where no note
was renamed, a fresh ingest of the same raw/ from nothing. Notes in English, Japanese and
Chinese that mention each other's titles."""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import asdict
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))

from ingest_helpers import tree_hashes  # noqa: E402

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.ingest import STATE_FILENAME, IngestState  # noqa: E402

from sync_support import wait_until  # noqa: E402

CONFIG = "embedding:\n  provider: hashing\n  dimension: 64\n"
MTIME = 1_767_000_000       # every note written with this mtime, in both workspaces
NOTES = {
    "en/Trunks.md": "# Trunks\nA trunk holds clothes for a long trip by Kayak.\n",
    "en/Kayak.md": "# Kayak\nA small boat. Pack it like Trunks.\n\n## Paddles\nTwo blades.\n",
    "en/Harbour.md": "# Harbour\nBoats rest here: a Kayak, a ferry.\n",
    "ja/東京タワー.md": "# 東京タワー\n東京タワーは赤い。富士山が見える日もある。\n",
    "ja/富士山.md": "# 富士山\n富士山は高い山です。東京タワーから見える。\n",
    "zh/长城.md": "# 长城\n长城很长。我们在北京看了故宫。\n",
    "zh/故宫.md": "# 故宫\n故宫在北京。长城不远。\n",
}


def put(raw: Path, path: str, text: str) -> None:
    """Write a note atomically with the fixed mtime (the watcher never sees it half done)."""
    target = raw / path
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.parent / f".{target.name}.tmp"
    temp.write_text(text, encoding="utf-8")
    os.utime(temp, (MTIME, MTIME))
    os.replace(temp, target)


def records(base: Path) -> dict:
    state = IngestState.load(base / ".mindgraph" / STATE_FILENAME)
    files = {p: {k: v for k, v in asdict(r).items() if k != "stat"}
             for p, r in state.files.items()}
    return {"files": files, "moves": state.moves, "index": state.index}


def compiled_fields(base: Path) -> dict:
    """The records' fields a fresh ingest must give too (not the bookkeeping of when a
    digest was last found equal)."""
    return {p: {k: v for k, v in r.items() if k not in ("links_basis", "links_index")}
            for p, r in records(base)["files"].items()}


def ingest(base: Path) -> None:
    mg = Mindgraph.open(base)
    try:
        assert mg.ingest().ok
    finally:
        mg.close()


class WatchProcess:
    def __init__(self, base: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mindgraph", "watch", "-C", str(base), "--json",
             "--no-embed", "--debounce-ms", "100"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(json.loads(line))

    def runs(self) -> list[dict]:
        return [x for x in self.lines if x.get("event") == "change"]

    def next_run(self, before: int, path: str) -> dict:
        """The first run after ``before`` runs whose changes name ``path``."""
        def found():
            return next((r for r in self.runs()[before:] if f"raw/{path}" in r["changes"]),
                        None)
        return wait_until(found, 60, f"a run for raw/{path}")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(30) == 0, self.process.stderr.read()


@pytest.fixture
def pair(tmp_path):
    """The watched workspace and the reference one, with the same notes."""
    bases = []
    for name in ("watched", "reference"):
        base = tmp_path / name
        (base / "raw").mkdir(parents=True)
        (base / "mindgraph.yml").write_text(CONFIG)
        for path, text in NOTES.items():
            put(base / "raw", path, text)
        bases.append(base)
    ingest(bases[1])
    return bases


def test_edits_are_targeted_and_the_rest_falls_back_and_both_equal_a_full_ingest(pair, tmp_path):
    watched, reference = pair
    watch = WatchProcess(watched)
    try:
        wait_until(lambda: watch.runs(), 60, "the startup run")
        assert watch.runs()[0]["trigger"] == "start"

        def step(edit, path: str, plan: str, fresh: bool = True) -> dict:
            before = len(watch.runs())
            for base in (watched, reference):
                edit(base / "raw")
            run = watch.next_run(before, path)
            assert run["error"] is None and not run["failed"], run
            assert run["ingest"].startswith(plan), run["ingest"]
            ingest(reference)
            wait_until(lambda: (s := json.loads((watched / ".mindgraph" /
                                                 "sync-status.json").read_text()))
                       ["state"] == "idle" and not s["pending_count"], 30, "idle")
            assert tree_hashes(watched / "wiki") == tree_hashes(reference / "wiki"), path
            assert records(watched) == records(reference), path
            if fresh:
                scratch = tmp_path / f"scratch-{before}"
                shutil.copytree(watched / "raw", scratch / "raw")
                (scratch / "mindgraph.yml").write_text(CONFIG)
                ingest(scratch)
                assert tree_hashes(watched / "wiki") == tree_hashes(scratch / "wiki"), path
                assert compiled_fields(watched) == compiled_fields(scratch), path
            return run

        # content edits: targeted, in each language, one note and two at once
        run = step(lambda raw: put(raw, "en/Kayak.md", NOTES["en/Kayak.md"]
                                   + "It floats on the Harbour water.\n"), "en/Kayak.md",
                   "targeted")
        assert run["compiled"] == ["en/Kayak.md"]
        page = (watched / "wiki" / "en" / "Kayak.md").read_text(encoding="utf-8")
        assert "[[Harbour]]" in page

        def cjk(raw):
            put(raw, "ja/富士山.md", NOTES["ja/富士山.md"] + "冬は雪が多い。\n")
            put(raw, "zh/长城.md", NOTES["zh/长城.md"] + "冬天很冷。\n")
        run = step(cjk, "zh/长城.md", "targeted")
        assert sorted(run["compiled"]) == ["ja/富士山.md", "zh/长城.md"]

        # a new title: every note that mentions it is relinked by the full path
        run = step(lambda raw: put(raw, "en/Trunks.md",
                                   "# Suitcases\nA trunk holds clothes.\n"),
                   "en/Trunks.md", "full: en/Trunks.md: its title or aliases changed")
        # a new note whose title others mention; a note removed
        step(lambda raw: put(raw, "zh/北京.md", "# 北京\n北京是首都。\n"), "zh/北京.md",
             "full: zh/北京.md is new")
        assert "[[北京]]" in (watched / "wiki" / "zh" / "故宫.md").read_text(encoding="utf-8")
        step(lambda raw: (raw / "en" / "Harbour.md").unlink(), "en/Harbour.md",
             "full: en/Harbour.md is gone")
        # a content edit after the fallbacks is targeted again
        run = step(lambda raw: put(raw, "ja/東京タワー.md", NOTES["ja/東京タワー.md"]
                                   + "夜は明るい。\n"), "ja/東京タワー.md", "targeted")
        assert run["compiled"] == ["ja/東京タワー.md"]
        # a rename: the full path moves the page (its old title stays an alias, so a fresh
        # ingest, which never saw the old name, is not the reference for this one)
        step(lambda raw: os.rename(raw / "zh" / "故宫.md", raw / "zh" / "紫禁城.md"),
             "zh/紫禁城.md", "full: ", fresh=False)
        run = step(lambda raw: put(raw, "zh/紫禁城.md", "# 故宫\n故宫在北京。长城不远。\n很大。\n"),
                   "zh/紫禁城.md", "targeted", fresh=False)
    finally:
        watch.stop()
    # the journal was folded into the state file when the watcher stopped
    assert not (watched / ".mindgraph" / (STATE_FILENAME + ".journal")).exists()
    assert records(watched) == records(reference)


def test_a_full_run_says_why_after_another_processs_ingest(pair):
    """The watcher's "full: <why>" named "no full run in this process to start from" after a
    `mindgraph ingest` beside it, though it had made one: it says what happened."""
    watched, _ = pair
    watch = WatchProcess(watched)
    try:
        wait_until(lambda: watch.runs(), 60, "the startup run")
        assert watch.runs()[0]["ingest"] == \
            "full: no list of changed notes (a start, or a folder changed)"
        beside = subprocess.run([sys.executable, "-m", "mindgraph", "ingest", "-C",
                                 str(watched), "--force"], capture_output=True, text=True,
                                timeout=120)
        assert beside.returncode == 0, beside.stderr
        for plan in ("full: another process ingested since the last run", "targeted"):
            before = len(watch.runs())
            text = (watched / "raw" / "en" / "Kayak.md").read_text(encoding="utf-8")
            put(watched / "raw", "en/Kayak.md", text + f"Run {before}.\n")
            run = watch.next_run(before, "en/Kayak.md")
            assert run["error"] is None and run["ingest"] == plan, run
    finally:
        watch.stop()


def test_the_readme_names_every_field_of_a_change_event():
    from mindgraph.sync.status import RunRecord

    readme = Path(__file__).resolve().parents[2] / "README.md"
    section = readme.read_text(encoding="utf-8").split("### Live sync", 1)[1].split("\n### ")[0]
    for key in RunRecord(started="", trigger="start").to_dict():
        assert f'"{key}":' in section, f"README.md, Live sync, does not name {key!r}"
