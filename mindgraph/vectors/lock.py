"""One embed at a time per workspace: an advisory lock on ``embed.lock`` in the state folder.

Two `mindgraph embed` runs (or an embed and a server's embed job) on one workspace each
planned every new chunk and embedded it: twice the model calls and store writes. The second
now waits for the first (saying so, with its pid and what it is: the holder writes both into
the lock file, as the pgvector lock's session name says them) and then plans again, finding what the
first embedded already stored. The lock is POSIX ``flock``: the kernel releases it when its
holder ends, SIGKILL included, so a killed embed never leaves a stale lock. Processes take
turns; within one process it is shared (the CLI holds it across its plan and the embed it
runs, and a server's embeds that overlap are coordinated by core's LiveVectors: the last to
end catches up). Without ``fcntl`` (Windows) it is a no-op. A store shared beyond the
workspace (pgvector: another workspace or machine may write the same table) has a lock of its
own, ``store.embed_lock``, taken after this one and held as long, with the same waiting.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import EmbedBusy, InputError
from ..stores.pg_embed_lock import HOLDERS

LOCK_FILENAME = "embed.lock"
UNNAMED = "another mindgraph embed"     # a holder that wrote no word (an older mindgraph)


class _Holding:
    """This process's hold on one lock file: how many embeds share it, and its descriptor."""

    def __init__(self) -> None:
        self.gate = threading.Lock()        # one thread takes the flock; the others join it
        self.count = 0
        self.fd = -1
        self.store_lock: contextlib.ExitStack | None = None


_holding: dict[str, _Holding] = {}
_holding_guard = threading.Lock()


@contextlib.contextmanager
def embed_lock(state_dir: Path, *, wait: bool = True,
               notice: Callable[[str], None] | None = None, store: Any = None,
               holder: str = "embed-run") -> Iterator[None]:
    """Hold the workspace's embed lock, and ``store``'s when it has one (``embed_lock``: a
    pgvector store's in its database, named after ``holder``: stores/pg_embed_lock.py). When
    another process holds either: with ``wait``, tell ``notice`` (once) and block until it
    is free; else raise EmbedBusy naming it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: run one embed at a time
        with store_lock(store, wait, notice, holder):
            yield
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    path = str(state_dir.resolve() / LOCK_FILENAME)   # the folder resolved, never the file
    with _holding_guard:
        holding = _holding.setdefault(path, _Holding())
    with holding.gate:
        if holding.count == 0:
            holding.fd = _take(path, fcntl, wait, notice, holder)
            try:
                with contextlib.ExitStack() as stack:
                    stack.enter_context(store_lock(store, wait, notice, holder))
                    holding.store_lock = stack.pop_all()
            except BaseException:
                _release(holding, fcntl)
                raise
        holding.count += 1
    try:
        yield
    finally:
        with holding.gate:
            holding.count -= 1
            if holding.count == 0:
                _release(holding, fcntl)


def store_lock(store: Any, wait: bool, notice: Callable[[str], None] | None = None,
               holder: str = "embed-run") -> contextlib.AbstractContextManager[Any]:
    """``store``'s own embed lock, or nothing when it has none (the embedded store lives in
    the state folder: the file lock covers it). A long-running process's embedding of the
    pages that changed (vectors/live.py) takes it alone, without waiting (``holder``
    "catch-up")."""
    take = getattr(store, "embed_lock", None)
    return take(wait=wait, notice=notice, holder=holder) if callable(take) \
        else contextlib.nullcontext()


def _release(holding: _Holding, fcntl: Any) -> None:
    """Free the store's lock, then the file lock (the reverse of taking them)."""
    try:
        if holding.store_lock is not None:
            holding.store_lock.close()
    finally:
        holding.store_lock = None
        fcntl.flock(holding.fd, fcntl.LOCK_UN)
        os.close(holding.fd)
        holding.fd = -1


def _take(path: str, fcntl: Any, wait: bool, notice: Callable[[str], None] | None,
          holder: str) -> int:
    """Open ``path`` and flock it (see embed_lock); the descriptor, with our pid and
    ``holder`` (a key of HOLDERS) written in."""
    fd = _open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid, what = _holder(fd) or (None, "")
            who = (f"{HOLDERS.get(what, UNNAMED)} is running in this workspace (pid {pid})"
                   if pid else "another process holds this workspace's embed lock")
            if not wait:
                raise EmbedBusy(f"{who} (it holds {path}). Run again when it has finished, "
                                f"or leave out --no-wait to wait for it.") from None
            if notice is not None:
                notice(f"{who}; waiting for it to finish, then embedding what it left")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, _identity(os.getpid(), holder).encode(), 0)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_lock_file(path: str) -> int:
    """The lock file's descriptor, opened read-write (created when missing) as a regular file
    in the state folder only: a symlink is never followed (it could point at a note in raw/ or
    a file outside the workspace, which the pid written in would overwrite), and a FIFO, a
    device or a folder in its place is refused with the fix rather than a traceback."""
    flags = (os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_NOFOLLOW", 0))
    fix = f"remove {path} (mindgraph makes it again) and run the embed again"
    if os.path.islink(path):
        raise InputError(f"The embed lock {path} is a symbolic link; mindgraph does not write "
                         f"through links: {fix}.")
    try:
        fd = os.open(path, flags, 0o644)
    except IsADirectoryError:
        raise InputError(f"The embed lock {path} is a folder, not a file: {fix}.") from None
    except OSError as exc:
        raise InputError(f"Cannot open the embed lock {path} ({exc.strerror}): the state "
                         f"folder must be writable for `mindgraph embed`.") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"The embed lock {path} is not a regular file (a FIFO or a device): "
                         f"{fix}.")
    return fd


def _identity(pid: int, holder: str) -> str:
    """What a holder writes into the lock: its pid, the process's start time where /proc
    tells it (clock ticks after boot; else ``-``), so a reader can tell it from a later
    process that got the same pid, and what it is (``holder``: a `mindgraph embed`, another
    process's embed run such as a server's reindex): ``"1234 56789 embed-run\\n"``."""
    started = _start_time(pid)
    return f"{pid} {started if started is not None else '-'} {holder}\n"


def _start_time(pid: int) -> int | None:
    """Process ``pid``'s start time from /proc/<pid>/stat (field 22), or None (no /proc, or
    no such process)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _holder(fd: int) -> tuple[int, str] | None:
    """The pid of the mindgraph embed holding the lock open at ``fd`` and what it is (the
    holder word it wrote, "" from an older mindgraph), or None when the file cannot vouch for
    one. The file holds the pid of the last mindgraph that took the
    lock, which need not be the holder now: another program may hold it (the pid then
    stale, perhaps reused), or the holder has not written its own yet. A pid is named only
    when that process is alive with the start time written beside it and, where the kernel
    lists flock holders (/proc/locks), is one of this file's."""
    try:
        written = os.pread(fd, 64, 0).decode("ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if not written or not written[0].isdigit():
        return None
    pid = int(written[0])
    started = _start_time(pid)
    if started is not None:
        if len(written) < 2 or written[1] != str(started):
            return None         # an older file (no start time) or another process now
    else:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except OSError:
            pass                # alive, another user's
        if os.path.isdir("/proc/self"):
            return None         # /proc there, yet no such process
    holders = _flock_holders(fd)
    what = written[2] if len(written) > 2 else ""
    return (pid, what) if holders is None or pid in holders else None


def _flock_holders(fd: int) -> set[int] | None:
    """The pids the kernel lists as holding a flock on the file open at ``fd``
    (/proc/locks), or None where it does not say."""
    info = os.fstat(fd)
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    holders = set()
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 20474 fe:00:2146348 0 EOF" (waiters have "->")
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device \
                and fields[4].isdigit():
            holders.add(int(fields[4]))
    return holders
