"""Parameter checks shared by the REST API and the MCP server."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from ..errors import ConfigError, NotFoundError


def parse_day(value: str | None) -> dt.date | None:
    """A YYYY-MM-DD string as a date (None stays None); ConfigError for a bad date."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise ConfigError(f"'{value}' is not a valid date; use YYYY-MM-DD.") from exc


def folder_inside(base: Path, folder: str) -> Path:
    """``folder`` resolved under ``base``; refuse anything that escapes it (clients are not
    trusted with the rest of the disk)."""
    root = Path(base).resolve()
    target = (root / folder).resolve()
    if not target.is_relative_to(root) or not target.is_dir():
        raise NotFoundError(f"'{folder}' is not a folder inside the workspace {root}.")
    return target
