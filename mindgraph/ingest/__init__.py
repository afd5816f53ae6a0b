"""Compile raw/ into wiki/: incremental, idempotent and crash-safe (see pipeline.py)."""

from .pipeline import make_compiler, run_ingest, wiki_path_for
from .report import FileOutcome, IngestReport
from .state import STATE_FILENAME, FileState, IngestState

__all__ = ["FileOutcome", "FileState", "IngestReport", "IngestState", "STATE_FILENAME",
           "make_compiler", "run_ingest", "wiki_path_for"]
