"""Evidence for a page: the text it is checked against, fetched once per run.

First the page's own raw note(s) (is the rewrite faithful to what the person wrote?). A
fetcher never reads outside the workspace: a raw path that climbs out of raw/ (or a symlink
that leads out) is *unavailable*, like a raw note that is gone. Local files and URLs cited in
the page are later fetchers of the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..fsutil import sha256_bytes
from .record import Provenance

MAX_EVIDENCE_BYTES = 5_000_000


@dataclass(frozen=True)
class EvidenceText:
    """One piece of evidence: what it is, and its text (None when it could not be read)."""

    kind: str           # raw_note | file | url
    ref: str            # raw:path, file:path, or the URL
    text: str | None
    sha256: str = ""
    reason: str = ""    # why it is unavailable


def raw_note_evidence(raw_dir: Path, provenance: Provenance) -> list[EvidenceText]:
    """The raw notes a page was compiled from, read from ``raw_dir``."""
    return [_read_raw(Path(raw_dir), source.path) for source in provenance.sources]


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
