"""Incremental embedding: only new/changed chunks are embedded, stale ones removed."""

from __future__ import annotations

import numpy as np
import pytest

from mindgraph.errors import ProviderError
from mindgraph.page.parse import parse_page
from mindgraph.providers.embedding import HashingEmbedder
from mindgraph.stores.embedded import EmbeddedStore
from mindgraph.stores.pgvector import PgVectorStore
from mindgraph.vectors.chunking import chunker_for
from mindgraph.vectors.sync import plan_sync, sync_pages

SYNC = """---
title: Sync
---
Sync keeps your notes in step across devices.

## Set up
Sign in and pick a remote vault.

## Conflicts
When two devices edit the same note, Sync merges the changes.
"""
CANVAS = """# Canvas

Canvas is an infinite board for notes.

## Cards
Add notes, images and links as cards.
"""


def pages(**texts: str):
    return [parse_page(text, path) for path, text in texts.items()]


@pytest.fixture
def wiki() -> dict[str, str]:
    """Page path → markdown of a two-page wiki."""
    return {"Sync.md": SYNC, "Plugins/Canvas.md": CANVAS}


@pytest.fixture
def embedder() -> HashingEmbedder:
    """A counting, deterministic provider."""
    return HashingEmbedder(64)


def run(wiki, embedder, store, **kwargs):
    parsed = [parse_page(text, path) for path, text in wiki.items()]
    return sync_pages(parsed, embedder, store, chunker_for(embedder), **kwargs)


def test_first_run_embeds_everything_and_rerun_makes_no_call(wiki, embedder, embedded_store):
    first = run(wiki, embedder, embedded_store)
    assert (first.pages, first.chunks, first.embedded, first.unchanged) == (2, 5, 5, 0)
    assert embedder.texts_embedded == 5
    calls = embedder.calls
    again = run(wiki, embedder, embedded_store)
    assert embedder.calls == calls                     # zero embedding calls
    assert (again.embedded, again.unchanged, again.deleted_chunks) == (0, 5, 0)
    assert again.changed_pages == ()
    assert embedded_store.hashes(embedder.model_version) == {
        "Sync.md": {c.chunk_id: c.content_hash
                    for c in chunker_for(embedder).chunk_page(parse_page(SYNC, "Sync.md"))},
        "Plugins/Canvas.md": {
            c.chunk_id: c.content_hash
            for c in chunker_for(embedder).chunk_page(parse_page(CANVAS, "Plugins/Canvas.md"))},
    }


def test_only_the_edited_section_is_embedded_again(wiki, embedder, embedded_store):
    run(wiki, embedder, embedded_store)
    before = embedded_store.hashes(embedder.model_version)
    embedded = embedder.texts_embedded
    wiki["Sync.md"] = SYNC.replace("merges the changes", "keeps both versions")
    report = run(wiki, embedder, embedded_store)
    assert report.embedded == 1 and embedder.texts_embedded == embedded + 1
    assert report.changed_pages == ("Sync.md",)
    after = embedded_store.hashes(embedder.model_version)
    changed = {k for k in after["Sync.md"] if after["Sync.md"][k] != before["Sync.md"][k]}
    assert changed == {"conflicts"}
    query = embedder.embed_queries(["edit keeps both versions"])[0]
    top = embedded_store.query(query, 1, embedder.model_version)[0]
    assert (top.page, top.chunk_id) == ("Sync.md", "conflicts")


def test_removed_sections_and_pages_leave_the_store(wiki, embedder, embedded_store):
    run(wiki, embedder, embedded_store)
    wiki["Sync.md"] = SYNC.split("## Conflicts")[0]
    del wiki["Plugins/Canvas.md"]
    report = run(wiki, embedder, embedded_store)
    assert report.embedded == 0
    assert report.deleted_chunks == 3                  # 1 stale section + 2 of the gone page
    assert report.removed_pages == ("Plugins/Canvas.md",)
    assert embedded_store.hashes(embedder.model_version).keys() == {"Sync.md"}
    assert set(embedded_store.hashes(embedder.model_version)["Sync.md"]) == {"lead", "set-up"}


def test_unreadable_page_keeps_its_vectors(wiki, embedder, embedded_store):
    run(wiki, embedder, embedded_store)
    del wiki["Plugins/Canvas.md"]
    report = run(wiki, embedder, embedded_store, keep={"Plugins/Canvas.md"})
    assert report.deleted_chunks == 0
    assert "Plugins/Canvas.md" in embedded_store.hashes(embedder.model_version)


def test_dry_run_changes_nothing_and_says_what_would_happen(wiki, embedder, embedded_store):
    run(wiki, embedder, embedded_store)
    calls = embedder.calls
    wiki["New.md"] = "# New\n\nA fresh page."
    del wiki["Plugins/Canvas.md"]
    report = run(wiki, embedder, embedded_store, dry_run=True)
    assert embedder.calls == calls
    assert (report.embedded, report.deleted_chunks, report.dry_run) == (1, 2, True)
    assert "Plugins/Canvas.md" in embedded_store.hashes(embedder.model_version)
    assert "New.md" not in embedded_store.hashes(embedder.model_version)


def test_another_model_is_kept_apart_and_reported(wiki, embedded_store):
    small, large = HashingEmbedder(32), HashingEmbedder(64)
    run(wiki, small, embedded_store)
    report = run(wiki, large, embedded_store)
    assert report.embedded == 5                        # nothing reused across models
    assert report.other_models == {small.model_version: 5}
    q = large.embed_queries(["infinite board"])[0]
    assert embedded_store.query(q, 1, large.model_version)[0].page == "Plugins/Canvas.md"


def test_identical_texts_are_embedded_once(embedder, embedded_store):
    same = "# Shared\n\nThe same words on two pages."
    report = run({"a/Shared.md": same, "b/Shared.md": same}, embedder, embedded_store)
    assert report.embedded == 2 and embedder.texts_embedded == 1
    assert embedded_store.count(embedder.model_version) == 2


class FailingAfter:
    """Wraps a provider and fails from the n-th embedding call on (a provider outage)."""

    def __init__(self, inner: HashingEmbedder, fail_from: int):
        self.inner, self.fail_from, self.calls = inner, fail_from, 0
        self.model_version, self.dimension = inner.model_version, inner.dimension
        self.max_tokens, self.count_tokens = inner.max_tokens, inner.count_tokens

    def embed_documents(self, texts):
        self.calls += 1
        if self.calls >= self.fail_from:
            raise ProviderError("provider down")
        return self.inner.embed_documents(texts)

    embed_queries = embed_documents


def test_an_outage_keeps_finished_batches_and_the_next_run_resumes(tmp_path, embedder):
    wiki = {f"p{i}.md": f"# P{i}\n\nText number {i}." for i in range(10)}
    store = EmbeddedStore(tmp_path / "v")
    flaky = FailingAfter(embedder, fail_from=3)
    with pytest.raises(ProviderError):
        run(wiki, flaky, store, batch_size=2)
    # What was stored before the failure was flushed to disk.
    assert EmbeddedStore(tmp_path / "v").count(embedder.model_version) == 4
    report = run(wiki, embedder, EmbeddedStore(tmp_path / "v"), batch_size=2)
    assert report.embedded == 6 and report.unchanged == 4


def test_plan_is_pure(wiki, embedder, embedded_store):
    parsed = pages(**wiki)
    plan = plan_sync(parsed, embedded_store, embedder.model_version, chunker_for(embedder))
    assert embedder.calls == 0 and embedded_store.count() == 0
    assert plan.new_pages == ("Sync.md", "Plugins/Canvas.md") and not plan.is_noop
    assert [c.chunk_id for c in plan.to_embed] == ["lead", "set-up", "conflicts", "lead",
                                                   "cards"]


@pytest.mark.pg
def test_sync_into_pgvector(wiki, embedder, pg_dsn):
    store = PgVectorStore(pg_dsn, table="mg_test_sync")
    try:
        assert run(wiki, embedder, store).embedded == 5
        calls = embedder.calls
        wiki["Sync.md"] = SYNC.replace("remote vault", "shared remote vault")
        report = run(wiki, embedder, store)
        assert (report.embedded, report.unchanged) == (1, 4)
        assert embedder.calls == calls + 1
        assert run(wiki, embedder, store).embedded == 0 and embedder.calls == calls + 1
        q = embedder.embed_queries(["shared remote vault sign in"])[0]
        assert store.query(q, 1, embedder.model_version)[0].chunk_id == "set-up"
    finally:
        store.drop_table()
        store.close()


@pytest.fixture
def embedded_store(tmp_path) -> EmbeddedStore:
    """An empty embedded store."""
    return EmbeddedStore(tmp_path / "state" / "vectors" / "default")


def test_vectors_are_what_the_provider_returns(wiki, embedder, embedded_store):
    run(wiki, embedder, embedded_store)
    chunk = chunker_for(embedder).chunk_page(parse_page(CANVAS, "Plugins/Canvas.md"))[1]
    expected = embedder.embed_documents([chunk.text])[0]
    hit = embedded_store.query(expected, 1, embedder.model_version)[0]
    assert (hit.page, hit.chunk_id) == ("Plugins/Canvas.md", "cards")
    assert hit.score == pytest.approx(1.0, abs=1e-5)
    assert np.isclose(np.linalg.norm(expected), 1.0)
