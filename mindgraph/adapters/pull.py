"""`mindgraph pull`: run the configured adapters and file their documents under raw/<target>/.

This is the only code that writes raw/. Every file name is sanitised and the final path is
checked against the real (symlink-resolved) target folder, so no document can land outside
raw/<target>/. A file whose content is unchanged is not rewritten, and a file is overwritten
only while it holds what pull last wrote there (owned.py): a note a person wrote, or a pulled
one they edited, is kept and the document filed beside it, said on stderr and in ``--json``
(``instead_of``). Only a remote adapter's (a note app's) notes are ever deleted: those of
items the app no longer has, and only while they hold what pull wrote (mirror.py). A
document over ``limits.max_page_bytes`` (what ingest and every reader refuse to read) is
skipped, never truncated, and said so; the filesystem adapter does not even read it. One pull
takes at most ``limits.max_pull_notes`` documents, and at most ``limits.max_pull_bytes`` bytes
of them, from each adapter (a hostile or huge app cannot fill the disk): the listing is read no
further than that. A note app's listing (``limit_listing``: many answers, before any note) is
read no further than ``limits.max_pull_bytes`` bytes of the app's answers either, so a hostile
app cannot make one pull hold gigabytes in memory; then none of its notes is pulled. Nor past
``limits.max_pull_notes`` items: it stops there. A listing cut by either limit keeps its most
recently modified documents (those fetch() returned; a generator is read no further, so its
first ones). A pull a limit cut says so, with how many documents it left out (``left_out``),
and removes none of that app's notes (the items past the limit are not gone from the app).
Two documents whose paths one file system takes for one (macOS, Windows: case and Unicode
folding, filenames.collision_key) are both filed, the second beside the first (twin_paths). One
pull of a workspace runs at a time (lock.py: a second refuses, naming the lock), and each
adapter's manifest is written ahead of its files (mirror.py), so a pull killed midway leaves no
file it wrote unrecorded.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..config import Settings
from ..errors import AdapterError, ConfigError
from ..filenames import collision_key
from ..fsutil import atomic_write_bytes, read_bytes
from .base import ListingTooLarge, RawDocument, safe_relative_path
from .loader import ConfiguredAdapter, load_adapter
from .mirror import gone, load_manifest, manifest_path, save_manifest
from .notes import ITEM_ID_KEY
from .lock import pull_lock
from .owned import beside, digest, left_copy, may_overwrite, place, strangers
from .take import over_listing, take, too_large


@dataclass(frozen=True)
class PulledFile:
    """What happened to one fetched document (or to an adapter that failed)."""

    adapter: str
    path: str          # raw-relative path written, or the document's file name if rejected
    status: str        # written | unchanged | rejected | failed | removed | kept | skipped
    #                    | limited (an adapter's listing cut at limits.max_pull_notes or
    #                      limits.max_pull_bytes)
    reason: str = ""
    instead_of: str = ""   # the raw path the document belongs at, holding a file pull may
    #                        not overwrite (kept as it is); ``path`` is the copy beside it
    left_out: int = 0      # limited: the documents of the listing the pull did not take
    left_out_at_least: bool = False   # limited: the listing was read no further, so more
    #                                   may be left out than that


@dataclass(frozen=True)
class PullReport:
    """Counts and per-file outcomes of one pull."""

    written: int
    unchanged: int
    rejected: int
    failed_adapters: int
    seconds: float
    dry_run: bool
    files: tuple[PulledFile, ...]
    removed: int = 0   # notes of items a note app no longer has
    skipped: int = 0   # over limits.max_page_bytes: not pulled
    limited_adapters: int = 0   # listed more than a pull limit: the rest not pulled
    left_out: int = 0           # documents those limits left out (at least: see files)

    @property
    def ok(self) -> bool:
        """True when every adapter ran, every document was filed and no limit cut a listing."""
        return not self.rejected and not self.failed_adapters and not self.limited_adapters

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data = asdict(self)
        data["files"] = [asdict(f) for f in self.files]
        return data


def pull(settings: Settings, names: Iterable[str] = (), dry_run: bool = False) -> PullReport:
    """Fetch from the configured adapters (all, or those named) into raw/."""
    started = time.perf_counter()
    wanted = list(names)
    known = [a.name for a in settings.adapters]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ConfigError(f"{settings.source}: no adapter named {', '.join(unknown)}; "
                          f"configured adapters: {', '.join(known) or 'none'}.")
    if not settings.adapters:
        raise ConfigError(f"{settings.source}: no adapters are configured. Add an `adapters:` "
                          f"entry (see the commented example that `mindgraph init` writes).")
    entries = [a for a in settings.adapters if not wanted or a.name in wanted]
    with pull_lock(settings.state_dir, dry_run):
        files, failed = _pull_each(settings, entries, dry_run)
    counts = {s: sum(1 for f in files if f.status == s) for s in ("written", "unchanged",
                                                                  "rejected", "removed",
                                                                  "skipped", "limited")}
    return PullReport(counts["written"], counts["unchanged"], counts["rejected"], failed,
                      round(time.perf_counter() - started, 3), dry_run, tuple(files),
                      counts["removed"], counts["skipped"], counts["limited"],
                      sum(f.left_out for f in files if f.status == "limited"))


def _pull_each(settings: Settings, entries: list[Any], dry_run: bool
               ) -> tuple[list[PulledFile], int]:
    """Run each adapter and file its documents: the outcomes, and how many adapters failed."""
    files: list[PulledFile] = []
    failed = 0
    written_by: dict[str, str] = {}     # raw path (collision_key) → the adapter that wrote it
    cap = settings.limits.max_page_bytes
    for entry in entries:
        try:
            configured = load_adapter(entry, settings.base_dir, settings.state_dir, cap,
                                      settings.limits.max_pull_bytes,
                                      settings.limits.max_pull_notes)
            adapter = configured.adapter
            documents, cut, left_out, at_least = take(
                adapter.fetch(), entry.name, settings.limits,
                lambda: getattr(adapter, "listing_cut", False) is True)
        except ListingTooLarge as exc:
            files.append(PulledFile(entry.name, "", "limited",
                                    over_listing(entry.name, exc.max_bytes, exc.read),
                                    left_out_at_least=True))
            continue
        except AdapterError as exc:
            failed += 1
            files.append(PulledFile(entry.name, "", "failed", str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - a failing source fails only itself
            failed += 1
            files.append(PulledFile(entry.name, "", "failed",
                                    f"adapter {entry.name!r}: fetch() raised "
                                    f"{type(exc).__name__}: {exc}"))
            continue
        if cut:
            files.append(PulledFile(entry.name, "", "limited", cut, left_out=left_out,
                                    left_out_at_least=at_least))
        files.extend(PulledFile(entry.name, rel, "skipped", too_large(rel, size, cap))
                     for rel, size in getattr(configured.adapter, "oversized", ()))
        ledger = manifest_path(settings.state_dir, entry.name)
        raw_root = settings.raw_dir.resolve()
        owned = load_manifest(ledger, raw_root)
        if not dry_run:     # ahead of the files: a pull killed midway leaves none unrecorded
            save_manifest(ledger, owned, _pending(configured, documents, cap, owned))
        filed = _file_documents(settings.raw_dir, configured, documents, dry_run, written_by,
                                cap, owned)
        files.extend(filed)
        if getattr(configured.adapter, "remote", False) and not cut:
            files.extend(_mirror(settings, configured, filed, dry_run, owned))
        if not dry_run:
            save_manifest(ledger, _still_there(raw_root, owned))
    return files, failed


def _mirror(settings: Settings, configured: ConfiguredAdapter, filed: list[PulledFile],
            dry_run: bool, owned: dict[str, str]) -> list[PulledFile]:
    """Remove the notes of items the app no longer has (not after a rejected document);
    the removed ones leave ``owned``."""
    if any(f.status == "rejected" for f in filed):
        return []
    current = {f.path for f in filed if f.status in ("written", "unchanged")}
    outcomes = gone(settings.raw_dir.resolve(), owned, current, dry_run)
    for rel, status, _ in outcomes:
        if status == "removed":
            owned.pop(rel, None)
    return [PulledFile(configured.name, rel, status, reason)
            for rel, status, reason in outcomes]


def _pending(configured: ConfiguredAdapter, documents: list[Any], cap: int,
             owned: Mapping[str, str]) -> dict[str, set[str]]:
    """raw path → the hashes filing ``documents`` may write there: each document's path and
    the copy's beside it (owned.place chooses between them as it writes)."""
    prefix = f"{configured.target}/" if configured.target else ""
    pending: dict[str, set[str]] = {}
    twins = twin_paths(documents, configured.name, prefix, owned)
    for index, doc in enumerate(documents):
        data = getattr(doc, "data", None)
        if not isinstance(doc, RawDocument) or not isinstance(data, (bytes, bytearray)) \
                or len(data) > cap:
            continue
        try:
            rel = twins.get(index, ("", safe_relative_path(doc.filename)))[1]
        except AdapterError:
            continue
        key = _doc_key(doc)
        wanted = digest(bytes(data))
        for path in (rel, beside(rel, configured.name, key)):
            pending.setdefault(prefix + path, set()).add(wanted)
    return pending


def _still_there(raw_root: Path, owned: dict[str, str]) -> dict[str, str]:
    """The manifest's entries whose files still exist (one deleted by hand is pull's no more:
    the next document of that path finds it free)."""
    return {rel: held for rel, held in owned.items()
            if (raw_root / rel).is_file() and not (raw_root / rel).is_symlink()}


def _file_documents(raw_dir: Path, configured: ConfiguredAdapter,
                    documents: list[Any], dry_run: bool, written_by: dict[str, str],
                    cap: int, owned: dict[str, str]) -> list[PulledFile]:
    """File each document under raw/<target>/, where owned.place allows; ``owned`` (the
    adapter's manifest) is kept up to date with what is written."""
    name = configured.name
    raw_root = raw_dir.resolve()
    folder = raw_root / configured.target if configured.target else raw_root
    prefix = f"{folder.relative_to(raw_root).as_posix()}/" if configured.target else ""
    out: list[PulledFile] = []
    seen: dict[str, str] = {}
    twins = twin_paths(documents, name, prefix, owned)
    others = strangers(folder, prefix, owned)    # a person's `Strasse.md` holds `Straße.md`
    for index, doc in enumerate(documents):
        if not isinstance(doc, RawDocument):
            out.append(PulledFile(name, str(getattr(doc, "filename", doc))[:200], "rejected",
                                  f"adapter {name!r} returned a {type(doc).__name__}, not a "
                                  f"RawDocument; fix its fetch()."))
            continue
        try:
            rel = safe_relative_path(doc.filename)
            _contained(folder, rel)
        except AdapterError as exc:
            out.append(PulledFile(name, doc.filename, "rejected", str(exc)))
            continue
        twin, rel = twins.get(index, ("", rel))
        key = collision_key(rel)
        if key in seen:
            out.append(PulledFile(name, doc.filename, "rejected",
                                  f"adapter {name!r}: {doc.filename!r} and {seen[key]!r} map "
                                  f"to the same file (after unsafe characters are replaced); "
                                  f"give the documents distinct file names."))
            continue
        seen[key] = doc.filename
        raw_rel = prefix + rel
        other = written_by.setdefault(collision_key(raw_rel), name)
        if other != name:
            out.append(PulledFile(name, raw_rel, "rejected",
                                  f"adapter {other!r} already pulled {raw_rel} in this run; give "
                                  f"the two adapters different targets."))
            continue
        data = doc.data
        if not isinstance(data, (bytes, bytearray)):
            out.append(PulledFile(name, raw_rel, "rejected",
                                  f"adapter {name!r} returned {type(data).__name__} content "
                                  f"for {doc.filename!r}, not bytes; fix its fetch()."))
            continue
        if len(data) > cap:
            out.append(PulledFile(name, raw_rel, "skipped", too_large(doc.filename, len(data),
                                                                      cap)))
            continue
        filed = _file_one(folder, prefix, rel, bytes(data), doc, name, owned, written_by,
                          seen, dry_run, others=others)
        if twin and filed and filed[0].status in ("written", "unchanged") \
                and not filed[0].reason:
            filed[0] = replace(filed[0], reason=(
                f"{doc.filename!r} and raw/{prefix}{twin} are one file name on macOS and "
                f"Windows (they differ only in case or Unicode folding): filed beside it as "
                f"raw/{filed[0].path}, the same at every pull"))
        out.extend(filed)
    return out


def twin_paths(documents: list[Any], adapter: str, prefix: str, owned: Mapping[str, str]
               ) -> dict[int, tuple[str, str]]:
    """Documents whose paths differ but are one file where case or Unicode folding is
    ignored (macOS, Windows: filenames.collision_key): index → (the twin's path that keeps
    its name, the path this one is filed at, ``beside`` it). The path keeping its name is
    the one pull already wrote (in ``owned``), else that of the document whose key (item id,
    else file name) is least; so one overwrites the other on no system, in any listing
    order, and the names stay the same at every pull."""
    groups: dict[str, list[tuple[str, str, int]]] = {}
    for index, doc in enumerate(documents):
        if not isinstance(doc, RawDocument):
            continue
        try:
            rel = safe_relative_path(doc.filename)
        except AdapterError:
            continue
        groups.setdefault(collision_key(rel), []).append((rel, _doc_key(doc), index))
    twins: dict[int, tuple[str, str]] = {}
    for group in groups.values():
        if len({rel for rel, _, _ in group}) < 2:
            continue            # one path (or several documents of one: rejected as such)
        keeper = min(group, key=lambda g: (prefix + g[0] not in owned, g[1], g[0]))[0]
        twins.update((index, (keeper, beside(rel, adapter, key)))
                     for rel, key, index in group if rel != keeper)
    return twins


def _doc_key(doc: RawDocument) -> str:
    """What tells a document apart in its copy's name: its item id, else its file name."""
    metadata = doc.metadata if isinstance(doc.metadata, Mapping) else {}
    return str(metadata.get(ITEM_ID_KEY) or doc.filename)


def _file_one(folder: Path, prefix: str, rel: str, data: bytes, doc: RawDocument,
              adapter: str, owned: dict[str, str], written_by: dict[str, str],
              seen: dict[str, str], dry_run: bool, tries: int = 3,
              others: Mapping[str, str] | None = None) -> list[PulledFile]:
    """Write one document where it may go (its path, or the copy beside a file pull may not
    overwrite), and remove its copy once it is back at its path. A file changed between the
    check and the write (an editor's save) is seen just before the rename: kept, and the
    document placed again (beside it), at most ``tries`` times. ``others``: the folder's
    files pull did not write, by collision_key (owned.strangers)."""
    metadata = doc.metadata if isinstance(doc.metadata, Mapping) else {}
    key = str(metadata.get(ITEM_ID_KEY) or doc.filename)
    try:
        placed = place(folder, prefix, rel, data, owned, adapter, key, others)
        if placed.rel and placed.rel != rel:
            _contained(folder, placed.rel)
            other_doc = seen.setdefault(collision_key(placed.rel), doc.filename)
            if other_doc != doc.filename:     # a title that is another's copy name
                raise AdapterError(f"adapter {adapter!r}: {doc.filename!r} is filed beside "
                                   f"a file pull may not overwrite as {placed.rel!r}, the name "
                                   f"of {other_doc!r}; give the documents distinct names.")
            other = written_by.setdefault(collision_key(prefix + placed.rel), adapter)
            if other != adapter:
                raise AdapterError(f"adapter {other!r} already pulled {prefix + placed.rel} "
                                   f"in this run; give the two adapters different targets.")
    except AdapterError as exc:
        return [PulledFile(adapter, prefix + rel, "rejected", str(exc))]
    if not placed.rel:
        return [PulledFile(adapter, prefix + rel, "rejected", placed.reason)]
    raw_rel = prefix + placed.rel
    path = folder / placed.rel
    instead_of = prefix + placed.instead_of if placed.instead_of else ""
    out: list[PulledFile] = []
    try:
        if path.is_file() and not path.is_symlink() and read_bytes(path) == data:
            out.append(PulledFile(adapter, raw_rel, "unchanged", placed.reason, instead_of))
        else:
            if not dry_run:
                try:
                    atomic_write_bytes(path, data, shared=True,
                                       before_replace=_unchanged(path, raw_rel, data, owned))
                except _ChangedMeanwhile:
                    if tries > 1:
                        return _file_one(folder, prefix, rel, data, doc, adapter, owned,
                                         written_by, seen, dry_run, tries - 1, others)
                    return [PulledFile(adapter, raw_rel, "rejected", changed_meanwhile(
                        raw_rel))]
                _set_mtime(path, metadata)
            out.append(PulledFile(adapter, raw_rel, "written", placed.reason, instead_of))
        owned[raw_rel] = digest(data)       # saved only when not a dry run
        if instead_of:
            owned.pop(instead_of, None)     # a person's file now: never pull's to replace
    except OSError as exc:
        return [PulledFile(adapter, raw_rel, "rejected",
                           f"cannot write raw/{raw_rel} ({exc.strerror or exc}): a file "
                           f"and a folder share that name, or the path is too long; "
                           f"rename it at the source.")]
    if not instead_of:
        out.extend(_left_copy(folder, prefix, rel, raw_rel, adapter, key, owned, written_by,
                              dry_run))
    return out


def _left_copy(folder: Path, prefix: str, rel: str, raw_rel: str, adapter: str, key: str,
               owned: dict[str, str], written_by: dict[str, str],
               dry_run: bool) -> list[PulledFile]:
    """The document is at its path again: the copy pull wrote beside it goes, unless someone
    edited it (then it is theirs: kept, said once, and no longer pull's)."""
    copy, removable = left_copy(folder, prefix, rel, owned, adapter, key)
    if not copy or collision_key(prefix + copy) in written_by:
        return []
    if not dry_run:
        if removable:
            (folder / copy).unlink(missing_ok=True)
        owned.pop(prefix + copy, None)
    if removable:
        return [PulledFile(adapter, prefix + copy, "removed",
                           f"the copy pull wrote beside raw/{raw_rel} while a file it could "
                           f"not overwrite was there; the document is back at its path")]
    return [PulledFile(adapter, prefix + copy, "kept",
                       f"raw/{prefix + copy}: the copy pull wrote beside raw/{raw_rel} was "
                       f"edited since; kept as it is (the document is back at raw/{raw_rel});"
                       f" delete it by hand if it should go.")]


class _ChangedMeanwhile(Exception):
    """The file at a document's path changed after pull checked it, before its rename."""


def _unchanged(path: Path, raw_rel: str, data: bytes, owned: dict[str, str]
               ) -> Callable[[Path], None]:
    """A check for atomic_write_bytes to make just before its rename: the file at ``path``
    is still one pull may overwrite (owned.may_overwrite), else _ChangedMeanwhile."""
    wanted = digest(data)

    def check(_written: Path) -> None:
        if not may_overwrite(path, raw_rel, wanted, owned):
            raise _ChangedMeanwhile(raw_rel)
    return check


def changed_meanwhile(raw_rel: str) -> str:
    """Why a document was not filed: its path (and the copy's) changed while pull wrote."""
    return (f"raw/{raw_rel} changed while pull was writing there, again and again: kept as "
            f"it is, and this document not filed this run. Pull again once it is saved.")


def _set_mtime(path: Path, metadata: Any) -> None:
    """Give the file the source's modification time, when the adapter gave a usable one."""
    mtime = metadata.get("mtime") if isinstance(metadata, dict) else None
    if isinstance(mtime, (int, float)) and not isinstance(mtime, bool):
        try:
            os.utime(path, (mtime, mtime))
        except (ValueError, OverflowError, OSError):   # NaN, 1e30: keep the write time
            pass


def _contained(folder: Path, rel: str) -> Path:
    """``folder / rel``, after checking that no symlink leads it out of ``folder``.

    ``folder`` is the lexical raw/<target> path (its parts are sanitised, so no ``..``);
    resolving the file's parent follows every symlink on the way, target folder included,
    and the result must still lie inside ``folder``.
    """
    path = folder / rel
    if not path.parent.resolve().is_relative_to(folder) or path.is_symlink():
        raise AdapterError(f"{rel}: a symlink in {folder} would lead this file outside it; "
                           f"remove the symlink from raw/.")
    return path
