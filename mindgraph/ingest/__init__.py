"""Compile raw/ into wiki/: incremental, idempotent and crash-safe (see pipeline.py)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["FileOutcome", "FileState", "IngestReport", "IngestState", "STATE_FILENAME",
           "make_compiler", "run_ingest", "wiki_path_for"]
_HOME = {"make_compiler": "pipeline", "run_ingest": "pipeline", "wiki_path_for": "pipeline",
         "FileOutcome": "report", "IngestReport": "report", "STATE_FILENAME": "state",
         "FileState": "state", "IngestState": "state"}


def __getattr__(name: str) -> Any:
    """Import on first use: a hybrid search reads ingest.moves (where moved pages' vectors
    went) and a no-op embed the state, and importing the pipeline with them (the compiler,
    the linker, the CJK segmenters' modules) cost every such process its start-up."""
    if name in _HOME:
        return getattr(import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
