"""The rewritten model graph is kept under the state folder and read back by later processes,
which then embed the same vectors without importing onnx (issue 20: start-up)."""

import json
import shutil
import subprocess
import sys

import numpy as np

from mindgraph.providers.embedding.graph_cache import FOLDER
from mindgraph.providers.embedding.local import LocalMiniLMProvider
from mindgraph.providers.embedding.session_cache import SUFFIX

QUERY = "How do I keep a vault in sync on a Linux server?"

# a new process embeds QUERY with the graph kept in argv[1], and says whether onnx loaded
PROBE = """
import json, sys
from pathlib import Path
from mindgraph.providers.embedding.local import LocalMiniLMProvider
vector = LocalMiniLMProvider(threads=1, state_dir=Path(sys.argv[1])).embed_queries([sys.argv[2]])
print(json.dumps({"onnx": "onnx" in sys.modules, "vector": vector[0].tolist()}))
"""


def _without_optimised_models(state_dir):
    """Remove the optimised models (session_cache.py) kept beside the graph: a process then
    starts from the rewritten graph, which is what these tests are about."""
    for kept in (state_dir / FOLDER).glob(f"*{SUFFIX}"):
        shutil.rmtree(kept)


def _fresh_process(state_dir):
    done = subprocess.run([sys.executable, "-c", PROBE, str(state_dir), QUERY],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_later_process_reads_the_kept_graph_and_embeds_the_same_vector(tmp_path):
    rewritten = LocalMiniLMProvider(threads=1).embed_queries([QUERY])[0]   # nothing kept
    assert not (tmp_path / FOLDER).exists()
    first = _fresh_process(tmp_path)            # rewrites (imports onnx) and keeps the graph
    kept = list((tmp_path / FOLDER).glob("all-MiniLM-L6-v2-w8a8-*.onnx"))
    assert first["onnx"] and len(kept) == 1
    second = _fresh_process(tmp_path)
    assert not second["onnx"]
    assert np.array_equal(np.float32(second["vector"]), rewritten)
    assert np.array_equal(np.float32(first["vector"]), rewritten)


def test_a_damaged_graph_file_is_not_run_but_made_again(tmp_path):
    LocalMiniLMProvider(threads=1, state_dir=tmp_path).embed_queries([QUERY])
    [kept] = (tmp_path / FOLDER).glob("*.onnx")
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])          # a half-written or cut file
    _without_optimised_models(tmp_path)
    damaged = _fresh_process(tmp_path)
    assert damaged["onnx"], "the cut graph was run instead of being made again"
    assert kept.read_bytes() == whole
    assert np.array_equal(np.float32(damaged["vector"]),
                          LocalMiniLMProvider(threads=1).embed_queries([QUERY])[0])


def test_a_graph_made_by_other_rewriting_code_is_replaced(tmp_path):
    stale = tmp_path / FOLDER / "all-MiniLM-L6-v2-w8a8-0123456789abcdef0123456789abcdef.onnx"
    stale.parent.mkdir()
    stale.write_bytes(b"mindgraph-graph 00\nnot a graph")
    LocalMiniLMProvider(threads=1, state_dir=tmp_path).embed_queries([QUERY])
    kept = list((tmp_path / FOLDER).glob("*.onnx"))
    assert len(kept) == 1 and kept[0] != stale


def test_a_read_only_state_folder_only_costs_the_rewrite(tmp_path):
    (tmp_path / FOLDER).write_text("a file where the folder would go")
    vector = LocalMiniLMProvider(threads=1, state_dir=tmp_path).embed_queries([QUERY])[0]
    assert np.array_equal(vector, LocalMiniLMProvider(threads=1).embed_queries([QUERY])[0])


def test_a_kept_file_the_runtime_refuses_is_made_again(tmp_path):
    # whole by its header (the SHA-256 of what follows it) but not a graph onnxruntime reads:
    # it was kept, and every later process ran without vectors until someone deleted it
    import hashlib

    from mindgraph.providers.embedding.graph_cache import MAGIC

    LocalMiniLMProvider(threads=1, state_dir=tmp_path).embed_queries([QUERY])
    [kept] = (tmp_path / FOLDER).glob("*.onnx")
    whole = kept.read_bytes()
    body = b"not an onnx graph" * 100
    kept.write_bytes(MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    _without_optimised_models(tmp_path)
    vector = LocalMiniLMProvider(threads=1, state_dir=tmp_path).embed_queries([QUERY])[0]
    assert np.array_equal(vector, LocalMiniLMProvider(threads=1).embed_queries([QUERY])[0])
    assert kept.read_bytes() == whole
