"""Parameter checks shared by the REST API and the MCP server."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Iterable

from ..errors import ConfigError, NotFoundError


def parse_day(value: str | None) -> dt.date | None:
    """A YYYY-MM-DD string as a date (None stays None); ConfigError for a bad date."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise ConfigError(f"'{value}' is not a valid date; use YYYY-MM-DD.") from exc


def folder_inside(base: Path, folder: str, private: Iterable[Path] = ()) -> Path:
    """``folder`` resolved under ``base``; refuse anything that escapes it (clients are not
    trusted with the rest of the disk), and any folder that is, holds or lies in one of
    ``private`` (raw/, wiki/ and the state folder for an agent: their file names are other
    scopes' notes) with the same words as a folder that does not exist."""
    root = Path(base).resolve()
    try:
        target = (root / folder).resolve()
        inside = target.is_relative_to(root) and target.is_dir()
        hidden = [Path(p).resolve() for p in private]
        if any(target.is_relative_to(p) or p.is_relative_to(target) for p in hidden):
            inside = False
    except (OSError, ValueError):     # a NUL byte, a name too long: no such folder can exist
        inside = False
    if not inside:
        raise NotFoundError(f"{folder[:200]!r} is not a folder inside the workspace. "
                            f"Over REST and MCP, coverage reads only folders inside the "
                            f"workspace: name one relative to it (e.g. 'src'), or run "
                            f"`mindgraph coverage {folder[:200]}` for code outside it.")
    return target
