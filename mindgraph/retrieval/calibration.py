"""The vector side's noise level, measured for the model on this vault (``calibrated`` fusion).

Cosines mean different things for different models: all-MiniLM-L6-v2 gives unrelated pages
0.2–0.4, multilingual-e5-small 0.80–0.85. The noise level is what a typical query's
``NOISE_RANK``-th nearest page scores — a page that close is no evidence of anything, since
every query has that many pages that near. It is measured on the vault itself, without labels:
the pseudo-queries are the titles (plus first heading) of up to ``SAMPLE`` pages spread over
the vault, each searched like a real query. The answer is kept in a small JSON file keyed by
the model and the number of vectors, so a fresh process does not pay for it again.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Mapping

from ..fsutil import atomic_write_json
from ..page.model import Page
from .vector import VectorRetriever

SAMPLE = 64
NOISE_RANK = 30
MIN_PAGES = 2 * NOISE_RANK     # a smaller vault has no "30th-nearest" to speak of


def pseudo_queries(pages: Mapping[str, Page], sample: int = SAMPLE) -> list[str]:
    """Title (plus first other heading) of ``sample`` pages spread evenly over the vault."""
    paths = sorted(pages)
    step = max(1, len(paths) // sample)
    out = []
    for path in paths[::step][:sample]:
        page = pages[path]
        heading = next((s.heading for s in page.sections
                        if s.heading and s.heading != page.title), "")
        text = f"{page.title} {heading}".strip()
        if text:
            out.append(text)
    return out


def measure_noise_level(vector: VectorRetriever, pages: Mapping[str, Page]) -> float:
    """Median over the pseudo-queries of the ``NOISE_RANK``-th best page's cosine (0 for a
    vault under ``MIN_PAGES`` pages)."""
    if len(pages) < MIN_PAGES:
        return 0.0
    levels = []
    for query in pseudo_queries(pages):
        hits = vector.search(query, NOISE_RANK)
        if len(hits) >= NOISE_RANK:
            levels.append(hits[NOISE_RANK - 1].score)
    return float(statistics.median(levels)) if levels else 0.0


def noise_level(vector: VectorRetriever, pages: Mapping[str, Page],
                cache_file: Path | None = None) -> float:
    """The noise level, from ``cache_file`` when it was measured for this model and store."""
    key = f"{vector.model_version}|{vector.store.count(vector.model_version)}|{len(pages)}"
    cached = _read(cache_file).get(key) if cache_file else None
    if isinstance(cached, (int, float)):
        return float(cached)
    level = measure_noise_level(vector, pages)
    if cache_file is not None:
        _write(cache_file, {key: level})
    return level


def _read(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write(path: Path, value: dict) -> None:
    """Atomically; a failure only costs measuring again next time."""
    try:
        atomic_write_json(path, value)
    except OSError:
        pass
