"""Small file-system helpers shared by every stage: hashing, bounded reads and crash-safe writes.

Every file mindgraph reads goes through ``open_regular`` / ``read_bytes`` / ``read_text``: a
FIFO, socket or device is refused before any read (a FIFO would block forever), and a file
over its size cap is refused instead of being read whole. The refusal is an ``UnreadableFile``
(an OSError, so existing ``except OSError`` handlers report it per file) whose message says
what the file is and what to do.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import json
import os
import random
import re
import signal
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator


Stamp = tuple[int, int, int, int]


def stamp_of(info: os.stat_result) -> Stamp:
    """What tells that a file may have changed without reading it: (mtime_ns, ctime_ns, inode,
    size). Not (mtime, size) alone: a file rewritten at the same size with its mtime set back
    (``touch -r``, an editor or sync tool that keeps times) keeps those two, but not its
    change time, which no one can set, and a file replaced by another keeps no inode."""
    return info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_size


def file_stamp(path: str | Path) -> Stamp | None:
    """``stamp_of`` a file (following a symlink), or None when it is missing."""
    try:
        return stamp_of(os.stat(path))
    except FileNotFoundError:
        return None


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Hex SHA-256 of text encoded as UTF-8."""
    return sha256_bytes(text.encode("utf-8"))


_FILE_DIGESTS: dict[tuple[str, int, int, int, int], str] = {}
_FILE_DIGESTS_LOCK = threading.Lock()


DIGESTS_FILE = "file-digests.json"
_kept_digests: Path | None = None       # the workspace's DIGESTS_FILE (keep_file_digests)
_AHEAD: dict[str, "_Ahead"] = {}        # path → the process hashing it (hash_ahead)
# how long a check waits for the hashing process (~0.2 s of work for UniDic's 260 MB); past
# it (a process stopped, or starved) the process is killed and the check hashes for itself
AHEAD_WAIT_S = 20.0


# set within a dry run (``writing_nothing``): the digests are kept in memory only, and the
# indexes (core/indexes.py) save nothing. A context variable, not a global: a server's dry
# run must not stop the queries that other threads answer meanwhile from saving theirs.
_WRITING_NOTHING: contextvars.ContextVar[bool] = contextvars.ContextVar("writing_nothing",
                                                                        default=False)


@contextlib.contextmanager
def writing_nothing() -> Iterator[None]:
    """Within it (in this thread), nothing is written under the state folder by the digests
    and the indexes: a dry run says what would change and changes nothing."""
    token = _WRITING_NOTHING.set(True)
    try:
        yield
    finally:
        _WRITING_NOTHING.reset(token)


def writes_allowed() -> bool:
    """False within ``writing_nothing``."""
    return not _WRITING_NOTHING.get()


def keep_file_digests(state_dir: Path | None) -> None:
    """Remember the digests ``sha256_file`` computes in ``state_dir``/file-digests.json, so
    that a later process of the workspace trusts a file whose stamp (``stamp_of``: size,
    mtime, inode and the change time, which no one can set back) is the one it had when it
    was hashed, instead of reading it again: UniDic's 248 MB took ~0.23 s of CPU in every
    process that segments Japanese. None: keep nothing."""
    global _kept_digests
    _kept_digests = Path(state_dir) / DIGESTS_FILE if state_dir is not None else None


def sha256_file(path: Path, pinned: bool = False) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks; hashed once per process for a given path,
    size and stamp (the pinned model and dictionary files are large), and for a ``pinned``
    file (a model or dictionary we ship against a pinned digest) once per workspace with
    ``keep_file_digests``; taken from a ``hash_ahead`` process that hashed it with the stamp
    it has now. OSError when it cannot be read."""
    key = (str(path), *stamp_of(os.stat(path)))
    with _FILE_DIGESTS_LOCK:
        known = _FILE_DIGESTS.get(key)
        kept_in = _kept_digests if pinned else None
        ahead = _AHEAD.get(key[0])
    if known is None and kept_in is not None:
        known = _kept_digest(kept_in, key)
    if known is None:
        known = ahead.digest(key) if ahead is not None else None
        if known is None:
            with open(path, "rb") as handle:
                known = hashlib.file_digest(handle, "sha256").hexdigest()
        if kept_in is not None and writes_allowed():      # a dry run keeps nothing
            _keep_digest(kept_in, key, known)
    with _FILE_DIGESTS_LOCK:
        _FILE_DIGESTS[key] = known
    return known


def hash_ahead(paths: Iterable[Path], state_dir: Path | None,
               wanted: Callable[[], bool] | None = None) -> None:
    """Begin hashing ``paths`` now, in a forked process, for a process that will soon check
    them (``sha256_file`` then takes the digest it sent, computed from a stamp taken before
    reading, as it does itself). Only the files that neither this process nor the kept
    digests of ``state_dir`` hold a digest for, and only if ``wanted()`` then says the
    process may check them (asked only when there is something to hash); nothing where a
    fork is not safe (not Linux, or another thread alive) or no second core would hash them
    beside this process. Call ``settle_ahead`` when the work is done."""
    if not sys.platform.startswith("linux") or threading.active_count() > 1 \
            or len(os.sched_getaffinity(0)) < 2:
        return
    kept_in = Path(state_dir) / DIGESTS_FILE if state_dir is not None else None
    todo = []
    for path in paths:
        try:
            key = (str(path), *stamp_of(os.stat(path)))
        except OSError:
            continue        # the check itself reports it
        with _FILE_DIGESTS_LOCK:
            if key in _FILE_DIGESTS or key[0] in _AHEAD:
                continue
        if kept_in is None or _kept_digest(kept_in, key) is None:
            todo.append(key)
    if not todo or (wanted is not None and not wanted()):
        return
    # smallest first: a check of a small file (jieba's 5 MB) waits for its own digest only,
    # not for the large ones hashed before it (UniDic's 260 MB, ~0.2 s)
    todo = [key[0] for key in sorted(todo, key=lambda key: key[4])]
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:          # the child: hash, send, and leave without any of the parent's exit
        try:
            os.close(reading)
            _send_digests(writing, todo)
        finally:
            os._exit(0)
    os.close(writing)
    ahead = _Ahead(child, reading, kept_in)
    with _FILE_DIGESTS_LOCK:
        _AHEAD.update(dict.fromkeys(todo, ahead))


def settle_ahead(keep: bool = True) -> None:
    """Keep (``keep_file_digests``) what a ``hash_ahead`` process computed that nothing asked
    for, if it is done, so the next process of the workspace neither reads the files nor
    guesses again; stop it if it is not (a short run does not wait for it). ``keep=False``
    (a dry run, which writes nothing): only stop and reap it."""
    with _FILE_DIGESTS_LOCK:
        pending = set(_AHEAD.values())
        _AHEAD.clear()
    for ahead in pending:
        ahead.settle(keep)


def _send_digests(out: int, paths: list[str]) -> None:
    """Write a JSON line [path, *stamp, SHA-256] for each of ``paths`` it can read to ``out``,
    each as soon as it is computed (a check waits for its own file's line only)."""
    with os.fdopen(out, "wb", buffering=0) as pipe:
        for path in paths:
            try:
                key = (path, *stamp_of(os.stat(path)))
                with open(path, "rb") as handle:
                    digest = hashlib.file_digest(handle, "sha256").hexdigest()
            except OSError:
                continue
            pipe.write(json.dumps([*key, digest]).encode() + b"\n")


class _Ahead:
    """The digests one ``hash_ahead`` process sends, read as they come (waiting for the one
    a check needs, not for the others)."""

    def __init__(self, pid: int, reading: int, kept_in: Path | None):
        self.pid, self.reading, self.kept_in = pid, reading, kept_in
        self.owner = os.getpid()        # a worker forked later leaves the pipe to its parent
        self.lock = threading.Lock()
        self.found: dict[tuple, str] = {}
        self.partial = b""          # the start of a line not received whole yet
        self.done = False           # the process sent everything (or was stopped): reaped

    def digest(self, key: tuple) -> str | None:
        """The digest it computed for ``key`` (the path with its stamp now), else None."""
        if os.getpid() != self.owner:
            return None
        with self.lock:
            self._collect(key[0])
            return self.found.get(key)

    def settle(self, keep: bool = True) -> None:
        """Keep the digests it sent that still match their files (stopped first if running;
        nothing kept unless ``keep``)."""
        if os.getpid() != self.owner:
            return
        with self.lock:
            if not self.done:
                try:
                    os.kill(self.pid, signal.SIGKILL)   # done, or not needed enough to wait
                except ProcessLookupError:
                    pass
                self._collect(None)
            found = dict(self.found)
        if keep and self.kept_in is not None:
            _keep_digests(self.kept_in, {key: digest for key, digest in found.items()
                                         if file_stamp(key[0]) == key[1:]})

    def _collect(self, path: str | None) -> None:
        """Take in what the process sent until a digest of ``path`` came (None: until it is
        done), within ``AHEAD_WAIT_S`` (then it is killed: what it did not send is hashed
        here)."""
        import select

        deadline = time.monotonic() + AHEAD_WAIT_S
        while not self.done and (path is None or not any(k[0] == path for k in self.found)):
            left = deadline - time.monotonic()
            chunk = os.read(self.reading, 1 << 16) \
                if left > 0 and select.select([self.reading], [], [], left)[0] else None
            if chunk:
                *lines, self.partial = (self.partial + chunk).split(b"\n")
                self._take(lines)
                continue
            if chunk is None:       # no answer in time: stopped or starved
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
            self._take([self.partial])      # a last line the killed process cut is refused
            self.done = True
            os.close(self.reading)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass

    def _take(self, lines: list[bytes]) -> None:
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, list) and len(entry) == 6 and isinstance(entry[5], str) \
                    and re.fullmatch(r"[0-9a-f]{64}", entry[5]):
                self.found[tuple(entry[:5])] = entry[5]


def _read_kept_digests(kept_in: Path) -> dict[str, list]:
    try:
        kept = json.loads(read_bytes(kept_in, max_bytes=1 << 20))
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def _kept_digest(kept_in: Path, key: tuple) -> str | None:
    entry = _read_kept_digests(kept_in).get(key[0])
    if isinstance(entry, list) and len(entry) == 5 and entry[:4] == list(key[1:]) \
            and isinstance(entry[4], str) and re.fullmatch(r"[0-9a-f]{64}", entry[4]):
        return entry[4]
    return None


def _keep_digest(kept_in: Path, key: tuple, digest: str) -> None:
    _keep_digests(kept_in, {key: digest})


def _keep_digests(kept_in: Path, digests: dict[tuple, str]) -> None:
    with _FILE_DIGESTS_LOCK:
        kept = _read_kept_digests(kept_in)
        fresh = {key[0]: [*key[1:], digest] for key, digest in digests.items()}
        if all(kept.get(path) == entry for path, entry in fresh.items()):
            return
        kept.update(fresh)
        try:
            kept_in.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(kept_in, json.dumps(kept, indent=0).encode(), durable=False)
        except OSError:         # a read-only state folder: hash again next time
            pass


class UnreadableFile(OSError):
    """A file refused before reading: not a regular file, over its size cap, or a symlink
    where none is followed. ``kind`` is "not-regular", "too-large" or "symlink"."""

    def __init__(self, path: str | Path, kind: str, message: str):
        super().__init__(errno.EINVAL, message, str(path))
        self.kind = kind


def _kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "an unknown kind of file"


def _refuse_special(path: str | Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise UnreadableFile(path, "not-regular", f"{_kind_of(mode)}, not a regular file; "
                             f"skipped (reading it could block forever). Remove it or "
                             f"replace it with a regular file.")


def _refuse_size(path: str | Path, size: int, max_bytes: int | None, key: str) -> None:
    if max_bytes is not None and size > max_bytes:
        where = f" ({key})" if key else ""
        raise UnreadableFile(path, "too-large", f"{size:,} bytes is over the {max_bytes:,}-byte "
                             f"limit{where}; not read. Split the file"
                             + (f" or raise {key} in mindgraph.yml." if key else "."))


def open_regular(path: str | Path, *, max_bytes: int | None = None,
                 follow_symlinks: bool = True, limit_key: str = "") -> BinaryIO:
    """Open ``path`` for binary reading, refusing anything but a regular file.

    The file is opened with O_NONBLOCK (so even a FIFO swapped in after the check cannot
    block the open) and checked again with fstat on the open descriptor. ``max_bytes`` refuses
    larger files (``limit_key`` names the setting in the message); ``follow_symlinks=False``
    refuses symlinks (O_NOFOLLOW). Raises UnreadableFile or the OSError of the open.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    # refuse a device before opening it (opening some has side effects, e.g. a tape rewind)
    before = os.stat(path, follow_symlinks=follow_symlinks)
    if not follow_symlinks and stat.S_ISLNK(before.st_mode):
        raise UnreadableFile(path, "symlink", "a symlink; not followed.")
    _refuse_special(path, before.st_mode)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise UnreadableFile(path, "symlink", "became a symlink; not followed.") from exc
        raise
    try:
        info = os.fstat(fd)
        _refuse_special(path, info.st_mode)
        _refuse_size(path, info.st_size, max_bytes, limit_key)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | Path, *, max_bytes: int | None = None,
               follow_symlinks: bool = True, limit_key: str = "") -> bytes:
    """The bytes of a regular file (see ``open_regular``); a file that grows past
    ``max_bytes`` while being read is refused too."""
    with open_regular(path, max_bytes=max_bytes, follow_symlinks=follow_symlinks,
                      limit_key=limit_key) as handle:
        data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    if max_bytes is not None:
        _refuse_size(path, len(data), max_bytes, limit_key)
    return data


def read_text(path: str | Path, *, max_bytes: int | None = None, errors: str = "strict",
              limit_key: str = "") -> str:
    """UTF-8 text of a regular file (see ``read_bytes``)."""
    return read_bytes(path, max_bytes=max_bytes, limit_key=limit_key).decode("utf-8", errors)


NAME_MAX = 255          # bytes in one file name (ext4, XFS, btrfs, APFS, NTFS in UTF-16 units)
# atomic_write_bytes' temp files: ".<name, cut to fit>.<8 random characters>.tmp"
TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
_TEMP_EXTRA = len("..") + 8 + len(".tmp")       # what the temp name adds to the file's name


def writable(folder: str | Path) -> bool:
    """Whether files can be created in ``folder``, or in the nearest folder above it that
    exists (where it would be made): False on a read-only filesystem or without permission."""
    path = Path(folder)
    while not path.exists() and path.parent != path:
        path = path.parent
    return os.access(path, os.W_OK | os.X_OK)


def page_inside(folder: str | Path, rel: str) -> Path | None:
    """``folder/rel`` when ``rel`` names a markdown page inside ``folder``: relative, ending in
    ``.md``, and still inside once resolved (no ``..`` or symlink leads out); None otherwise.

    The one check of every write-back a person approves by digest (verify, propagate): a plan
    is a file under the state folder, and one edited after it was printed must not be able to
    aim the write at raw/ or at a file outside the workspace."""
    root = Path(folder).resolve()
    if not rel.endswith(".md") or Path(rel).is_absolute() or "\x00" in rel:
        return None
    try:
        file = (root / rel).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return file if file.is_relative_to(root) and file != root else None


def temp_prefix(name: str) -> str:
    """The mkstemp prefix for a temp file next to ``name``: the name cut (on a character
    boundary) so that the whole temp name fits NAME_MAX even when ``name`` itself is 255
    bytes long."""
    cut = name.encode("utf-8")[:NAME_MAX - _TEMP_EXTRA].decode("utf-8", errors="ignore")
    return f".{cut}."


def clean_temp_files(folder: str | Path, *, older_than: float | None = None) -> int:
    """Delete the temp files a killed write left under ``folder`` (only names of our own
    TEMP_NAME pattern, regular files, and with ``older_than`` only those last modified
    before that time); returns how many. Call it only while no other writer can be
    mid-write in ``folder`` (under its lock)."""
    removed = 0
    if not Path(folder).is_dir():
        return 0
    for current, _dirs, files in os.walk(folder, followlinks=False):
        for name in files:
            if not TEMP_NAME.match(name):
                continue
            path = os.path.join(current, name)
            try:
                info = os.stat(path, follow_symlinks=False)
                if not stat.S_ISREG(info.st_mode):
                    continue
                if older_than is not None and info.st_mtime >= older_than:
                    continue
                os.unlink(path)
                removed += 1
            except FileNotFoundError:
                pass
    return removed


def _umask() -> int:
    mask = os.umask(0o022)    # the only way to read it before Python 3.13: set and restore
    os.umask(mask)
    return mask


_UMASK = _umask()       # read once, at import, before any thread could race the two calls


def atomic_write_bytes(path: str | Path, data: bytes | Iterable[bytes], durable: bool = True,
                       shared: bool = False,
                       before_replace: Callable[[Path], None] | None = None) -> None:
    """Write ``data`` (bytes, or byte strings written one after the other, so that a large
    file need not be joined in memory first) to ``path`` so that a crash leaves either
    the old or the new file.

    A temp file in the same folder is written, flushed, fsync'ed and renamed over the target
    with os.replace (atomic on POSIX); the folder is fsync'ed so the rename itself is durable.
    ``durable=False`` skips both fsyncs (still atomic, not yet on disk after a power loss), for
    callers that make many files durable at once later.

    The temp file is private (0600), right for state. ``shared``: a file people and other
    programs read (wiki pages, pulled notes) gets the mode of the file it replaces, or the
    one ``open()`` would give a new file (0666 minus the umask). ``before_replace`` is called
    with the written temp file's path just before the rename (to open the very file that
    becomes ``path``, whatever another process writes there later).

    The temp file is written through its descriptor (no buffered file object), its folder
    is made only when the temp file cannot be created without it, and a shared file whose
    mode is open()'s own is created with it (no fchmod): a page costs 6 system calls instead
    of 14 (a first run writes one per note, in the process that waits on the compile's
    workers). Paths stay strings here: pathlib took a tenth of a page's time.
    """
    target = os.fspath(path)
    mode = 0o600
    if shared and hasattr(os, "fchmod"):
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = _NEW_FILE_MODE
    create = _NEW_FILE_MODE if mode == _NEW_FILE_MODE else 0o600    # umask gives the same
    try:
        fd, tmp = _temp_file(target, create)
    except (FileNotFoundError, NotADirectoryError):     # what mkdir says, as before
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temp_file(target, create)
    try:
        try:
            if mode != create:
                os.fchmod(fd, mode)     # created with 0600 (a umask could narrow any other)
            for chunk in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
                view = memoryview(chunk).cast("B")
                while view:
                    view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if before_replace is not None:
            before_replace(Path(tmp))
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        _fsync_dir(os.path.dirname(target) or ".")


_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NEW_FILE_MODE = 0o666 & ~_UMASK        # what open() gives a new file
_NAMES = random.Random()    # temp names: unique enough, and O_EXCL settles any clash


def _reseed_names() -> None:
    _NAMES.seed()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed_names)     # a forked child's own names


def _temp_file(path: str, mode: int = 0o600) -> tuple[int, str]:
    """A new temp file beside ``path`` (named as ``TEMP_NAME`` says; private unless ``mode``
    says otherwise): its descriptor and path (FileNotFoundError when the folder is missing)."""
    folder, name = os.path.split(path)
    prefix = os.path.join(folder, temp_prefix(name))
    for _ in range(100):
        tmp = f"{prefix}{_NAMES.getrandbits(32):08x}.tmp"     # [0-9a-f]{8}
        try:
            return os.open(tmp, _TEMP_FLAGS, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temp file name", prefix)


def atomic_write_text(path: Path, text: str) -> None:
    """Atomically write UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: Any) -> None:
    """Atomically write a JSON document (sorted keys, so equal states give equal bytes)."""
    atomic_write_text(path, json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def make_private(path: str | Path) -> None:
    """Create ``path`` empty and private (0600) when missing, or narrow one readable by
    others (left by an older version), for a file another library opens and writes (SQLite,
    which gives its journal the database's mode); errors are left to that library."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return
    try:
        if hasattr(os, "fchmod") and stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
            os.fchmod(fd, 0o600)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_private(path: str | Path, data: bytes, *, durable: bool = False) -> None:
    """Append ``data`` to ``path`` with one ``write`` (concurrent appenders never interleave
    within it), the file private (0600) like the rest of the state: logs of what agents asked
    or claimed are theirs, not every local user's. A log an older version left readable by
    others is narrowed on its next append. The folder is made when missing. ``durable``
    fsyncs the file, and the folder when the file is new."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    new = durable and not os.path.exists(path)
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o600)
    try:
        if hasattr(os, "fchmod") and stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
            try:
                os.fchmod(fd, 0o600)
            except OSError:     # another user's file: append as before
                pass
        os.write(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    if new:
        _fsync_dir(os.path.dirname(os.fspath(path)) or ".")


def fsync_path(path: str | Path) -> None:
    """Flush one file or folder to disk (a folder: the names in it); errors are ignored (a
    file gone since, a file system without fsync)."""
    _fsync_dir(Path(path))


def _fsync_dir(folder: str | Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class LockTurns:
    """``exclusive_lock``'s lock taken again and again through one open file, for a caller
    that takes it per item (ingest, per page it writes: opening the file each time cost 26 µs,
    a turn on the open file 1 µs); ``close`` when done. One thread at a time: turns taken at
    once through the same file would not exclude each other. ``on_wait`` is called (once,
    from a timer thread) when a turn has waited ``wait_notice_s`` for another holder: a
    command that stops silently for as long as the other holds it reads as hung."""

    def __init__(self, lock_file: str | Path, on_wait: Callable[[], None] | None = None,
                 wait_notice_s: float = 1.0):
        self.lock_file = Path(lock_file)
        self._handle: Any = None
        self._on_wait = on_wait
        self._wait_notice_s = wait_notice_s
        self._told = False

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """Hold the lock (waiting for it), as ``exclusive_lock`` does."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: one process at a time
            yield
            return
        if self._handle is None:
            self.lock_file.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.lock_file, "a+b")
        fd = self._handle.fileno()
        if self._on_wait is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            self._wait_telling(fd, fcntl)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _wait_telling(self, fd: int, fcntl: Any) -> None:
        """Take the lock; if another holds it, call ``on_wait`` once it has been waited for
        ``wait_notice_s`` (the first such wait only: one notice per object)."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if self._told:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return

        def tell() -> None:
            self._told = True
            if self._on_wait is not None:
                self._on_wait()

        timer = threading.Timer(self._wait_notice_s, tell)
        timer.daemon = True
        timer.start()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            timer.cancel()

    def close(self) -> None:
        """Close the file (the lock is not held between turns)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


@contextlib.contextmanager
def exclusive_lock(lock_file: str | Path) -> Iterator[None]:
    """Hold an exclusive lock between processes on ``lock_file`` (created if missing; POSIX
    flock, so several serve processes sharing a state folder take turns; elsewhere a no-op):
    one ``LockTurns`` turn."""
    turns = LockTurns(lock_file)
    try:
        with turns.turn():
            yield
    finally:
        turns.close()


@contextlib.contextmanager
def sole_holder(lock_file: Path, cannot_open: Callable[[OSError], Exception],
                busy: Callable[[OSError], Exception]) -> Iterator[None]:
    """Hold ``lock_file``'s exclusive flock or refuse at once: one command of a kind per
    workspace (ingest, pull). ``cannot_open`` makes the error for a lock file that cannot be
    created (a read-only state folder), ``busy`` the one for a lock another process holds.
    Without advisory locks (Windows) it holds nothing."""
    try:
        import fcntl
    except ImportError:      # pragma: no cover - Windows: no advisory locks
        yield
        return
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_file, "a+b")
    except OSError as exc:      # a read-only state folder, or a file where it belongs
        raise cannot_open(exc) from exc
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise busy(exc) from exc
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
