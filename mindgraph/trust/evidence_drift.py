"""Whether the local files a page was verified against still say what they said.

A trust record keeps the SHA-256 of each piece of evidence it checked (record.py,
``evidence.sources``). The design makes a page stale when its references change: the set of
cited sources (freshness.py) and, for a cited local file, its text — a policy file edited
from "3 devices" to "1 device" left the page citing it a fresh, grounded L2. A file is found as
verify found it (the raw note's folder, then the page's: evidence.py) and read as it read it
(trust/fetch/files.py), so an unchanged file hashes the same. Raw notes are not re-read: a
changed raw note recompiles its page, whose body then differs (``content_changed``); URLs are
not fetched (a freshness check makes no network call). Hashes are remembered by the file's
stamp (mtime, ctime, inode, size), so a search showing trust reads a file once while it is
unchanged.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..fsutil import stamp_of
from .fetch.base import FetchError
from .fetch.files import FileFetcher
from .record import TrustRecord

_MEMO_SIZE = 10_000


class EvidenceFiles:
    """Re-hashes the local files of trust records, for freshness."""

    def __init__(self, raw_dir: Path, wiki_dir: Path, max_bytes: int):
        self.raw_dir, self.wiki_dir = Path(raw_dir), Path(wiki_dir)
        self.files = FileFetcher((self.raw_dir, self.wiki_dir), max_bytes)
        self._memo: dict[tuple[str, object], str] = {}
        self._lock = threading.Lock()

    def changed(self, page_path: str, record: TrustRecord) -> bool:
        """True when a local file the record checked now reads differently (or is gone)."""
        for source in record.evidence.sources:
            if source.kind != "file" or not source.sha256 or not source.ref.startswith("file:"):
                continue
            target = source.ref.removeprefix("file:")
            folders = [self.raw_dir / os.path.dirname(s.path)
                       for s in record.provenance.sources[:1]]
            folders.append(self.wiki_dir / os.path.dirname(page_path))
            current = next((h for h in (self._hash(folder / target) for folder in folders)
                            if h is not None), None)
            if current != source.sha256:
                return True
        return False

    def _hash(self, path: Path) -> str | None:
        """The SHA-256 of the text verify would check at ``path``; None when unreadable."""
        try:
            stamp = stamp_of(path.stat())
        except OSError:
            return None
        key = (str(path), stamp)
        with self._lock:
            if key in self._memo:
                return self._memo[key] or None
        try:
            digest: str | None = self.files.fetch(str(path)).sha256
        except FetchError:
            digest = None
        with self._lock:
            if len(self._memo) >= _MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = digest or ""
        return digest
