"""Chunk vectors of a corpus per model and chunk size, cached in a folder outside the repo
(for bench/bench_dense_ensemble.py).

Each (corpus, model, chunking) is one ``.npz`` in the cache folder: the chunk vectors (unit,
float32), each chunk's page, section id and token count, and what embedding them cost (CPU
seconds of this process, wall seconds). A finished file is never embedded again; the query
vectors of each model are cached beside them (``queries-<model>.npz``).

Chunking: ``default`` is the product's (chunking.py: sections cut at the model's limit, an
eighth overlapping); ``s<N>`` cuts each section into windows of whole sentences of at most N
of the model's tokens (a sentence longer than that is cut at words), the last sentences of a
window, up to N/8 tokens, repeated at the start of the next.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from mindgraph.page.model import Page
from mindgraph.vectors.chunking import Chunker

MODELS = ("minilm", "e5", "use")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n\s*\n")


def provider(model: str, state_dir: Path) -> Any:
    """The product's local provider for ``model`` (int8, as the default runs them)."""
    if model == "minilm":
        from mindgraph.providers.embedding.local import LocalMiniLMProvider
        return LocalMiniLMProvider(state_dir=state_dir)
    if model == "e5":
        from mindgraph.providers.embedding.e5 import LocalE5Provider
        return LocalE5Provider(state_dir=state_dir)
    if model == "use":
        from mindgraph.providers.embedding.use import LocalUSEProvider
        return LocalUSEProvider(state_dir=state_dir)
    raise ValueError(f"unknown model {model!r}; choose from {', '.join(MODELS)}")


class SentenceChunker(Chunker):
    """Windows of whole sentences (``Chunker`` packs units; here a unit is a sentence, cut
    at words only when it alone is over the budget)."""

    def _units(self, body: str, budget: int) -> list[str]:
        sentences = [s for s in _SENTENCE_END.split(body) if s and s.strip()]
        sizes = self.count_tokens(sentences)
        out: list[str] = []
        for sentence, size in zip(sentences, sizes):
            if size <= budget:
                out.append(sentence.strip() + " ")
            else:
                out.extend(super()._units(sentence, budget))
        return out


def chunker(model_provider: Any, chunking: str) -> Chunker:
    if chunking == "default":
        return Chunker(model_provider.count_tokens, model_provider.max_tokens)
    if chunking.startswith("s") and chunking[1:].isdigit():
        size = min(int(chunking[1:]), model_provider.max_tokens)
        return SentenceChunker(model_provider.count_tokens, size)
    raise ValueError(f"unknown chunking {chunking!r}: default or s<N> (e.g. s128)")


def embed_corpus(folder: Path, corpus: str, model: str, chunking: str,
                 pages: Iterable[Page], batch: int = 64, log: Any = print) -> Path:
    """The cache file of ``pages`` embedded by ``model`` (embedded now if missing)."""
    out = folder / f"{corpus}-{model}-{chunking}.npz"
    if out.exists():
        return out
    folder.mkdir(parents=True, exist_ok=True)
    prov = provider(model, folder / "state")
    cut = chunker(prov, chunking)
    chunks = [c for page in pages for c in cut.chunk_page(page)]
    log(f"{out.name}: {len(chunks)} chunks to embed")
    vectors = []
    prov.embed_documents([chunks[0].text])           # load the model before timing
    cpu, wall = time.process_time(), time.perf_counter()
    for start in range(0, len(chunks), batch):
        vectors.append(np.asarray(prov.embed_documents([c.text for c in
                                                         chunks[start:start + batch]]),
                                  dtype=np.float32))
        if start // batch % 20 == 0:
            log(f"  {out.name}: {start + batch}/{len(chunks)} "
                f"({time.perf_counter() - wall:.0f} s)")
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    tmp = out.with_suffix(".tmp.npz")
    np.savez(tmp, vectors=np.concatenate(vectors), pages=np.array([c.page for c in chunks]),
             sections=np.array([c.section_id for c in chunks]),
             tokens=np.array([c.tokens for c in chunks]), cpu_s=cpu, wall_s=wall)
    tmp.rename(out)
    log(f"{out.name}: {len(chunks)} chunks, {1000 * cpu / len(chunks):.1f} CPU ms "
        f"and {1000 * wall / len(chunks):.1f} wall ms a chunk")
    return out


class QueryVectors:
    """Query vectors of one model, cached on disk by text."""

    def __init__(self, folder: Path, model: str):
        self.path = folder / f"queries-{model}.npz"
        self.model = model
        self._provider: Any = None
        self._folder = folder
        self._known: dict[str, np.ndarray] = {}
        self._dirty = False
        self.cpu_s = 0.0
        self.embedded = 0
        if self.path.exists():
            data = np.load(self.path)
            self._known = dict(zip(data["texts"].tolist(), data["vectors"]))

    def get(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            if self._provider is None:
                self._provider = provider(self.model, self._folder / "state")
            started = time.process_time()
            found = np.asarray(self._provider.embed_queries(missing), dtype=np.float32)
            self.cpu_s += time.process_time() - started
            self.embedded += len(missing)
            self._known.update(zip(missing, found))
            self._dirty = True
        return np.stack([self._known[t] for t in texts])

    def save(self) -> None:
        if self._dirty:
            texts = list(self._known)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp.npz")
            np.savez(tmp, texts=np.array(texts), vectors=np.stack([self._known[t]
                                                                     for t in texts]))
            tmp.rename(self.path)
            self._dirty = False
