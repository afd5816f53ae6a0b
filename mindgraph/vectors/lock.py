"""One embed at a time per workspace: an advisory lock on ``embed.lock`` in the state folder.

Two `mindgraph embed` runs (or an embed and a server's embed job) on one workspace each
planned every new chunk and embedded it: twice the model calls and store writes. The second
now waits for the first (saying so, with its pid) and then plans again, finding what the
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

LOCK_FILENAME = "embed.lock"


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
               notice: Callable[[str], None] | None = None, store: Any = None
               ) -> Iterator[None]:
    """Hold the workspace's embed lock, and ``store``'s when it has one (``embed_lock``: a
    pgvector store's in its database). When another process holds either: with ``wait``,
    tell ``notice`` (once) and block until it is free; else raise EmbedBusy naming it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: run one embed at a time
        with _store_lock(store, wait, notice):
            yield
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    path = str(state_dir.resolve() / LOCK_FILENAME)   # the folder resolved, never the file
    with _holding_guard:
        holding = _holding.setdefault(path, _Holding())
    with holding.gate:
        if holding.count == 0:
            holding.fd = _take(path, fcntl, wait, notice)
            try:
                with contextlib.ExitStack() as stack:
                    stack.enter_context(_store_lock(store, wait, notice))
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


def _store_lock(store: Any, wait: bool, notice: Callable[[str], None] | None
                ) -> contextlib.AbstractContextManager[Any]:
    """``store``'s own embed lock, or nothing when it has none (the embedded store lives in
    the state folder: the file lock covers it)."""
    take = getattr(store, "embed_lock", None)
    return take(wait=wait, notice=notice) if callable(take) else contextlib.nullcontext()


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


def _take(path: str, fcntl: Any, wait: bool, notice: Callable[[str], None] | None) -> int:
    """Open ``path`` and flock it (see embed_lock); the descriptor, with our pid written in."""
    fd = _open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if not wait:
                raise EmbedBusy(f"another `mindgraph embed` is running in this workspace"
                                f"{holder} (it holds {path}). Run again when it has finished, "
                                f"or leave out --no-wait to wait for it.") from None
            if notice is not None:
                notice(f"another `mindgraph embed` is running in this workspace{holder}; "
                       f"waiting for it to finish, then embedding what it left")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
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


def _holder(fd: int) -> str:
    """`` (pid N)`` from the lock file the holder wrote its pid into, or "" when not yet."""
    try:
        pid = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
