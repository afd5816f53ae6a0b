"""Settings → vector store."""

from __future__ import annotations

import pytest

from mindgraph.config import settings_from_dict
from mindgraph.errors import ConfigError
from mindgraph.stores import EmbeddedStore, create_store
from mindgraph.stores.pgvector import PgVectorStore


def test_default_is_the_embedded_store_under_the_state_folder(tmp_path):
    settings = settings_from_dict({"store": {"tenant": "acme"}}, base_dir=tmp_path)
    store = create_store(settings)
    assert isinstance(store, EmbeddedStore)
    assert store.folder == settings.state_dir / "vectors" / "acme"


def test_pgvector_reads_the_dsn_from_the_named_variable(monkeypatch):
    monkeypatch.setenv("KB_PG", "postgresql://u:pw@db/kb")
    settings = settings_from_dict({"store": {"backend": "pgvector", "dsn_env": "KB_PG",
                                             "table": "kb_vectors", "ef_search": 80}})
    store = create_store(settings)
    assert isinstance(store, PgVectorStore)
    assert store.description == "pgvector at postgresql://u:***@db/kb (table kb_vectors, " \
                                "tenant default)"


def test_pgvector_without_the_variable_is_a_config_error(monkeypatch):
    monkeypatch.delenv("KB_PG", raising=False)
    settings = settings_from_dict({"store": {"backend": "pgvector", "dsn_env": "KB_PG"}})
    with pytest.raises(ConfigError, match="KB_PG is not set"):
        create_store(settings)
