"""Helpers for the watcher tests (imported by name: tests are not a package)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from mindgraph.core import Mindgraph
from mindgraph.sync import Watcher

CONFIG = "embedding:\n  provider: hashing\n  dimension: 64\n"


def make_workspace(base: Path, notes: dict[str, str]) -> Path:
    """A workspace with the hashing embedder (fast, real vectors) and these raw notes."""
    (base / "raw").mkdir(parents=True)
    (base / "mindgraph.yml").write_text(CONFIG)
    for path, text in notes.items():
        write(base / "raw" / path, text)
    return base


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def wait_until(condition: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    """Poll ``condition`` every 20 ms until it is truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")
        time.sleep(0.02)


class Watching:
    """A started watcher over a workspace, the records of its runs, and ways to look."""

    def __init__(self, mg: Mindgraph, watcher: Watcher, records: list):
        self.mg, self.watcher, self.records = mg, watcher, records

    @property
    def status(self) -> dict[str, Any]:
        return self.watcher.status.to_dict()

    def settle(self, runs_before: int | None = None, timeout: float = 60.0) -> None:
        """Wait until a run after ``runs_before`` has ended and nothing is pending."""
        before = len(self.records) if runs_before is None else runs_before

        def done() -> bool:
            s = self.status
            return len(self.records) > before and s["state"] == "idle" \
                and not s["pending_count"]
        wait_until(done, timeout, "a run to finish")

    def hits(self, word: str) -> list[str]:
        """Pages the keyword index finds for ``word``."""
        return [r.path for r in self.mg.search(word, limit=50)]

    def vectors(self) -> dict[str, dict[str, str]]:
        """Page → chunk id → hash of the stored vectors."""
        provider = self.mg.embedding_provider()
        return self.mg.vector_store().hashes(provider.model_version)

    def graph_nodes(self) -> set[str]:
        return set(self.mg.graph().graph.nodes)


@contextlib.contextmanager
def watching(base: Path, **options: Any) -> Iterator[Watching]:
    """Start a watcher (debounce 150 ms unless told) and wait for its startup run."""
    mg = Mindgraph.open(base)
    mg.auto_refresh = False     # as in a server: only the watcher brings the indexes current
    records: list = []
    options.setdefault("debounce_ms", 150)
    watcher = Watcher(mg, on_run=records.append, **options).start()
    try:
        w = Watching(mg, watcher, records)
        w.settle(0)
        yield w
    finally:
        watcher.stop()
        mg.close()
