"""The ingest state: one record per raw note, kept in ``.ingest-state.json``.

Per-file state machine::

    (new or changed) ──> pending ──> ingested
                                └──> failed      (retried on the next run)
    ingested, same key ──> skipped (record unchanged)
    raw note gone ──> record dropped (its wiki page removed, or kept and marked if edited)
    raw note moved ──> new path pending (moved_from = old path; the old record stays)
                   ──> new path ingested, old record dropped, the move kept in ``moves``

A record's ``key`` is the SHA-256 of the note's content hash plus the compiler's key identity
(provider, model, prompt version and a digest of everything that shapes the prompt: templates,
limits, ``compile.language``, ``compile.domain``) and the version of the date rules with the
note's git dates, so a new model, prompt, setting or way of dating notes recompiles, and so
does a first commit. ``stat`` is the raw file's size, mtime and ctime when it was read: a note
with the same stat is not read again (ingest/notes.py). ``links_basis`` is a cheap digest
of the index entries ``links`` depends on and ``links_index`` a digest of the whole index: while
either is equal, ``links`` is not recomputed.
The file is replaced
atomically (temp file, fsync, rename): a crash leaves the previous state or the next, never a
torn one; a run killed mid-move finds the same pair again and finishes it (moves.py).

A run that changes a few notes (the watcher's, targeted.py) appends the records it changed to
a journal beside the file instead (``append``: one line per commit, fsync'ed; at 100,000
notes a rewrite of the whole file takes seconds). A state that is journaled gets a new
``generation`` with each save of the whole file and a journal line names the generation it
applies to, so a line written before a later save, or torn by a kill mid-append, is never
replayed (journal.py); a save without a generation ignores every journal line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from ..errors import IngestError
from ..fsutil import atomic_write_bytes, read_bytes, sha256_text
from ..page.cache import paused_gc
from . import journal
from .moves_file import stamps_of, write_moves

STATE_FILENAME = ".ingest-state.json"
STATE_VERSION = 1
Status = Literal["pending", "ingested", "failed"]
_ALLOWED = {None: {"pending"}, "pending": {"pending", "ingested", "failed"},
            "ingested": {"pending"}, "failed": {"pending"}}


def compile_key(content_sha256: str, compiler: str, dates: str = "", overlay: str = "") -> str:
    """The cache key of one compile: content hash + compiler identity + what the page's dates
    depend on beyond the content (``mindgraph.page.dates.dates_key``) + what the documents API
    set for the page (``CompileOverlay.digest``; "" keeps the key it had without one)."""
    return sha256_text(f"{content_sha256}\n{compiler}\n{dates}"
                       + (f"\n{overlay}" if overlay else ""))


@dataclass(frozen=True)
class FileState:
    """What the last run did with one raw note."""

    status: Status
    sha256: str = ""          # SHA-256 of the raw note's bytes
    key: str = ""             # compile_key(sha256, compiler key identity)
    compiler: str = ""        # e.g. "offline:v1" or "anthropic:claude-x:prompt-v1"
    links: str = ""           # digest of the title-index entries this page's links depend on
    mentions: tuple[str, ...] = ()  # index terms the note's text mentions (cached scan)
    terms: str = ""           # digest of the index term set ``mentions`` was scanned against
    wiki: str = ""            # wiki-relative path of the page we wrote
    wiki_sha256: str = ""     # SHA-256 of the page as we wrote it (tells a person's edit)
    title: str = ""           # cached for the title index, so unchanged notes are not parsed
    aliases: tuple[str, ...] = ()
    language: str = ""        # its prose language, for the title index (page/language.py)
    error: str = ""
    warnings: tuple[str, ...] = ()  # what the compile of the note warned of ("note.md:1: …")
    signature: str = ""       # MinHash of the note's word shingles (tells a moved note)
    moved_from: str = ""      # raw path this note is moving from (until it is ingested)
    stat: str = ""            # "size/mtime_ns/ctime_ns/inode" when read ("": read it next time)
    links_basis: str = ""     # TitleIndex.links_basis when ``links`` was last found equal
    links_index: str = ""     # TitleIndex.digest then (equal: nothing to check at all)

    def to_json(self) -> dict[str, Any]:
        """Compact JSON form (empty fields left out)."""
        return {k: (list(v) if isinstance(v, tuple) else v)
                for k in _FIELDS if (v := getattr(self, k)) not in ("", ())}


class IngestState:
    """The records of every raw note, loaded from and saved to one JSON file."""

    def __init__(self, path: Path, files: dict[str, FileState] | None = None,
                 moves: dict[str, dict[str, Any]] | None = None,
                 index: dict[str, str] | None = None):
        self.path = Path(path)
        self.files: dict[str, FileState] = dict(files or {})
        # old wiki page → {"page": new wiki page, ...}: see moves.py
        self.moves: dict[str, dict[str, Any]] = dict(moves or {})
        # the title index's digests of the last run (TitleIndex.memo): its terms unbuilt
        self.index: dict[str, str] = dict(index or {})
        self._saved_index = dict(self.index)
        self.dirty = False          # records changed since the last load or save
        # wiki page → raw notes ingested to it; built when first asked (a no-op run never)
        self._ingested_at: dict[str, set[str]] | None = None
        self._encoded: dict[str, tuple[FileState, str]] = {}   # path → (record, its JSON)
        self._saved_moves = json.dumps(self.moves, sort_keys=True)
        self.generation = ""        # of the file as saved (journal lines name it)
        self.journaled = False      # give each save a generation, for ``append``
        self._touched: set[str] = set()     # records changed since the last save or append
        self.behind = False         # the file has journal lines of a checkpoint: not whole

    @classmethod
    def load(cls, path: Path) -> "IngestState":
        """Read the state file; a missing file is an empty state."""
        path = Path(path)
        try:
            raw = read_bytes(path)
        except FileNotFoundError:
            return cls(path)
        except OSError as exc:
            raise IngestError(f"{path}: cannot read the ingest state ({exc.strerror or exc}). "
                              f"Check its permissions.") from exc
        try:
            # 100,000 records: the collector would walk them again and again as they are built
            with paused_gc():
                data = json.loads(raw.decode("utf-8"))
                if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
                    raise ValueError(f"expected a version {STATE_VERSION} state object")
                files = {str(p): _record(r) for p, r in data.get("files", {}).items()}
                moves = {str(p): _move(m) for p, m in data.get("moves", {}).items()}
                index = data.get("index")       # a memo: when damaged, found again
                index = index if isinstance(index, dict) and all(
                    isinstance(v, str) for v in index.values()) else {}
                generation = str(data.get("generation", ""))
                if generation:
                    index = _replay_journal(journal.path_of(path), generation, files, moves,
                                            index)
        except (ValueError, TypeError, KeyError) as exc:
            raise IngestError(f"{path}: the ingest state is unreadable ({exc}). It is derived "
                              f"data: delete it and the next `mindgraph ingest` recompiles "
                              f"every note.") from exc
        state = cls(path, files, moves, index)
        state.generation = generation
        return state

    def to_json(self) -> dict[str, Any]:
        """The whole state as a JSON-ready mapping."""
        data: dict[str, Any] = {"version": STATE_VERSION,
                                "files": {p: self.files[p].to_json() for p in sorted(self.files)}}
        if self.moves:
            data["moves"] = {p: self.moves[p] for p in sorted(self.moves)}
        if self.index:
            data["index"] = dict(sorted(self.index.items()))
        return data

    @property
    def changed(self) -> bool:
        """True when the records, the moves or the index memo differ from the file (saving
        would change it), or the file is not whole (``checkpoint``)."""
        return self.dirty or self.behind or json.dumps(self.moves, sort_keys=True) \
            != self._saved_moves or self.index != self._saved_index

    def save(self) -> None:
        """Atomically replace the state file: one record per line (small diffs, readable).

        Each record's JSON is kept from the last save while the record is the same object
        (records are frozen), so a save of a large state encodes only what changed: a first
        run of 10,000 notes saved every record again on each of its saves."""
        # a generation only where a journal may follow (a watcher's state): the file of a
        # plain `mindgraph ingest` is the same bytes for the same notes
        self._save_whole(self.journaled)
        self._save_moves()
        self.behind = False
        self._saved()

    def checkpoint(self) -> None:
        """Record what changed since the last save as cheaply as a long run can (a first run
        commits every 0.5 s, and a whole save rewrote every record each time): one journal
        line (journal.py) onto a whole save with a generation, made first if the file has
        none. As atomic and durable as ``save``; the moves file waits for the run's last
        commit, a ``save`` (``changed`` stays true until then: the file is not whole)."""
        if self.generation and self.path.exists():
            self._append_line()
        else:
            self._save_whole(True)
        self.behind = True
        self._saved()

    def append(self) -> None:
        """Record what changed since the last save or append as one journal line (fsync'ed):
        as atomic as ``save`` and as cheap as the change. A state never saved whole (or
        saved by a version without generations) is saved whole instead."""
        if not self.generation or not self.path.exists():
            self.journaled = True
            self.save()
            return
        self._append_line()
        self._save_moves()
        self._saved()

    def _save_whole(self, with_generation: bool) -> None:
        lines = [self._encoded_record(path) for path in sorted(self.files)]
        encoded = self._encoded
        if len(encoded) > len(self.files):
            for path in [p for p in encoded if p not in self.files]:
                del encoded[path]
        text = '{"files":{' + ",\n".join(lines) + "}"
        if self.moves:
            text += ',\n"moves":' + _dumps({p: self.moves[p] for p in sorted(self.moves)}
                                          ).replace('},"', '},\n"')
        if self.index:
            text += ',\n"index":' + _dumps(self.index)
        generation = journal.new_generation() if with_generation else ""
        if generation:
            text += f',\n"generation":"{generation}"'
        text += f',\n"version":{STATE_VERSION}}}'
        atomic_write_bytes(self.path, (text + "\n").encode("utf-8"))
        self.generation = generation
        journal.remove(journal.path_of(self.path))    # its lines name an older generation

    def _append_line(self) -> None:
        """Append the records touched since the last save or append, and the moves and index
        memo if they changed, as one journal line (the JSON of {"base", "files", "index",
        "moves"} with sorted keys; each record's JSON is the one a whole save reuses)."""
        files = ",".join(self._encoded_record(p) if p in self.files else _dumps(p) + ":null"
                         for p in sorted(self._touched))
        line = f'{{"base":{_dumps(self.generation)},"files":{{{files}}}'
        if self.index != self._saved_index:
            line += f',"index":{_dumps(self.index)}'
        if json.dumps(self.moves, sort_keys=True) != self._saved_moves:
            line += f',"moves":{_dumps(self.moves)}'
        journal.append(journal.path_of(self.path), line + "}")

    def _encoded_record(self, path: str) -> str:
        """``"path":{record}``, encoded once per record object (records are frozen)."""
        record = self.files[path]
        cached = self._encoded.get(path)
        if cached is None or cached[0] is not record:
            cached = self._encoded[path] = (record, _dumps(path) + ":" + _record_json(record))
        return cached[1]

    def _save_moves(self) -> None:
        """Write the moves file beside the state (moves_file.py) for the state just written:
        after it, so a kill in between leaves a moves file that names other stamps."""
        write_moves(self.path, self.moves, stamps_of(self.path))

    def _saved(self) -> None:
        self.dirty = False
        self._touched.clear()
        self._saved_moves = json.dumps(self.moves, sort_keys=True)
        self._saved_index = dict(self.index)

    def get(self, path: str) -> FileState | None:
        """The record of one raw note, or None."""
        return self.files.get(path)

    def transition(self, path: str, status: Status, **changes: Any) -> FileState:
        """Move one record to ``status`` (checking the state machine) and update fields."""
        old = self.files.get(path)
        allowed = _ALLOWED[old.status if old else None]
        if status not in allowed:
            raise IngestError(f"internal: {path} cannot go from {old.status if old else 'new'} "
                              f"to {status}")
        base = old if old is not None else FileState(status)
        record = _replaced(base, {**changes, "status": status})
        self.files[path] = record
        self._reindex(path, old, record)
        self.dirty = True
        self._touched.add(path)
        return record

    def refresh(self, path: str, **changes: Any) -> FileState:
        """Update bookkeeping fields of a record without changing its status."""
        old = self.files[path]
        record = _replaced(old, changes)
        if record != old:
            self.files[path] = record
            self._reindex(path, old, record)
            self.dirty = True
            self._touched.add(path)
        return record

    def drop(self, path: str) -> None:
        """Forget a raw note that no longer exists."""
        old = self.files.pop(path, None)
        if old is not None:
            self._reindex(path, old, None)
            self.dirty = True
            self._touched.add(path)

    def ingested_elsewhere(self, path: str, wiki_path: str) -> bool:
        """True when a note other than ``path`` is ingested to ``wiki_path`` (so that page is
        not this note's to remove); a lookup, not a scan of every record."""
        if self._ingested_at is None:
            self._ingested_at = {}
            for owner, record in self.files.items():
                self._reindex(owner, None, record)
        owners = self._ingested_at.get(wiki_path, ())
        return any(owner != path for owner in owners)

    def _reindex(self, path: str, old: FileState | None, new: FileState | None) -> None:
        if self._ingested_at is None:
            return          # built from the records when first asked
        if old is not None and old.status == "ingested" and old.wiki:
            owners = self._ingested_at.get(old.wiki)
            if owners is not None:
                owners.discard(path)
                if not owners:
                    del self._ingested_at[old.wiki]
        if new is not None and new.status == "ingested" and new.wiki:
            self._ingested_at.setdefault(new.wiki, set()).add(path)


_FIELDS = tuple(f.name for f in fields(FileState))


# json.dumps with these options, without building an encoder on each call
_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode


def _dumps(value: Any) -> str:
    return _ENCODE(value)


def _replaced(record: FileState, changes: dict[str, Any]) -> FileState:
    """``dataclasses.replace(record, **changes)`` without its __init__ call per record (a
    first run makes two records per note, in the process that waits on the compile)."""
    if not changes.keys() <= _FIELD_SET:
        raise TypeError(f"FileState has no field {sorted(changes.keys() - _FIELD_SET)[0]}")
    new = object.__new__(FileState)
    new.__dict__.update(record.__dict__, **changes)
    return new


def _record_json(record: FileState) -> str:
    """``_dumps(record.to_json())``, from the record's fields as they are (json writes a
    tuple as a list) with one encoder kept: a first run encodes each record twice (pending,
    then ingested), and this took half as long."""
    return _ENCODE({k: v for k, v in record.__dict__.items() if v != "" and v != ()})


def _replay_journal(path: Path, generation: str, files: dict[str, FileState],
                    moves: dict[str, dict[str, Any]], index: dict[str, str]) -> dict[str, str]:
    """Apply the journal's lines of ``generation``; return the index memo they leave. An
    intact line that does not hold records is damage: an error naming the journal, whose
    removal costs only a recompile of the notes it recorded."""
    try:
        for line in journal.lines_of(path, generation):
            _replay(line, files, moves)
            if isinstance(line.get("index"), dict):
                index = {str(k): str(v) for k, v in line["index"].items()}
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise IngestError(f"{path}: the ingest state's journal is damaged ({exc}). It is "
                          f"derived data: delete it and the next `mindgraph ingest` compiles "
                          f"again the notes it recorded.") from exc
    return index


def _replay(line: dict[str, Any], files: dict[str, FileState],
            moves: dict[str, dict[str, Any]]) -> None:
    """Apply one journal line to the records and moves being loaded."""
    for path, raw in line.get("files", {}).items():
        if raw is None:
            files.pop(str(path), None)
        else:
            files[str(path)] = _record(raw)
    if isinstance(line.get("moves"), dict):
        moves.clear()
        moves.update({str(p): _move(m) for p, m in line["moves"].items()})


def _move(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict) or not isinstance(raw.get("page"), str):
        raise ValueError(f"bad move {raw!r}")
    return {str(k): v for k, v in raw.items()}


_FIELD_SET = frozenset(_FIELDS)
_STATUSES = frozenset(("pending", "ingested", "failed"))


def _record(raw: Any) -> FileState:
    """One record of the file (a load builds 100,000 of them: no per-field generators)."""
    if not isinstance(raw, dict) or raw.get("status") not in _STATUSES:
        raise ValueError(f"bad record {raw!r}")
    fields = raw if raw.keys() <= _FIELD_SET else {k: v for k, v in raw.items()
                                                   if k in _FIELD_SET}
    for name in ("aliases", "mentions", "warnings"):
        if name in fields:
            fields[name] = tuple(map(str, fields[name]))
    if "stat" in fields:
        fields["stat"] = str(fields["stat"])
    return FileState(**fields)
