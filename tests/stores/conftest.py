"""Store fixtures: every contract test runs against the embedded store and real pgvector."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Iterator

import pytest

from mindgraph.stores.base import VectorStore
from mindgraph.stores.embedded import EmbeddedStore
from mindgraph.stores.pgvector import PgVectorStore


@pytest.fixture
def embedded_store(tmp_path: Path) -> Iterator[EmbeddedStore]:
    """An empty embedded store in a temporary state folder."""
    store = EmbeddedStore.for_state_dir(tmp_path / "state")
    yield store
    store.close()


@pytest.fixture
def pg_table() -> str:
    """A fresh table name, so tests sharing one server never see each other's rows."""
    return f"mg_test_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def pg_store(pg_dsn: str, pg_table: str) -> Iterator[PgVectorStore]:
    """An empty pgvector store on the test server (its table is dropped afterwards)."""
    store = PgVectorStore(pg_dsn, table=pg_table, ef_search=100)
    yield store
    store.drop_table()
    store.close()


@pytest.fixture(params=["embedded", pytest.param("pgvector", marks=pytest.mark.pg)])
def store(request: pytest.FixtureRequest) -> VectorStore:
    """Each store implementation in turn (the one contract suite runs over both)."""
    name = "embedded_store" if request.param == "embedded" else "pg_store"
    return request.getfixturevalue(name)


@pytest.fixture
def reopen(request: pytest.FixtureRequest, tmp_path: Path):
    """A function opening a second handle on the same store, optionally as another tenant."""
    opened: list[VectorStore] = []

    def _reopen(store: VectorStore, tenant: str | None = None) -> VectorStore:
        if isinstance(store, EmbeddedStore):
            folder = store.folder if tenant is None else store.folder.parent / tenant
            other: VectorStore = EmbeddedStore(folder)
        else:
            pg_dsn = request.getfixturevalue("pg_dsn")
            pg_table = request.getfixturevalue("pg_table")
            other = PgVectorStore(pg_dsn, table=pg_table, tenant=tenant or "default")
        opened.append(other)
        return other

    yield _reopen
    for other in opened:
        other.close()
