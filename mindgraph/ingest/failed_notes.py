"""Raw notes whose last compile failed, found by the name a link or a reader gives them.

A note with broken frontmatter has no page, so `get Bob` and a link [[Bob]] would only say
"no page"; the ingest state's failure record says why there is none (``FileState.error``),
and this module finds that record by the name: raw path with or without its suffix, or file
name (as Obsidian resolves [[Bob]] to people/Bob.md), case-insensitively."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping

from .notes import wiki_path_for
from .state import STATE_FILENAME, FileState, IngestState


def failed_notes(state_dir: Path, visible: Callable[[str], bool] | None = None,
                 raw_dir: Path | None = None) -> dict[str, FileState]:
    """raw path → record of every note whose last compile failed (none without a state);
    with ``raw_dir``, of those still in it (a note deleted since, during a run held by the
    removal guard, no longer "exists but failed to compile")."""
    path = Path(state_dir) / STATE_FILENAME
    if not path.is_file():
        return {}
    return only_present(IngestState.load(path).files, visible, raw_dir)


def only_present(files: Mapping[str, FileState], visible: Callable[[str], bool] | None,
                 raw_dir: Path | None) -> dict[str, FileState]:
    """The failed records of ``files`` that ``visible`` accepts and, with ``raw_dir``, whose
    note is still there (a dangling symlink counts: ingest says what it is)."""
    return {raw: record for raw, record in files.items()
            if record.status == "failed" and (visible is None or visible(raw))
            and (raw_dir is None or present(Path(raw_dir) / raw))}


def present(path: Path) -> bool:
    """True when ``path`` is there (a dangling symlink counts)."""
    return path.exists() or path.is_symlink()


def failed_note_named(failed: Mapping[str, FileState], name: str) -> str | None:
    """The raw path of the failed note ``name`` refers to (None when none or several do)."""
    wanted = name.strip().lower().removesuffix(".md")
    hits = [raw for raw in failed
            if wanted in (_plain(raw), _plain(raw).rsplit("/", 1)[-1])]
    return hits[0] if len(hits) == 1 else None


def failure_text(raw: str, record: FileState, raw_folder: str = "raw") -> str:
    """"Its raw note raw/people/Bob.md exists but failed to compile: <why>" and what to do."""
    why = record.error.strip() or "no reason recorded."
    return (f"Its raw note {raw_folder.rstrip('/')}/{raw} exists but failed to compile: "
            f"{why} Fix the note and run `mindgraph ingest` (`mindgraph check` lists every "
            f"note that failed).")


def _plain(raw: str) -> str:
    return wiki_path_for(raw).lower().removesuffix(".md")
