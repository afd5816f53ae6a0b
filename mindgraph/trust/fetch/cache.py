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

    def _entry(self, url: str) -> Path:
        return self.root / "urls" / f"{sha256_text(url)}.json"

    def _text(self, digest: str) -> Path:
        return self.root / "texts" / f"{digest}.txt"


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
