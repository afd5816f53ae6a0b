"""A long-running process keeps vectors current: changed pages are embedded before the next
query, what cannot be embedded is said in `degradation` and retried, and `embed` running at
the same time never writes back vectors of older text. Real indexes: hashing embedder,
embedded store."""

import threading

from mindgraph.core import Mindgraph
from mindgraph.errors import ProviderError
from mindgraph.vectors import live as live_module

LONG = "# Delta\n\nA\n\n## B\n\nb\n\n## C\n\nc\n"        # three sections


def workspace(tmp_path, extra=""):
    (tmp_path / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 64\n" + extra)
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Alpha.md").write_text("# Alpha\n\nAirships carry trunks.\n")
    (wiki / "Beta.md").write_text("# Beta\n\nSubmarines dive deep.\n")
    return wiki


def up_to_date(mg) -> bool:
    return Mindgraph.open(mg.settings.base_dir).plan_embed().is_noop


def serving(tmp_path, extra=""):
    """A workspace whose Mindgraph has embedded the wiki and answered a hybrid query, as a
    server would have: (wiki folder, Mindgraph)."""
    wiki = workspace(tmp_path, extra)
    mg = Mindgraph.open(tmp_path)
    mg.embed()
    mg.smart_search("airships")
    return wiki, mg


def hold_embed(mg, thread_name):
    """Make the embed running on ``thread_name`` wait inside its model call."""
    provider = mg.embedding_provider()
    real = provider.embed_documents
    inside, release = threading.Event(), threading.Event()

    def held(texts):
        if threading.current_thread().name == thread_name:
            inside.set()
            assert release.wait(10)
        return real(texts)

    provider.embed_documents = held
    return inside, release


def embed_meanwhile(mg, wiki, thread_name="embed"):
    """Start an embed that plans Alpha's second version, hold it in its model call, and
    write a third version meanwhile. Returns (the embed's thread, its release)."""
    inside, release = hold_embed(mg, thread_name)
    (wiki / "Alpha.md").write_text("# Alpha\n\nVersion two.\n")
    worker = threading.Thread(target=mg.embed, name=thread_name)
    worker.start()
    assert inside.wait(10)
    (wiki / "Alpha.md").write_text("# Alpha\n\nVersion three, the last.\n")
    return worker, release


def test_a_page_changed_right_after_embed_is_embedded_before_the_next_query(tmp_path):
    wiki = workspace(tmp_path)
    mg = Mindgraph.open(tmp_path)
    mg.smart_search("airships")                 # no vectors yet: keyword-only
    mg.embed()
    (wiki / "Alpha.md").write_text("# Alpha\n\nZeppelins float over mountains.\n")
    response = mg.smart_search("zeppelins mountains")
    assert response.degradation == () and up_to_date(mg)


def test_embed_running_meanwhile_never_writes_back_older_text(tmp_path):
    wiki, mg = serving(tmp_path)
    worker, release = embed_meanwhile(mg, wiki)
    meanwhile = mg.smart_search("version")               # queries go on, and say why
    assert meanwhile.results
    assert any("wait for the `embed` running now" in d for d in meanwhile.degradation)
    release.set()
    worker.join(10)
    assert up_to_date(mg)
    assert mg.smart_search("version three last").degradation == ()


def test_pages_over_the_limit_are_noted_until_another_process_embeds_them(tmp_path,
                                                                         monkeypatch):
    wiki, server = serving(tmp_path, "serve:\n  embed_changes_max_chunks: 1\n")
    (wiki / "Delta.md").write_text(LONG)
    noted = server.smart_search("delta")
    assert any("not embedded yet: 1" in d for d in noted.degradation)
    Mindgraph.open(tmp_path).embed()                     # `mindgraph embed` from the CLI
    monkeypatch.setattr(live_module, "RETRY_S", 0.0)
    assert server.smart_search("delta b").degradation == ()


def test_a_failing_provider_is_noted_and_retried(tmp_path, monkeypatch):
    wiki, mg = serving(tmp_path)
    provider = mg.embedding_provider()
    real = provider.embed_documents

    def down(texts):
        raise ProviderError("embedding provider unreachable")

    provider.embed_documents = down
    (wiki / "Gamma.md").write_text("# Gamma\n\nGliders ride thermals.\n")
    response = mg.smart_search("gliders")
    [noted] = [d for d in response.degradation if "could not be embedded" in d]
    # agents read the provider's failure in general terms; its own words are for the log
    assert "(ProviderError; the server's log has the details)" in noted
    assert "unreachable" not in noted
    assert "could not be embedded (embedding provider unreachable)" in noted.detail
    assert response.results[0].page == "Gamma.md"        # keywords still find it
    provider.embed_documents = real
    monkeypatch.setattr(live_module, "RETRY_S", 0.0)
    assert mg.smart_search("gliders thermals").degradation == () and up_to_date(mg)


def test_an_all_zero_vector_of_a_changed_page_is_refused_and_noted(tmp_path, monkeypatch):
    import numpy as np

    wiki, mg = serving(tmp_path)
    provider = mg.embedding_provider()
    real = provider.embed_documents

    def zero_for_broken(texts):
        vectors = real(texts)
        for i, text in enumerate(texts):
            if "Broken" in text:
                vectors[i] = np.zeros(vectors.shape[1], dtype=np.float32)
        return vectors

    provider.embed_documents = zero_for_broken
    (wiki / "Gamma.md").write_text("# Gamma\n\nBroken gliders ride thermals.\n")
    response = mg.smart_search("gliders")
    [noted] = [d for d in response.degradation if "refused" in d]
    assert "Gamma.md#" in noted.detail and "all-zero vector" in noted.detail   # the log's
    assert "Gamma.md" not in noted                                           # not agents'
    assert mg.vector_store().hashes(provider.model_version).get("Gamma.md") is None
    provider.embed_documents = real
    monkeypatch.setattr(live_module, "RETRY_S", 0.0)
    assert mg.smart_search("gliders thermals").degradation == () and up_to_date(mg)


def test_an_unreadable_page_keeps_its_vectors(tmp_path):
    wiki, mg = serving(tmp_path)
    (wiki / "Alpha.md").write_bytes(b"# Alpha\n\n\xff\xfe not utf-8\n")
    mg.smart_search("airships")
    version = mg.embedding_provider().model_version
    assert "Alpha.md" in mg.vector_store().hashes(version)    # as `mindgraph embed` keeps it


def test_a_zero_limit_never_embeds_and_says_so(tmp_path, monkeypatch):
    wiki, mg = serving(tmp_path, "serve:\n  embed_changes_max_chunks: 0\n")
    (wiki / "Gamma.md").write_text("# Gamma\n\nGliders.\n")
    assert any("not embedded yet: 1" in d for d in mg.smart_search("gliders").degradation)
    assert not up_to_date(mg)
    Mindgraph.open(tmp_path).embed()                     # `mindgraph embed` in a terminal
    monkeypatch.setattr(live_module, "RETRY_S", 0.0)
    assert mg.smart_search("gliders again").degradation == ()


def test_retries_wait_for_a_running_embed(tmp_path, monkeypatch):
    wiki, mg = serving(tmp_path)
    worker, release = embed_meanwhile(mg, wiki)
    mg.smart_search("version")
    monkeypatch.setattr(live_module, "RETRY_S", 0.0)     # a retry is due meanwhile
    mg.smart_search("version three")
    release.set()
    worker.join(10)
    assert up_to_date(mg)


def test_overlapping_embeds_leave_the_catch_up_to_the_last(tmp_path):
    wiki, mg = serving(tmp_path)
    first, release = embed_meanwhile(mg, wiki, "embed-a")
    mg.smart_search("version")
    mg.embed()                                           # a second embed runs to its end
    release.set()
    first.join(10)
    assert up_to_date(mg)


def test_a_dry_run_embed_leaves_nothing_waiting(tmp_path):
    wiki, mg = serving(tmp_path)
    (wiki / "Alpha.md").write_text("# Alpha\n\nVersion two.\n")
    mg.embed(dry_run=True)                               # its planning sync saw the change
    assert mg.smart_search("version two").degradation == () and up_to_date(mg)


def test_a_removed_page_loses_its_vectors(tmp_path):
    wiki, mg = serving(tmp_path)
    (wiki / "Beta.md").unlink()
    mg.smart_search("submarines")
    version = mg.embedding_provider().model_version
    assert "Beta.md" not in mg.vector_store().hashes(version)
