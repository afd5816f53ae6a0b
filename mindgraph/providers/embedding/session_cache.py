"""The model as onnxruntime optimised it, kept in the workspace so a fresh process loads it
without optimising again.

Creating a session from the rewritten graph (graph_cache.py) runs onnxruntime's graph
optimiser every time: on this machine 110–160 ms of CPU, most of a fresh hybrid query's model
start-up. The first session of a workspace therefore also writes the optimised model
(``optimized_model_filepath``), its weights in a file of their own, into
``<state>/models/<model>-<key>.optimized/``; later processes load that folder with every
optimisation off, and onnxruntime maps the weights file into memory instead of parsing 58 MB
of protobuf (18 ms of CPU). The vectors are the same bits (tests/embedding/test_session_cache.py).

The key covers what the optimised model depends on: the rewritten graph's key, the
onnxruntime version, the optimiser's settings and this CPU's feature flags (onnxruntime may
choose kernels and layouts for the CPU it optimises on). Another key is another folder; the
old ones of that model are removed.

The folder is written under a temporary name and renamed into place when whole (with a
manifest of its files' sizes and CRC-32s, written last), so a crash leaves no half folder; a
folder whose files do not have the sizes and checksums of its manifest is not loaded (a
shortened weights file, mapped, would crash the process; weights written over with other bytes
of the same size would give wrong vectors without a word), and one onnxruntime refuses is
removed and made again. The checksum catches damage, not tampering (~10 ms for the 58 MB of
weights; the state folder is as trusted as the pickles beside it). A state folder that cannot
be written only costs the optimisation, every time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
import tempfile
import zlib
from pathlib import Path
from typing import Any, Callable

from ...fsutil import atomic_write_bytes
from .graph_cache import FOLDER, cached_graph
from .onnx_encoder import OPTIMIZER_SETTINGS, create_session

SUFFIX = ".optimized"
MODEL_FILE = "model.onnx"
WEIGHTS_FILE = "weights.data"
MANIFEST_FILE = "manifest.json"


@functools.lru_cache(maxsize=1)
def cpu_signature() -> str:
    """The machine and its CPU feature flags (Linux: /proc/cpuinfo's first "flags" line)."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            flags = next((line for line in cpuinfo if line.startswith(("flags", "Features"))),
                         "")
    except OSError:
        flags = platform.processor()
    return f"{platform.machine()} {' '.join(sorted(flags.split(':')[-1].split()))}"


def session_key(graph_key: str) -> str:
    """The SHA-256 naming an optimised model: the graph's key, the runtime and the CPU."""
    import onnxruntime as ort

    return hashlib.sha256(repr((graph_key, ort.__version__, OPTIMIZER_SETTINGS,
                                cpu_signature())).encode()).hexdigest()


def cached_session(state_dir: Path | None, model: str, key: str,
                   rewrite: Callable[[], bytes]) -> Any:
    """A session of the optimised model kept for ``key`` under ``state_dir``; else one made
    from the rewritten graph (``graph_cache.cached_graph`` of ``rewrite``), whose optimised
    model is then kept."""
    if state_dir is None:
        return create_session(rewrite())
    folder = state_dir / FOLDER
    kept = folder / f"{model}-{session_key(key)[:32]}{SUFFIX}"
    if _whole(kept):
        try:
            return create_session(str(kept / MODEL_FILE), optimized=True)
        except Exception:   # noqa: BLE001 - any refusal: made again from the rewritten graph
            shutil.rmtree(kept, ignore_errors=True)
    else:                   # absent, or its files cut or missing: made again
        shutil.rmtree(kept, ignore_errors=True)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{kept.name}-", dir=folder))
    except OSError:         # a read-only state folder: optimised again next time
        return cached_graph(state_dir, model, key, rewrite, create_session)
    try:
        session = cached_graph(state_dir, model, key, rewrite,
                               lambda graph: _create_and_save(graph, work))
        if _seal(work):
            for old in folder.glob(f"{model}-*{SUFFIX}"):
                if old != kept:     # another process's folder of this key stays: same model
                    shutil.rmtree(old, ignore_errors=True)
            try:
                os.rename(work, kept)
            except OSError:
                pass        # another process put its folder there first: same model
        return session
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _create_and_save(graph: bytes, work: Path) -> Any:
    """A session of ``graph`` that also writes its optimised model into ``work``; if the
    writing fails (a full disk), a session all the same (a graph the runtime refuses raises)."""
    try:
        return create_session(graph, save_optimized=work / MODEL_FILE,
                              weights_file=WEIGHTS_FILE)
    except Exception:   # noqa: BLE001 - retried without saving; a bad graph fails again
        for leftover in work.iterdir():
            leftover.unlink(missing_ok=True)
        return create_session(graph)


def _seal(work: Path) -> bool:
    """Write the manifest of the files in ``work`` (after syncing them); False if there is
    nothing whole to keep."""
    try:
        files = {}
        for name in (MODEL_FILE, WEIGHTS_FILE):
            with open(work / name, "rb") as handle:
                os.fsync(handle.fileno())
                files[name] = [os.fstat(handle.fileno()).st_size, _crc32(handle)]
        atomic_write_bytes(work / MANIFEST_FILE, json.dumps(files).encode())
        return True
    except OSError:
        return False


def _whole(kept: Path) -> bool:
    """Whether ``kept`` holds its manifest and files of the sizes and checksums it lists (a
    manifest of sizes only, an older one, is not whole)."""
    try:
        files = json.loads((kept / MANIFEST_FILE).read_bytes())
        if set(files) != {MODEL_FILE, WEIGHTS_FILE}:
            return False
        for name, (size, crc) in files.items():
            with open(kept / name, "rb") as handle:
                if os.fstat(handle.fileno()).st_size != size or _crc32(handle) != crc:
                    return False
        return True
    except (OSError, ValueError, AttributeError, TypeError):
        return False


def _crc32(handle: Any) -> int:
    """CRC-32 of an open file, read from its start a megabyte at a time."""
    handle.seek(0)
    crc, chunk = 0, bytearray(1 << 20)
    view = memoryview(chunk)
    while read := handle.readinto(chunk):
        crc = zlib.crc32(view[:read], crc)
    return crc
