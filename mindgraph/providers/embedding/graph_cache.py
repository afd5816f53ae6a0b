"""Rewritten model graphs kept in the workspace, so a fresh process does not rewrite again.

Rewriting the packaged graph (minilm_graph.py, e5_graph.py) needs the ``onnx`` package,
whose import alone (ml_dtypes registering its types with NumPy) cost more CPU than the rest
of a fresh `mindgraph search --hybrid`, and the rewrite itself as much again. The rewritten
graph depends only on the pinned model file, the rewriting code, and two switches (int8
products, int8 or uint8 weights for this CPU), so it is written once under the state folder
(``<state>/models/<model>-<key>.onnx``) and read back by later processes, which then never
import ``onnx``.

The key is a SHA-256 of everything the graph depends on: the pinned SHA-256 of the model
file (the file was checked against it when the graph was made), the source of the rewriting
modules and the switches; another key is another file (the old ones of that model are
removed). Each file starts with a header line holding the SHA-256 of the graph after it, so
a truncated or altered file is not run: it is rewritten from the package's file (and so is
one whose header matches yet the runtime refuses). A state folder that cannot be written
only costs the rewrite, every time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Iterable, TypeVar

from ...fsutil import atomic_write_bytes, read_bytes

MAGIC = b"mindgraph-graph "
FOLDER = "models"
T = TypeVar("T")


def _as_is(graph: bytes) -> bytes:
    return graph


def graph_key(pin_sha256: str, code: Iterable[Path], *switches: object) -> str:
    """The SHA-256 naming a rewritten graph: model pin, rewriting code and switches."""
    digest = hashlib.sha256(pin_sha256.encode())
    for path in code:
        digest.update(read_bytes(path))
    digest.update(repr(switches).encode())
    return digest.hexdigest()


def cached_graph(state_dir: Path | None, model: str, key: str,
                 rewrite: Callable[[], bytes],
                 load: Callable[[bytes], T] = _as_is) -> T:  # type: ignore[assignment]
    """``load`` of the graph saved for ``key`` under ``state_dir``, else of ``rewrite()``
    (then saved). A saved graph ``load`` refuses (whole by its header, yet not a graph the
    runtime reads: written over with a header to match) is removed and made again, so one
    bad file does not disable the model for every later process."""
    if state_dir is None:
        return load(rewrite())
    folder = state_dir / FOLDER
    path = folder / f"{model}-{key[:32]}.onnx"
    graph = _read(path)
    if graph is not None:
        try:
            return load(graph)
        except Exception:   # noqa: BLE001 - any refusal: made again from the package's file
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
    graph = rewrite()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob(f"{model}-*.onnx"):
            old.unlink(missing_ok=True)
        digest = hashlib.sha256(graph).hexdigest().encode()
        atomic_write_bytes(path, MAGIC + digest + b"\n" + graph)
    except OSError:
        pass        # a read-only state folder: rewritten again next time
    return load(graph)


def _read(path: Path) -> bytes | None:
    """The graph in ``path`` if it is whole (its SHA-256 matches its header), else None."""
    try:
        data = read_bytes(path)
    except OSError:         # absent, or not a regular file (UnreadableFile): made again
        return None
    line, _, graph = data.partition(b"\n")
    if line[len(MAGIC):] != hashlib.sha256(graph).hexdigest().encode() or \
            not line.startswith(MAGIC):
        return None
    return graph
