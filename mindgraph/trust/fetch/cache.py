"""Fetched evidence kept under the state folder, keyed by URL and by content hash.

::

    <state>/trust/evidence/urls/<sha256 of the URL>.json   {url, sha256, fetched}
    <state>/trust/evidence/texts/<sha256 of the text>.txt  the text that was checked

A run without the network (the default) checks a page against the copy fetched before and
says which evidence it lacked; a run with it fetches again and keeps the new copy. A fetch
that fails for a while (timeout, connection, 5xx, 429) falls back to the cached copy and says
so; one the source refused (404, not text, too large) is *unavailable*: a page is not checked
against a text its source no longer serves. A cache entry whose text is gone or does not hash
to its name is no copy.

Bounded (``prune``, after every verification run): an entry fetched more than
``trust.evidence_cache_max_days`` ago goes, then the oldest entries until the texts and entries
take at most ``trust.evidence_cache_max_bytes``, and every text no entry names any more. A
pruned URL is one an offline run lacks (and says so) until `verify --fetch` reads it again.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from ...fsutil import atomic_write_json, atomic_write_text, sha256_text
from .base import Fetched, Fetcher, FetchError

OFFLINE = ("not fetched: URL fetching is off (`mindgraph verify --fetch`, or trust.fetch_urls: "
           "true) and no copy is cached")


class EvidenceCache:
    """The texts fetched before, by URL."""

    def __init__(self, state_dir: Path):
        self.root = Path(state_dir) / "trust" / "evidence"

    def get(self, url: str) -> tuple[Fetched, str] | None:
        """The cached text of ``url`` and the day it was fetched, or None."""
        try:
            entry = json.loads(self._entry(url).read_text(encoding="utf-8"))
            digest = str(entry["sha256"])
            text = self._text(digest).read_text(encoding="utf-8")
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if sha256_text(text) != digest:
            return None
        return Fetched(text, digest), str(entry.get("fetched", ""))

    def put(self, url: str, fetched: Fetched) -> None:
        """Keep the text fetched from ``url`` (today)."""
        text_path = self._text(fetched.sha256)
        if not text_path.is_file():
            atomic_write_text(text_path, fetched.text)
        atomic_write_json(self._entry(url), {
            "url": url, "sha256": fetched.sha256,
            "fetched": dt.datetime.now(dt.timezone.utc).date().isoformat()})

    def prune(self, max_days: int, max_bytes: int, today: dt.date) -> int:
        """Drop entries older than ``max_days``, then the oldest until the cache takes at most
        ``max_bytes``, and the texts left unnamed; the number of entries dropped."""
        entries = []                                # (fetched day, path, text digest, size)
        for path in (self.root / "urls").glob("*.json"):
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
                day, digest = dt.date.fromisoformat(str(entry["fetched"])), str(entry["sha256"])
            except (OSError, ValueError, KeyError, TypeError):
                day, digest = dt.date.min, ""     # unreadable: no copy, the first to go
            entries.append((day, path, digest, _size(path)))
        texts = {p.stem: _size(p) for p in (self.root / "texts").glob("*.txt")}
        entries.sort(key=lambda e: (e[0], _mtime(e[1])))     # the oldest first
        kept = [e for e in entries if (today - e[0]).days <= max_days]
        total = sum(e[3] for e in kept) + sum(texts.get(d, 0) for d in {e[2] for e in kept})
        while kept and total > max_bytes:
            day, path, digest, size = kept.pop(0)
            total -= size + (texts.get(digest, 0) if all(e[2] != digest for e in kept) else 0)
        named = {e[2] for e in kept}
        for _, path, _, _ in set(entries) - set(kept):
            path.unlink(missing_ok=True)
        for digest in set(texts) - named:
            (self.root / "texts" / f"{digest}.txt").unlink(missing_ok=True)
        return len(entries) - len(kept)

    def _entry(self, url: str) -> Path:
        return self.root / "urls" / f"{sha256_text(url)}.json"

    def _text(self, digest: str) -> Path:
        return self.root / "texts" / f"{digest}.txt"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


class CachedUrls:
    """URLs read through the cache: live when ``live`` is given, else the cached copy only.
    Each URL is fetched at most once per instance (one verification run)."""

    def __init__(self, cache: EvidenceCache, live: Fetcher | None = None):
        self.cache = cache
        self.live = live
        self._seen: dict[str, Fetched | FetchError] = {}

    def fetch(self, target: str) -> Fetched:
        """The text of URL ``target``, live or cached; FetchError when neither."""
        if target not in self._seen:
            self._seen[target] = self._fetch(target)
        found = self._seen[target]
        if isinstance(found, FetchError):
            raise found
        return found

    def _fetch(self, url: str) -> Fetched | FetchError:
        if self.live is None:
            return self._cached(url, "") or FetchError(OFFLINE)
        try:
            fetched = self.live.fetch(url)
        except FetchError as exc:
            if exc.transient:
                return self._cached(url, f"; fetching it failed ({exc.reason})") or exc
            return exc
        self.cache.put(url, fetched)
        return fetched

    def _cached(self, url: str, why: str) -> Fetched | None:
        found = self.cache.get(url)
        if found is None:
            return None
        fetched, day = found
        return Fetched(fetched.text, fetched.sha256, f"the copy cached on {day}{why}")
