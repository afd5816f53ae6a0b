"""Evidence for a page: the texts it is checked against, gathered once per run.

First the page's own raw note(s) (is the rewrite faithful to what the person wrote?), then
every local file it links to, then every URL it cites (citations.py). Each is read by a
fetcher (fetch/): raw notes only inside raw/, local files only inside raw/ and wiki/ and only
those every reader of the page may read (reach.py: never the state folder or the
configuration, nothing of another scope), URLs through the evidence cache (live only when
fetching is on). What could not be read is *unavailable*, with the reason, and is never
dropped: the record says what was lacked; what was refused is also listed for the plan
(``refused``).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..fsutil import sha256_bytes
from ..page.markdown import split_frontmatter
from .citations import cited_files, cited_urls
from .fetch.base import Fetcher, FetchError
from .reach import EvidenceReach, PageReach, Refusal
from .record import Provenance, TrustRecord

MAX_EVIDENCE_BYTES = 5_000_000


@dataclass(frozen=True)
class EvidenceText:
    """One piece of evidence: what it is, and its text (None when it could not be read)."""

    kind: str           # raw_note | file | url
    ref: str            # raw:path, file:path, or the URL
    text: str | None
    sha256: str = ""
    reason: str = ""    # why it is unavailable
    note: str = ""      # how it was read when not live ("the copy cached on …")


class EvidenceCollector:
    """Gathers each page's evidence with the fetchers of one run."""

    def __init__(self, raw_dir: Path, wiki_dir: Path, files: Fetcher, urls: Fetcher,
                 reach: EvidenceReach):
        self.raw_dir = Path(raw_dir)
        self.wiki_dir = Path(wiki_dir)
        self.files = files
        self.urls = urls
        self.reach = reach
        self.tally: Counter[str] = Counter()   # "url cached": how each piece was read
        self.refused: list[Refusal] = []        # files no reader of their page may read

    def summary(self) -> dict[str, int]:
        """How many pieces of evidence of each kind were read, read from the cache, lacked."""
        return dict(sorted(self.tally.items()))

    def collect(self, page_path: str, text: str, provenance: Provenance,
                frontmatter: Mapping[str, Any] | None = None) -> list[EvidenceText]:
        """The raw notes, local files and URLs of the page at wiki-relative ``page_path``
        (``frontmatter``, parsed: where its scope comes from)."""
        reach = self.reach.for_page(page_path, frontmatter)
        refused = len(self.refused)
        found = [self._raw(source.path, reach) for source in provenance.sources]
        _, body, _ = split_frontmatter(text)
        folders = self._folders(page_path, provenance)
        for target in cited_files(body):
            found.append(self._file(target, folders, reach))
        for url in cited_urls(body):
            found.append(_fetched("url", url, self.urls, url))
        refs = {r.ref for r in self.refused[refused:]}
        for item in found:
            state = "refused" if item.text is None and item.ref in refs else \
                "lacked" if item.text is None else "cached" if item.note else "read"
            self.tally[f"{item.kind} {state}"] += 1
        return found

    def out_of_reach(self, page_path: str, record: TrustRecord,
                     frontmatter: Mapping[str, Any] | None) -> bool:
        """True when the page's recorded evidence holds a file (or raw note) it may not read
        now — recorded before reach.py decided, or before the scopes changed: its quotes are
        in the page, so it is due again whatever its freshness. Decided from the paths alone."""
        reach = self.reach.for_page(page_path, frontmatter)
        folders = self._folders(page_path, record.provenance)
        for source in record.evidence.sources:
            if not source.available:
                continue
            if source.kind == "file" and source.ref.startswith("file:"):
                target = source.ref.removeprefix("file:")
                if all(reach.refusal(folder / target) for folder in folders):
                    return True
            elif source.kind == "raw_note" and source.ref.startswith("raw:"):
                if reach.refusal(self.raw_dir / source.ref.removeprefix("raw:"), own=True):
                    return True
        return False

    def _folders(self, page_path: str, provenance: Provenance) -> list[Path]:
        """Where a linked file is looked for: the raw note's folder, then the page's."""
        folders = [self.raw_dir / os.path.dirname(s.path) for s in provenance.sources[:1]]
        folders.append(self.wiki_dir / os.path.dirname(page_path))
        return folders

    def _raw(self, rel: str, reach: PageReach) -> EvidenceText:
        """A raw note the page names (in raw/, not hidden, not the state folder)."""
        path = self.raw_dir / rel
        why = reach.refusal(path, own=True)
        if not why:
            return _read_raw(self.raw_dir, rel)
        ref = f"raw:{rel}"
        self.refused.append(reach.refused(ref, path, why))
        return EvidenceText("raw_note", ref, None, reason=f"{ref} {why}")

    def _file(self, target: str, folders: list[Path], reach: PageReach) -> EvidenceText:
        """A linked file, relative to the raw note's folder, else to the page's: the first
        one there the page may read, else the first refusal (no fetch: whether a file out of
        reach exists is not said)."""
        ref = f"file:{target}"
        refusal: Refusal | None = None
        for folder in folders:
            path = folder / target
            why = reach.refusal(path)
            if why:
                refusal = refusal or reach.refused(ref, path, why)
                continue
            result = _fetched("file", ref, self.files, str(path))
            if result.text is not None or not result.reason.endswith("does not exist"):
                return result
        if refusal is not None:
            self.refused.append(refusal)
            return EvidenceText("file", ref, None, reason=f"{ref} {refusal.reason}")
        return EvidenceText("file", ref, None, reason=f"{ref} does not exist next to the "
                            f"raw note or the page")


def _fetched(kind: str, ref: str, fetcher: Fetcher, target: str) -> EvidenceText:
    try:
        got = fetcher.fetch(target)
    except FetchError as exc:
        return EvidenceText(kind, ref, None, reason=exc.reason)
    return EvidenceText(kind, ref, got.text, got.sha256, note=got.note)


def _read_raw(raw_dir: Path, rel: str) -> EvidenceText:
    ref = f"raw:{rel}"
    root = raw_dir.resolve()
    target = (root / rel)
    try:
        real = target.resolve()
        if not real.is_relative_to(root):
            return EvidenceText("raw_note", ref, None,
                                reason=f"{ref} lies outside raw/; not read")
        if not real.is_file():
            return EvidenceText("raw_note", ref, None, reason=f"{ref} is gone")
        if real.stat().st_size > MAX_EVIDENCE_BYTES:
            return EvidenceText("raw_note", ref, None,
                                reason=f"{ref} is over {MAX_EVIDENCE_BYTES} bytes")
        data = real.read_bytes()
    except OSError as exc:
        return EvidenceText("raw_note", ref, None,
                            reason=f"{ref} cannot be read ({exc.strerror or exc})")
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    return EvidenceText("raw_note", ref, text, sha256_bytes(data))
