"""``ingest --only``: which raw notes a run looks at (a path or folder relative to raw/)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ..errors import ConfigError


def only_selector(raw_dir: Path, only: Iterable[str | Path], raw_paths: list[str],
              state_paths: list[str]) -> Callable[[str], bool]:
    """A predicate for --only: a raw-relative path or folder, or a path to one under raw/."""
    prefixes = []
    for item in only:
        prefixes.append(only_path(raw_dir, item))
    if not prefixes:
        return lambda path: True
    known = set(raw_paths) | set(state_paths)
    for prefix, given in zip(prefixes, only):
        if prefix and not any(p == prefix or p.startswith(prefix + "/") for p in known):
            raise ConfigError(f"--only {given}: no note or folder of that name under raw/ "
                              f"({raw_dir}). Give a path relative to raw/, e.g. "
                              f"--only folder/note.md.")

    def selected(path: str) -> bool:
        return any(not p or path == p or path.startswith(p + "/") for p in prefixes)

    return selected


def only_path(raw_dir: Path, item: str | Path) -> str:
    candidate = Path(item)
    if candidate.is_absolute() or candidate.exists():
        try:
            return candidate.resolve().relative_to(raw_dir.resolve()).as_posix().strip(".")
        except ValueError:
            if candidate.is_absolute():
                raise ConfigError(f"--only {item}: not under raw/ ({raw_dir}).") from None
    text = str(item).replace("\\", "/").strip()
    while text.startswith("./"):
        text = text[2:]
    return text.strip("/")
