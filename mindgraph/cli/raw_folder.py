"""A raw folder that is gone: a vault moved or renamed, or a mistyped ``paths.raw``. `ingest`
refuses it; `watch` watched the missing folder in silence and `check` reported a note of it
"deleted" per page with findings (74 on the Help vault), so both say it as ingest does."""

from __future__ import annotations

from ..config import Settings
from ..ingest.state import STATE_FILENAME


def require_raw_folder(settings: Settings) -> None:
    """Raise the config error naming ``paths.raw`` (and its line) when the raw folder does not
    exist but was meant to: the config names it, or an ingest read notes from it. A wiki
    kept by hand, without raw/ or a config file, is left alone."""
    if settings.raw_dir.is_dir():
        return
    if settings.raw_named_at() or (settings.state_dir / STATE_FILENAME).is_file():
        missing = settings.missing_raw()
        if missing is not None:
            raise missing
