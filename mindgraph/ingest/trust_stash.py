"""The trust records of removed pages, kept for their notes' return.

A page whose raw note is gone is removed (removal.py), and with it the ``verification`` and
``evidence`` that `mindgraph verify --apply` wrote in it. Before a run removes such a page it
keeps that record in ``<state>/removed-trust.json``, under the note's raw path with the SHA-256
of the bytes the page was compiled from; when a note with those very bytes is compiled at that
path again and its page does not exist, the record is carried into the new page as a
recompile carries it (trust/carry.py) and leaves the file. A note that comes back changed
starts unverified, as any new page. The newest ``KEEP`` records are kept.

Unlike the rest of the state folder this file is not derived from anything: deleting it
forgets those records for good.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_json, read_text

FILENAME = "removed-trust.json"
KEEP = 20_000


class TrustStash:
    """The kept records, loaded on first use and written when changed (``save``)."""

    def __init__(self, state_dir: Path):
        self.path = Path(state_dir) / FILENAME
        self._records: dict[str, dict[str, Any]] | None = None
        self._dirty = False

    def _loaded(self) -> dict[str, dict[str, Any]]:
        if self._records is None:
            try:
                data = json.loads(read_text(self.path))
            except (OSError, ValueError):       # none yet, or damaged: nothing to give back
                data = {}
            self._records = {str(k): v for k, v in (data.get("records") or {}).items()
                             if isinstance(v, dict)} if isinstance(data, dict) else {}
        return self._records

    def keep(self, raw: str, sha256: str, wiki: str, record: str) -> None:
        """Remember the trust ``record`` (trust.carry.record_text) of the page ``wiki`` that
        the note ``raw`` with content ``sha256`` was compiled to."""
        if not record or not sha256:
            return
        records = self._loaded()
        records[raw] = {"sha256": sha256, "wiki": wiki, "record": record,
                        "removed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if len(records) > KEEP:
            for old in sorted(records, key=lambda k: records[k].get("removed", ""))[
                    :len(records) - KEEP]:
                del records[old]
        self._dirty = True

    def take(self, raw: str, sha256: str) -> bytes | None:
        """The record kept for the note ``raw`` with content ``sha256`` (as a page's bytes,
        for carry_record), forgotten once given; None when there is none."""
        if self._records is None:
            if not self.path.exists():      # the common case: nothing was ever removed
                self._records = {}          # with a record (only this run writes it: asked
                return None                 # once, not once per page)
        entry = self._loaded().get(raw)
        if entry is None or entry.get("sha256") != sha256:
            return None
        del self._loaded()[raw]
        self._dirty = True
        return str(entry.get("record", "")).encode("utf-8")

    def save(self) -> None:
        """Write the file if anything changed (before the pages it keeps records of go)."""
        if self._dirty and self._records is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(self.path, {"version": 1, "records": self._records})
            self._dirty = False
