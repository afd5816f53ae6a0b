"""The removal guard: a run that would remove most of the wiki is held, not applied.

An empty or wrong raw/ looks to an ingest exactly like every note deleted: a vault not mounted
or not synced yet, ``paths.raw`` pointing at another folder. Applied, such a run removes every
page and, with them, what `mindgraph verify --apply` wrote in them. So a run that would remove
the pages of **every** note that had one, or of **more than half of them when that is more
than 20**, is refused before anything is written (``RemovalsHeld``, naming raw/ and the
counts); ``allow`` (`mindgraph ingest --allow-removals`) applies it. Hand-edited pages that
would only be kept and marked count too: the run would still drop their notes' records.
The watcher holds such a run the same way and reports it in its status (sync/run.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ..errors import RemovalsHeld
from ..fsutil import read_bytes
from ..trust.carry import record_text

HELD_OVER = 20          # more pages than this, and
HELD_SHARE = 0.5        # more than this share of them, or all of them: held


def held(removing: int, pages: int) -> bool:
    """True when removing ``removing`` of ``pages`` pages must be asked for explicitly."""
    return removing > 0 and (removing >= pages
                             or (removing > HELD_OVER and removing > pages * HELD_SHARE))


def check_removals(removing: int, pages: int, notes: int, raw_dir: Path, source: str,
                   verified: Callable[[], int] | None = None) -> None:
    """Raise ``RemovalsHeld`` when a run removing ``removing`` of the ``pages`` pages that
    have a raw note, with ``notes`` notes found in ``raw_dir``, is to be held; ``verified``
    counts the pages to remove that hold a trust record (asked only when held)."""
    if not held(removing, pages):
        return
    where = source if source != "(defaults)" else "mindgraph.yml"
    share = "every one" if removing >= pages else f"{removing * 100 // pages}%"
    found = "has no notes" if notes == 0 else f"has {notes:,} note{'s' * (notes != 1)}"
    records = verified() if verified is not None else 0
    trust = (f", {'with' if records == removing else f'{records:,} of them with'} the trust "
             f"records `mindgraph verify --apply` wrote in them" if records else "")
    raise RemovalsHeld(
        f"ingest held: raw/ ({raw_dir}) {found}, and this run would remove {removing:,} of "
        f"the {pages:,} wiki pages compiled from notes ({share}){trust}. Nothing was "
        f"removed. If raw/ is not "
        f"mounted or not synced yet, or paths.raw in {where} names the wrong folder, fix "
        f"that and run again. If you did delete those notes, run `mindgraph ingest "
        f"--allow-removals`. (A run is held when it would remove every page, or more than "
        f"half of them and more than {HELD_OVER}.)")


def pages_with_trust(wiki_dir: Path, pages: Iterable[str]) -> int:
    """How many of ``pages`` (wiki-relative) hold a trust record (`verify --apply`'s); a page
    that cannot be read holds none that a removal would lose."""
    count = 0
    for page in pages:
        try:
            data = read_bytes(Path(wiki_dir) / page)
        except OSError:         # gone, unreadable, not a regular file (fsutil.UnreadableFile)
            continue
        count += bool(record_text(data))
    return count
