"""Benchmark of `mindgraph watch` (issue 15): change-to-searchable latency and idle CPU.

    python bench/bench_watch.py                      # both, a table
    python bench/bench_watch.py --json
    python bench/bench_watch.py --workspace /tmp/ohw # keep (and reuse) the 883-note workspace
    python bench/bench_watch.py --only idle --idle-workspace /tmp/tenk   # keep and reuse it

Latency: the whole Obsidian Help vault (883 notes) copied as raw/, offline defaults (offline
compiler, local MiniLM, embedded store), compiled and embedded first (`ingest` + `embed`, not
timed; ~90 s). A watcher (default debounce 500 ms) runs in this process; one note at a time is
edited (a line with a new word appended) and we time, from the write: the word found by
keyword search (the core does not refresh itself, as in a server: only the watcher's run
makes it current), and the run's end (its section embedded, so hybrid search has it too).
Median over ``--edits`` edits, each to another note.

At 100,000 notes (issue 20: "one changed note searchable within 2 s"): ``--workspace`` a copy of
a compiled 100k workspace (``cp -r``, e.g. of /tmp/lead-100k/ours-100000) and ``--no-embed``
(it holds no vectors, and embedding 565,000 sections at the start would take hours); notes
that are not the vault's are edited in path order. The run's state files are saved when the
watcher is idle, not in the run: the figure after the table is how long that save takes (a
query waits for it when it comes then), with the process's peak resident memory.

Idle CPU: 10,000 notes made from the vault's real pages (``generate_notes``), a `mindgraph watch` process started and, once its
startup run is done, the CPU seconds it spends in the next ``--idle-seconds`` (user + system,
/proc) — with native events and with stat scans (--polling, 1 s). The idle cost does not depend
on the embedder, so this workspace uses the hashing one (its startup embed takes seconds, not
the ~15 minutes MiniLM would). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.sync import Watcher  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
VAULT = CORPORA / "obsidian-help"
EDITED = ("en/Plugins/Canvas.md", "en/Home.md", "en/Editing and formatting/Callouts.md",
          "ja/Home.md", "zh/Home.md", "en/Files and folders/Manage notes.md",
          "en/Getting started/Sync your notes across devices.md", "en/Plugins/Templates.md",
          "en/Linking notes and files/Internal links.md", "en/Bases/Introduction to Bases.md")


def _cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "mindgraph", *args], check=True,
                   stdout=subprocess.DEVNULL)


def latency_workspace(folder: Path | None, tmp: Path) -> Path:
    """The 883-note workspace, compiled and embedded (reused when ``folder`` has it)."""
    base = folder or tmp / "oh"
    if not (base / "wiki").is_dir():
        shutil.copytree(VAULT, base / "raw")
        _cli("init", str(base))
        _cli("ingest", "-C", str(base))
        _cli("embed", "-C", str(base))
    return base


def bench_latency(base: Path, edits: int, debounce_ms: int, embed: bool = True,
                  areas: tuple[str, ...] = ("raw",)) -> dict[str, Any]:
    """Median change-to-searchable latency over ``edits`` single-note edits in each of
    ``areas`` ("raw": notes, compiled by the run's ingest; "wiki": pages edited by hand), one
    watcher for all of them."""
    mg = Mindgraph.open(base)
    mg.auto_refresh = False
    records: list[Any] = []
    watcher = Watcher(mg, debounce_ms=debounce_ms, on_run=records.append, embed=embed,
                      save_after_s=3600).start()
    out: dict[str, Any] = {"notes": sum(1 for _ in (base / "raw").rglob("*.md")),
                           "edits": edits, "debounce_ms": debounce_ms}
    try:
        _wait(lambda: records and watcher.status.to_dict()["state"] == "idle", 3600)
        out["startup_run_s"] = records[0].seconds
        for area in areas:
            out[area] = _edit_and_time(mg, watcher, records, base, area, edits, debounce_ms)
        saved = time.perf_counter()
        mg.save_state()
        out["state_save_s"] = round(time.perf_counter() - saved, 2)
    finally:
        watcher.stop()
        mg.close()
    out["peak_rss_mb"] = round(_peak_rss_mb())
    return out


def _edit_and_time(mg: Any, watcher: Any, records: list[Any], base: Path, area: str,
                   edits: int, debounce_ms: int) -> dict[str, Any]:
    root = base / area
    paths = [p for p in EDITED if (root / p).is_file()] or sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*.md"))[:edits]
    keyword_s, done_s, run_s, cpu_s, embedded = [], [], [], [], []
    stamp = time.time_ns()
    for i in range(edits):
        rel = paths[i % len(paths)]
        word = f"zqxwatch{stamp}n{i}"
        before = len(records)
        with open(root / rel, "a", encoding="utf-8") as handle:
            handle.write(f"\nA line with the word {word}.\n")
        started, cpu = time.perf_counter(), _process_cpu_s()
        # polled every 25 ms: a tighter loop would take the GIL from the run it times
        _wait(lambda: mg.search(word, limit=1), 900, poll=0.025)
        keyword_s.append(time.perf_counter() - started)
        _wait(lambda: len(records) > before, 900, poll=0.025)
        done_s.append(time.perf_counter() - started)
        cpu_s.append(_process_cpu_s() - cpu)
        run_s.append(records[-1].seconds)
        embedded.append(records[-1].embedded)
        _wait(lambda: watcher.status.to_dict()["state"] == "idle", 900)
        time.sleep(debounce_ms / 1000 + 0.2)    # the run's own page events settle
    return {"keyword_searchable_s": _median(keyword_s), "vectors_current_s": _median(done_s),
            "run_s": _median(run_s), "cpu_s": _median(cpu_s),
            "sections_embedded": _median(embedded),
            "all_keyword_s": [round(x, 3) for x in keyword_s]}


def generate_notes(target: Path, count: int) -> int:
    """``count`` notes made from the vault's real pages, in turn: each its page's text
    without frontmatter under a title of its own ("Canvas 00042"; copies sharing titles and
    aliases would make every mention ambiguous), 500 to a folder. Deterministic."""
    pages = sorted(VAULT.rglob("*.md"))
    for i in range(count):
        source = pages[i % len(pages)]
        text = re.sub(r"\A---\n.*?\n---\n", "", source.read_text(encoding="utf-8"),
                      flags=re.S)
        name = f"{source.stem} {i:05d}"
        out = target / f"part{i // 500:02d}" / f"{name}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(f"# {name}\n\n{text}", encoding="utf-8")
    return count


def idle_workspace(folder: Path | None, tmp: Path, notes: int) -> Path:
    """``notes`` generated notes as wiki pages, embedded (hashing embedder; reused when
    ``folder`` has them). In wiki/, not raw/: the watcher watches both alike, and the offline
    compile of 10,000 notes takes far too long today (see the README)."""
    base = folder or tmp / "tenk"
    if (base / "wiki").is_dir():
        return base
    generate_notes(base / "wiki", notes)
    (base / "raw").mkdir(parents=True, exist_ok=True)
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    _cli("embed", "-C", str(base))
    return base


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _process_cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_idle(base: Path, seconds: float, *extra: str) -> dict[str, Any]:
    """CPU seconds of an idle `mindgraph watch` over ``seconds``."""
    status = base / ".mindgraph" / "sync-status.json"
    status.unlink(missing_ok=True)
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", "watch", "-C", str(base),
                                *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        started = time.perf_counter()
        _wait(lambda: status.is_file() and json.loads(status.read_text())["state"] == "idle"
              and json.loads(status.read_text())["runs"] >= 1, 900)
        startup = time.perf_counter() - started
        time.sleep(2)                       # let the startup's own page events settle
        before = _cpu_s(process.pid)
        time.sleep(seconds)
        spent = _cpu_s(process.pid) - before
        memory_kb = int(next(line.split()[1] for line in
                             Path(f"/proc/{process.pid}/status").read_text().splitlines()
                             if line.startswith("VmRSS:")))
    finally:
        process.terminate()
        process.wait(30)
    return {"cpu_s": round(spent, 3), "seconds": seconds,
            "cpu_percent": round(100 * spent / seconds, 3),
            "startup_s": round(startup, 1), "rss_mb": round(memory_kb / 1024, 1)}


def _wait(condition: Any, timeout: float, poll: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout} s")
        time.sleep(poll)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3) if values else 0.0


def main() -> None:
    """Run the benchmark and print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--only", choices=["latency", "idle"])
    parser.add_argument("--workspace", type=Path, help="the 883-note workspace to build or "
                        "reuse (default: a temporary one)")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--debounce-ms", type=int, default=500)
    parser.add_argument("--areas", nargs="+", choices=["raw", "wiki"], default=["raw"],
                        help="edit notes in raw/ (compiled by the run), pages in wiki/, or both")
    parser.add_argument("--no-embed", action="store_true", help="watch without embedding "
                        "(for a workspace without vectors, such as a 100k copy)")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--idle-workspace", type=Path, help="the 10,000-note workspace to "
                        "build or reuse (default: a temporary one; building it takes minutes)")
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not VAULT.is_dir():
        shared_corpora.require(CORPORA, "obsidian-help")
    out: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    if not args.json:
        print(f"mindgraph watch benchmark ({os.cpu_count()} cores, load "
              f"{out['load_before']:.1f} at the start)", flush=True)
    with tempfile.TemporaryDirectory(prefix="mindgraph-watch-bench-") as tmp:
        if args.only in (None, "latency"):
            base = latency_workspace(args.workspace, Path(tmp))
            out["latency"] = bench_latency(base, args.edits, args.debounce_ms,
                                           embed=not args.no_embed, areas=tuple(args.areas))
            if not args.json:
                _print_latency(out["latency"])
        if args.only in (None, "idle"):
            base = idle_workspace(args.idle_workspace, Path(tmp), args.notes)
            for key, extra in (("idle_native", ()), ("idle_polling", ("--polling",))):
                out[key] = bench_idle(base, args.idle_seconds, *extra)
                if not args.json:
                    _print_idle(out[key], args.notes, extra)
    out["load_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"load {out['load_after']:.1f} at the end")


def _print_latency(lat: dict[str, Any]) -> None:
    for area in ("raw", "wiki"):
        if area not in lat:
            continue
        one = lat[area]
        what = "note in raw/" if area == "raw" else "page in wiki/ (by hand)"
        print(f"change-to-searchable, one {what}, {lat['notes']} notes, debounce "
              f"{lat['debounce_ms']} ms, median of {lat['edits']} edits:")
        print(f"  keyword search finds the new word  {one['keyword_searchable_s']:.3f} s")
        print(f"  run done (its sections embedded)   {one['vectors_current_s']:.3f} s "
              f"(the run itself {one['run_s']:.3f} s, {one['cpu_s']:.3f} CPU s in this "
              f"process, {one['sections_embedded']:.0f} section(s) embedded)")
    print(f"  startup run {lat['startup_run_s']:.2f} s; then, when idle, the state files saved "
          f"in {lat['state_save_s']:.2f} s; peak RSS {lat['peak_rss_mb']:.0f} MB", flush=True)


def _print_idle(idle: dict[str, Any], notes: int, extra: tuple[str, ...]) -> None:
    name = "stat scans every 1 s" if extra else "native events"
    print(f"idle CPU, {notes} notes, {name}: {idle['cpu_s']:.3f} CPU s in "
          f"{idle['seconds']:.0f} s ({idle['cpu_percent']:.3f}%), RSS {idle['rss_mb']} MB, "
          f"startup {idle['startup_s']} s", flush=True)


if __name__ == "__main__":
    main()
