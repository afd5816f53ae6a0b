"""Where a folder of notes stands: whether it holds notes, the top of the vault it is in, and
the workspace beside it that compiles it. What a command run among one's notes (outside any
workspace, as `cd ~/vault && mindgraph search x` is) says to do instead."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

CONFIG_FILENAME = "mindgraph.yml"


def holds_notes(folder: Path, look_at: int = 1000) -> bool:
    """True when ``folder`` is an Obsidian vault, or its files (of its first ``look_at``
    entries) are mostly notes, two or more: a command run inside one's notes rather than
    their workspace (not /tmp, nor a home folder with a README.md)."""
    notes = files = 0
    try:
        with os.scandir(folder) as entries:
            for _, entry in zip(range(look_at), entries):
                if entry.name == ".obsidian" and entry.is_dir():
                    return True
                if entry.name.startswith(".") or not entry.is_file():
                    continue
                files += 1
                notes += entry.name.lower().endswith((".md", ".markdown"))
    except OSError:
        return False
    return notes >= 2 and 2 * notes >= files


def notes_top(folder: Path, levels: int = 8) -> Path:
    """The top of the notes ``folder`` is among: the nearest folder upwards (``levels`` at
    most) holding ``.obsidian``, else the highest of ``folder`` and the folders above it that
    all hold notes (``vault`` for ``vault/Plugins``)."""
    chain = [folder, *folder.parents][:levels]
    for candidate in chain:
        if (candidate / ".obsidian").is_dir():
            return candidate
    top = folder
    for candidate in chain[1:]:
        if candidate.parent == candidate or not holds_notes(candidate):
            break
        top = candidate
    return top


def workspace_compiling(folder: Path, levels: int = 8, look_at: int = 200) -> Path | None:
    """The workspace whose ``paths.raw`` is ``folder`` or a folder above it (``levels`` at
    most), found beside that folder among the first ``look_at`` entries of its parent, as
    `mindgraph init ~/vault-wiki --raw ~/vault` makes it; None when there is none."""
    for notes in [folder, *folder.parents][:levels]:
        if notes.parent == notes:
            break
        try:
            with os.scandir(notes.parent) as entries:
                siblings = [Path(e.path) for _, e in zip(range(look_at), entries)
                            if e.is_dir() and e.name != notes.name]
        except OSError:
            continue
        for sibling in sorted(siblings):
            raw = _raw_folder(sibling / CONFIG_FILENAME)
            if raw is not None and _same_folder(sibling / raw, notes):
                return sibling
    return None


def _raw_folder(config: Path) -> str | None:
    """``paths.raw`` as ``config`` sets it (None: no such file, unreadable, or not set)."""
    try:
        if not config.is_file() or config.stat().st_size > 1_000_000:
            return None
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        raw = data["paths"]["raw"]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError):
        return None
    return os.path.expanduser(raw) if isinstance(raw, str) and raw.strip() else None


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False
