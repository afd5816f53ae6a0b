"""The model as onnxruntime optimised it is kept under the state folder; later processes load
it with the optimiser off, its weights mapped, and embed the same bits (issue 20: start-up)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mindgraph.providers.embedding.graph_cache import FOLDER
from mindgraph.providers.embedding.local import LocalMiniLMProvider
from mindgraph.providers.embedding.session_cache import MANIFEST_FILE, SUFFIX, WEIGHTS_FILE

# a new process embeds the texts in argv[2] with the state folder argv[1]; it reports whether
# onnx was imported and whether the kept weights are mapped into its memory (/proc/self/maps)
PROBE = """
import json, os, sys
from pathlib import Path
from mindgraph.providers.embedding.local import LocalMiniLMProvider
texts = json.loads(Path(sys.argv[2]).read_text())
provider = LocalMiniLMProvider(threads=1, state_dir=Path(sys.argv[1]))   # its session lives on
vectors = provider.embed_documents(texts)
maps = Path("/proc/self/maps").read_text() if Path("/proc/self/maps").exists() else ""
print(json.dumps({"onnx": "onnx" in sys.modules, "vectors": vectors.tolist(),
                  "mapped": "weights.data" in maps}))
"""


@pytest.fixture(scope="module")
def texts(corpora: Path, tmp_path_factory) -> Path:
    """60 real paragraphs of the Obsidian Help vault (en, ja, zh) in a JSON file."""
    found = []
    for lang in ("en", "ja", "zh"):
        for page in sorted((corpora / "obsidian-help" / lang).rglob("*.md"))[:6]:
            found += [p.strip() for p in page.read_text(encoding="utf-8").split("\n\n")
                      if len(p.strip()) > 80][:4]
    path = tmp_path_factory.mktemp("texts") / "texts.json"
    path.write_text(json.dumps(found[:60]))
    return path


@pytest.fixture(scope="module")
def expected(texts: Path) -> np.ndarray:
    """The vectors of a provider that keeps nothing (optimises in memory, as before)."""
    return LocalMiniLMProvider(threads=1).embed_documents(json.loads(texts.read_text()))


def _fresh_process(state_dir: Path, texts: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, str(state_dir), str(texts)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _kept(state_dir: Path) -> list[Path]:
    return sorted((state_dir / FOLDER).glob(f"*{SUFFIX}"))


def _kept_weights(state_dir: Path) -> Path:
    """The weights file of the one optimised model a warm-up query kept."""
    LocalMiniLMProvider(threads=1, state_dir=state_dir).embed_queries(["warm"])
    [kept] = _kept(state_dir)
    return kept / WEIGHTS_FILE


def test_a_later_process_loads_the_optimised_model_and_embeds_the_same_bits(tmp_path, texts,
                                                                            expected):
    first = _fresh_process(tmp_path, texts)       # rewrites, optimises, keeps both
    [kept] = _kept(tmp_path)
    assert first["onnx"] and (kept / WEIGHTS_FILE).stat().st_size > 10_000_000
    assert np.array_equal(np.float32(first["vectors"]), expected)
    # the rewritten graph is not even read now: the kept optimised model is all it takes
    for graph in (tmp_path / FOLDER).glob("*.onnx"):
        graph.unlink()
    second = _fresh_process(tmp_path, texts)
    assert not second["onnx"] and second["mapped"]
    assert np.array_equal(np.float32(second["vectors"]), expected)


def test_a_shortened_weights_file_is_not_loaded_but_made_again(tmp_path, texts, expected):
    """Mapped, a cut weights file would crash the process: its size is checked first."""
    weights = _kept_weights(tmp_path)
    whole = weights.stat().st_size
    with open(weights, "r+b") as handle:
        handle.truncate(whole // 2)
    again = _fresh_process(tmp_path, texts)
    assert np.array_equal(np.float32(again["vectors"]), expected)
    [kept] = _kept(tmp_path)
    assert (kept / WEIGHTS_FILE).stat().st_size == whole


def test_weights_written_over_with_other_bytes_of_the_same_size_are_made_again(
        tmp_path, texts, expected):
    """The runtime loads such weights without a word and embeds nonsense: the manifest's
    checksum refuses them first."""
    weights = _kept_weights(tmp_path)
    size = weights.stat().st_size
    with open(weights, "r+b") as handle:
        handle.seek(size // 3)
        handle.write(np.random.default_rng(0).bytes(size // 3))
    again = _fresh_process(tmp_path, texts)
    assert np.array_equal(np.float32(again["vectors"]), expected)
    assert weights.stat().st_size == size


def test_a_kept_model_the_runtime_refuses_is_made_again(tmp_path, texts, expected):
    LocalMiniLMProvider(threads=1, state_dir=tmp_path).embed_queries(["warm"])
    [kept] = _kept(tmp_path)
    model = kept / "model.onnx"
    size = model.stat().st_size
    model.write_bytes(b"\0" * size)         # the size of its manifest, yet no model
    again = _fresh_process(tmp_path, texts)
    assert np.array_equal(np.float32(again["vectors"]), expected)
    assert _kept(tmp_path) == [kept] and model.read_bytes() != b"\0" * size


def test_a_model_kept_for_another_runtime_or_cpu_is_replaced(tmp_path, texts, expected):
    stale = tmp_path / FOLDER / f"all-MiniLM-L6-v2-w8a8-{'0' * 32}{SUFFIX}"
    stale.mkdir(parents=True)
    (stale / MANIFEST_FILE).write_text("{}")
    assert np.array_equal(np.float32(_fresh_process(tmp_path, texts)["vectors"]), expected)
    kept = _kept(tmp_path)
    assert len(kept) == 1 and kept[0] != stale
    assert not list((tmp_path / FOLDER).glob(".*"))     # no working folder left behind
