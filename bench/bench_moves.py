"""The cost of a rename (issue 15): seconds and embedding calls to bring the wiki, the indexes
and the vectors up to date after one raw note is renamed, on the 883-page Obsidian Help vault
copied as raw notes.

    python bench/bench_moves.py [--renames 5] [--provider local|hashing]

It ingests and embeds the vault once (the default offline setup: offline compiler, local
MiniLM, embedded store), then renames ``--renames`` notes one at a time — each time a plain
rename (same body), then a move to another folder with one sentence edited — and measures,
in this process, `ingest` (seconds) and `embed` (seconds, embedding calls and texts). Side
by side, what a rename cost before moves were told (and still costs when the two halves land
in separate runs): the note deleted in one ingest + embed, added back under the new name in
the next. Medians over the renames; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPUS = shared_corpora.corpora() / "obsidian-help"


class Counting:
    """Wraps an embedding provider and counts its calls and texts."""

    def __init__(self, inner):
        self.inner, self.calls, self.texts = inner, 0, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed_documents(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed_documents(texts)


def embed(base: Path):
    from mindgraph.config import load_settings
    from mindgraph.core import Mindgraph

    mg = Mindgraph(load_settings(base))
    counting = Counting(mg.embedding_provider())
    mg._embedder = counting
    started = time.perf_counter()
    report, _ = mg.embed()
    return time.perf_counter() - started, counting, report


def ingest(base: Path):
    from mindgraph.config import load_settings
    from mindgraph.ingest import run_ingest

    started = time.perf_counter()
    report = run_ingest(load_settings(base))
    return time.perf_counter() - started, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--renames", type=int, default=5)
    parser.add_argument("--provider", default="local", choices=("local", "hashing"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        shutil.copytree(CORPUS, base / "raw")
        (base / "wiki").mkdir()
        (base / "mindgraph.yml").write_text(f"embedding:\n  provider: {args.provider}\n")
        seconds, report = ingest(base)
        print(f"first ingest: {report.ingested} notes in {seconds:.1f} s")
        seconds, counting, first = embed(base)
        print(f"first embed: {first.embedded} chunks, {counting.calls} calls in {seconds:.1f} s "
              f"({args.provider})")
        notes = sorted(p for p in (base / "raw" / "en").rglob("*.md")
                       if p.stat().st_size > 2000)
        step = max(1, len(notes) // args.renames)
        rows: dict[str, list[tuple[float, float, int, int, int]]] = {
            "rename": [], "move + edit": [], "delete, add": []}
        for note in notes[::step][:args.renames]:
            renamed = note.with_name(f"{note.stem} (renamed).md")
            note.rename(renamed)
            rows["rename"].append(measure(base, renamed))
            moved = base / "raw" / "moved" / renamed.name
            moved.parent.mkdir(exist_ok=True)
            text = renamed.read_text(encoding="utf-8")
            renamed.unlink()
            moved.write_text(text.rstrip("\n") + "\n\nOne more sentence at the end.\n",
                             encoding="utf-8")
            rows["move + edit"].append(measure(base, moved))
            text = moved.read_text(encoding="utf-8")
            moved.unlink()
            gone = measure(base, moved, moved=0)
            back = moved.with_name(f"{moved.stem} again.md")
            back.write_text(text, encoding="utf-8")
            added = measure(base, back, moved=0)
            rows["delete, add"].append(tuple(a + b for a, b in zip(gone[:4], added[:4]))
                                       + (added[4],))
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"\n{len(rows['rename'])} notes, medians (load average {load}) | ingest s | "
              f"embed s | embedding calls | texts embedded | sections of the page")
        for kind, values in rows.items():
            ingest_s, embed_s, calls, texts, sections = (statistics.median(v) for v in
                                                         zip(*values))
            print(f"{kind:<12} | {ingest_s:8.2f} | {embed_s:7.2f} | {calls:15.0f} | "
                  f"{texts:14.0f} | {sections:.0f}")


def measure(base: Path, note: Path, moved: int = 1) -> tuple[float, float, int, int, int]:
    ingest_s, report = ingest(base)
    assert report.moved == moved, [f for f in report.files if f.status != "skipped"]
    embed_s, counting, sync = embed(base)
    from mindgraph.config import load_settings
    from mindgraph.ingest.pipeline import wiki_path_for
    from mindgraph.stores.factory import create_store

    page = wiki_path_for(note.relative_to(base / "raw").as_posix())
    store = create_store(load_settings(base))
    sections = len(store.hashes(sync.model_version).get(page, {}))
    return ingest_s, embed_s, counting.calls, counting.texts, sections


if __name__ == "__main__":
    main()
