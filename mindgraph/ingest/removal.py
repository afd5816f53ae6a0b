"""What happens to the page of a raw note that is gone: removed when it is exactly what we
wrote, kept and marked ``source_deleted: true`` when a person edited it since."""

from __future__ import annotations

from typing import Any

from ..fsutil import sha256_bytes
from ..trust.carry import without_record
from .report import Outcome
from .state import IngestState
from .wikifs import WikiWriter


def removal_verdict(wiki: WikiWriter, state: IngestState, path: str,
                    record: Any, dry_run: bool = False) -> tuple[Outcome, str]:
    """("removed" | "kept", reason) for the page of a raw note that is gone; with
    ``dry_run``, what would be done."""
    data = wiki.read(record.wiki) if record.wiki else None
    if data is None or state.ingested_elsewhere(path, record.wiki):
        return "removed", "raw note deleted; it had no wiki page of its own."
    if written_by_us(data, record):
        removed = "would remove" if dry_run else "removed"
        return "removed", f"raw note deleted; {removed} wiki/{record.wiki}."
    kept = "would keep it and mark it" if dry_run else "kept it and marked it"
    return "kept", (f"raw note deleted, but wiki/{record.wiki} was edited by hand after "
                    f"mindgraph wrote it: {kept} source_deleted: true. "
                    f"Delete it yourself if it is no longer needed.")


def written_by_us(data: bytes, record: Any) -> bool:
    """True when a page is exactly what we wrote (or, for a record left pending by a crash,
    a page compiled from that very raw content by that compiler)."""
    if record.wiki_sha256 and page_sha256(data) == record.wiki_sha256:
        return True
    # a pending record keeps the hash of the page before it: a run killed after writing the
    # new page and before recording it left a page of ours that this hash does not know
    if record.status != "pending" or not record.sha256:
        return False
    head = data[:4096].decode("utf-8", errors="replace")
    return f"sha256: {record.sha256}" in head and (f"generator: {record.compiler}" in head
                                                   or f"compiler: {record.compiler}" in head)


def page_sha256(data: bytes) -> str:
    """The hash that tells a hand edit: of the page without its trust record (which
    `mindgraph verify` writes and a recompile carries over)."""
    return sha256_bytes(without_record(data))
