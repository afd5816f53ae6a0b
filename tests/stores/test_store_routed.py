"""stores/routed.py over both stores: a routed provider's sections are stored as their own
model's block only (one table per model, no zero blocks), answer exactly as the wide vectors
did, and a store written in the older wide layout is read as it was and upgraded on the next
write. Two real hashing embedders are routed (64 and 32 wide) through the real sync."""

from __future__ import annotations

import numpy as np
import pytest

from mindgraph.page.parse import parse_page
from mindgraph.providers.embedding.hashing import HashingEmbedder
from mindgraph.providers.embedding.routed import RoutedEmbeddings
from mindgraph.stores.base import VectorRecord
from mindgraph.stores.routed import RoutedStore, for_provider, part_version
from mindgraph.vectors.chunking import chunker_for
from mindgraph.vectors.sync import sync_pages
from mindgraph.errors import StoreError

WIDE = "local:routed(*=hashing:v1:64,ja=hashing:v1:32):96"   # model_version_of("local", ...)


class Routed(RoutedEmbeddings):
    """Two hashing models, under a local routed model_version as the real ones are."""

    def __init__(self) -> None:
        super().__init__(HashingEmbedder(64), {"ja": HashingEmbedder(32)})

    @property
    def model_version(self) -> str:
        return WIDE


def pages(japanese_sync: bool = True) -> list:
    texts = {f"en/p{i}.md": f"# Topic {i}\n\nNotes about alpha{i} and the sync of vaults.\n\n"
                            f"## More\n\nDetails on beta{i} and devices.\n" for i in range(12)}
    texts.update({f"ja/p{i}.md": f"# 話題{i}\n\n第{i}の保管庫を端末の間で同期します。\n\n"
                                 f"## 詳しく\n\nノート{i}の設定について。\n" for i in range(8)})
    if not japanese_sync:
        texts["ja/p0.md"] = "# Topic zero\n\nNow written in English about syncing vaults.\n"
    return [parse_page(text, path) for path, text in sorted(texts.items())]


def same(routed: list, wide: list) -> bool:
    """The routed answers are the wide ones: where the wide layout filled the top-k with
    another model's sections at 0, the routed store has its own model's next ones (their
    cosines below 0 and so below those zeros), so each wide answer is a routed one's head."""
    return len(routed) == len(wide) and all(r[:len(w)] == w for r, w in zip(routed, wide))


QUERIES = ["sync of vaults alpha3", "beta7 devices", "保管庫を同期", "ノート5の設定", "話題"]


def answers(store, provider) -> list:
    """Each query's hits; the wide layout's hits of another model (exactly 0: never
    compared) are left out, the routed store returns none (see ``same``)."""
    out = []
    for q in QUERIES:
        vector = provider.embed_queries([q])[0]
        out.append([(h.page, h.chunk_id, round(h.score, 5))
                    for h in store.query(vector, 10, WIDE) if h.score != 0.0])
        out.append([(h.page, round(h.score, 5)) for h in store.query(
            vector, 50, WIDE, pages={"ja/p3.md", "en/p3.md"}) if h.score != 0.0])
    return out


def test_each_section_is_stored_as_its_own_models_block_and_answers_as_the_wide_vector(store,
                                                                                      reopen):
    provider = Routed()
    routed = for_provider(store, provider)
    assert isinstance(routed, RoutedStore) and for_provider(store, HashingEmbedder(64)) is store
    sync_pages(pages(), provider, routed, chunker_for(provider))
    parts = [part_version(WIDE, 0, 64), part_version(WIDE, 1, 32)]
    # the inner store holds two ordinary models of their own widths, and no wide rows
    assert store.model_versions() == {parts[0]: 24, parts[1]: 16}
    assert {len(r.vector) for batch in store.records(parts[1]) for r in batch} == {32}
    assert routed.model_versions() == {WIDE: 40} and routed.count(WIDE) == 40
    assert routed.count() == 40 and len(routed.hashes(WIDE)) == 20

    wide = reopen(store, tenant="wide")            # the older layout, side by side
    sync_pages(pages(), provider, wide, chunker_for(provider))
    assert wide.model_versions() == {WIDE: 40}
    assert same(answers(routed, provider), answers(wide, provider))
    # a Japanese query meets only Japanese sections, and never an English one at score 0
    japanese = routed.query(provider.embed_queries(["保管庫を同期"])[0], 100, WIDE)
    assert len(japanese) == 16 and all(h.page.startswith("ja/") for h in japanese)
    # the records come back wide, as the provider made them
    back = [r for batch in routed.records(WIDE) for r in batch]
    assert len(back) == 40 and {len(r.vector) for r in back} == {96}
    assert all(not r.vector[:64].any() for r in back if r.page.startswith("ja/"))


def test_a_page_that_changes_language_moves_to_the_other_model(store):
    provider = Routed()
    routed = for_provider(store, provider)
    sync_pages(pages(), provider, routed, chunker_for(provider))
    report = sync_pages(pages(japanese_sync=False), provider, routed, chunker_for(provider))
    assert report.embedded == 1
    held = {part: store.hashes(part).get("ja/p0.md") for part in routed.parts}
    assert held[routed.parts[1]] is None and len(held[routed.parts[0]]) == 1
    again = sync_pages(pages(japanese_sync=False), provider, routed, chunker_for(provider))
    assert again.embedded == 0 and again.unchanged == 39


def test_the_wide_layout_is_read_as_it_was_then_upgraded_by_the_next_sync(store, reopen):
    provider = Routed()
    sync_pages(pages(), provider, store, chunker_for(provider))     # an older version's store
    assert store.model_versions() == {WIDE: 40}
    before = answers(store, provider)
    routed = for_provider(reopen(store), provider)
    assert answers(routed, provider) == before and routed.count(WIDE) == 40
    assert routed.model_versions() == {WIDE: 40}
    report = sync_pages(pages(), provider, routed, chunker_for(provider))
    assert (report.embedded, report.unchanged, report.other_models) == (0, 40, {})
    assert sorted(store.model_versions()) == list(routed.parts)     # the wide rows are gone
    assert same(answers(routed, provider), before)
    fresh = for_provider(reopen(store), provider)
    assert same(answers(fresh, provider), before) and fresh.count(WIDE) == 40


def test_an_upgrade_cut_short_is_answered_by_the_wide_rows_and_finished_next_time(store,
                                                                                 reopen):
    provider = Routed()
    sync_pages(pages(), provider, store, chunker_for(provider))
    before = answers(store, provider)
    routed = for_provider(reopen(store), provider)
    # killed after copying part of the rows: the wide rows are all still there
    first = next(iter(store.records(WIDE, batch_size=7)))
    routed._write_parts(first, np.stack([r.vector for r in first]), strict=True, clean=False)
    routed.flush()
    assert store.count(routed.parts[0]) + store.count(routed.parts[1]) == 7
    again = for_provider(reopen(store), provider)
    assert answers(again, provider) == before and again.count(WIDE) == 40
    assert again.upgrade() == 33                    # the 7 copied already are kept
    assert same(answers(again, provider), before) and store.count(WIDE) == 0


def test_a_vector_filling_several_blocks_is_refused_and_the_width_checked(store):
    routed = for_provider(store, Routed())
    both = np.ones(96, dtype=np.float32)
    with pytest.raises(StoreError, match="fills exactly one"):
        routed.upsert(WIDE, [VectorRecord("a.md", "s", "s", "h", both)])
    with pytest.raises(StoreError, match="96 dimensions, not 64"):
        routed.upsert(WIDE, [VectorRecord("a.md", "s", "s", "h", np.ones(64))])
    assert routed.count() == 0


def test_dropping_the_routed_model_drops_every_part(store):
    provider = Routed()
    routed = for_provider(store, provider)
    sync_pages(pages(), provider, routed, chunker_for(provider))
    store.upsert("other:model:8", [VectorRecord("a.md", "s", "s", "h", np.ones(8))])
    assert routed.model_versions() == {WIDE: 40, "other:model:8": 1}
    assert routed.drop_model(WIDE) == 40
    assert store.model_versions() == {"other:model:8": 1}


def test_a_large_embedded_table_read_from_its_file_is_upgraded_batch_by_batch(tmp_path):
    # from ``exact_below`` rows a table's matrix stays in its file (row_matrix.py) and an
    # HNSW graph answers (ann.py): the upgrade reads the rows batch by batch from the file
    from mindgraph.stores.embedded import EmbeddedStore

    provider = Routed()
    folder = tmp_path / "vectors"
    wide = EmbeddedStore(folder, exact_below=10)
    sync_pages(pages(), provider, wide, chunker_for(provider))
    wide.close()
    before = answers(EmbeddedStore(folder, exact_below=10), provider)
    reopened = EmbeddedStore(folder, exact_below=10)
    assert reopened._table(WIDE).vectors.in_file
    routed = for_provider(reopened, provider)
    assert [len(b) for b in reopened.records(WIDE, batch_size=16)] == [16, 16, 8]
    assert routed.upgrade() == 40
    routed.close()
    again = for_provider(EmbeddedStore(folder, exact_below=10), provider)
    assert same(answers(again, provider), before)
    assert sorted(again.inner.model_versions()) == list(again.parts)
    assert all(again.inner._table(part).ann is not None for part in again.parts)


def test_a_process_that_read_the_wide_layout_follows_another_ones_upgrade(store, reopen):
    provider = Routed()
    sync_pages(pages(), provider, store, chunker_for(provider))
    before = answers(store, provider)
    server = for_provider(reopen(store), provider)      # a server that saw the wide rows
    assert server.count(WIDE) == 40 and server._has_wide()
    embed = for_provider(reopen(store), provider)        # `mindgraph embed` elsewhere
    assert embed.upgrade() == 40
    assert server.count(WIDE) == 40 and len(server.hashes(WIDE)) == 20
    assert same(answers(server, provider), before)
