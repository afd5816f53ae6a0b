"""bench/bench_dense_ensemble.py and bench/dense_cache.py: sentence windows keep sentences
whole, a one-model route replays that model's cosines exactly, and the calibrated ensemble
of a model with itself is that model."""

import importlib
import subprocess
import sys

import numpy as np

from mindgraph.page.parse import parse_page
from bench_script_support import BENCH, load_script

load_script("shared_corpora")            # puts bench/ on sys.path, as when a script runs
# imported (not loaded from its file): its dataclasses need the module in sys.modules
ensemble = importlib.import_module("bench_dense_ensemble")
cache = importlib.import_module("dense_cache")


def _words(texts):
    return [len(t.split()) for t in texts]


def test_sentence_windows_hold_whole_sentences_under_the_budget():
    chunker = cache.SentenceChunker(_words, 16, overlap_tokens=0)
    body = " ".join(f"Sentence {i} has exactly six words." for i in range(6))
    page = parse_page(f"# T\n\n{body}\n", "t.md")
    chunks = chunker.chunk_page(page)
    assert len(chunks) == 3                       # title (1 word) + 2 sentences of 6 each
    for chunk in chunks:
        text = chunk.text.split("\n\n", 1)[1]
        assert text.startswith("Sentence") and text.endswith("words.")
        assert chunk.tokens <= 16
    long = parse_page("# T\n\n" + " ".join(["word"] * 40) + ".\n", "l.md")
    assert all(c.tokens <= 16 for c in chunker.chunk_page(long))   # cut at words


def _index(tmp_path, model, vectors, pages, queries):
    known = cache.QueryVectors(tmp_path, model)
    known._known = dict(queries)
    order = sorted(range(len(pages)), key=lambda i: pages[i])
    path = tmp_path / f"{model}.npz"
    np.savez(path, vectors=vectors[order], pages=np.array([pages[i] for i in order]),
             sections=np.array([f"s{i}" for i in order]))
    return ensemble.ModelIndex.load(path, model, known)


def _unit(rng, n, d=8):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_one_model_replays_its_cosines_and_an_ensemble_with_itself_changes_nothing(tmp_path):
    rng = np.random.default_rng(1)
    paths = [f"p{i:02d}.md" for i in range(30)]
    pages = {p: parse_page(f"# Page {p}\n\nText about thing {p}.\n", p) for p in paths}
    chunk_pages = paths + paths[:10]               # ten pages with a second chunk
    vectors = _unit(rng, len(chunk_pages))
    queries = {"which thing": _unit(rng, 1)[0]}
    queries.update({f"Page {p}": _unit(rng, 1)[0] for p in paths})
    index = _index(tmp_path, "minilm", vectors, chunk_pages, queries)
    indexes = {"minilm@default": index}
    one = ensemble.Variant(ensemble.Route(("minilm",)), ensemble.Route(("use",)))
    replay = ensemble.ReplayVector("vault", one, indexes, pages, lambda: {"en": 30})
    cos = vectors @ queries["which thing"]
    expected = {p: max(float(c) for q, c in zip(chunk_pages, cos) if q == p) for p in paths}
    got = replay.page_scores("which thing", paths)
    assert got == {p: np.float32(expected[p]) for p in paths}
    assert replay.search("which thing", 1)[0].path == max(expected, key=expected.get)
    twice = ensemble.Variant(ensemble.Route(("minilm", "minilm@default"), (1, 1)),
                             ensemble.Route(("use",)))
    again = ensemble.ReplayVector("vault", twice, indexes, pages, lambda: {"en": 30})
    mixed = again.page_scores("which thing", paths)
    assert all(abs(mixed[p] - got[p]) < 1e-5 for p in paths)
    # with a different second model the scores move
    other = _index(tmp_path, "e5", _unit(rng, len(chunk_pages)), chunk_pages, queries)
    both = ensemble.Variant(ensemble.Route(("minilm", "e5"), (1, 1)), ensemble.Route(("use",)))
    moved = ensemble.ReplayVector("vault", both, {**indexes, "e5@default": other}, pages,
                                  lambda: {"en": 30}).page_scores("which thing", paths)
    assert any(abs(moved[p] - got[p]) > 1e-3 for p in paths)


def test_a_cache_inside_the_repository_is_refused():
    run = subprocess.run([sys.executable, str(BENCH / "bench_dense_ensemble.py"), "--cache",
                          str(BENCH / "cache")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "inside the repository" in run.stderr
