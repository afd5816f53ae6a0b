"""What the vector model's cosines mean on this vault, measured on the vault itself.

Cosines mean different things for different models, languages and queries: all-MiniLM-L6-v2
gives unrelated pages 0.1–0.4, multilingual-e5-small 0.75–0.85, and an English question is
less similar to every Japanese page than a Japanese one. So the zero point is measured for
each query: its **background** is the median cosine of the ``SAMPLE`` pages spread over the
vault (one more vector search, restricted to those pages). ``calibrated`` normalisation
measures the vector side from there to the query's top, so a model whose cosines sit in a
narrow band is not flattened by dividing by the top score.

What a match looks like is measured once per model and vault, without labels, from
pseudo-queries (the titles, plus first heading, of ``SAMPLE`` pages), each searched like a real
query: the typical **gap** between a query's best page and its background. A page only the
vector side found is evidence only when it stands at least ``NOISE_SHARE`` of that gap above
its query's background: an invented word on one page found that page by keyword, then nine
pages by meaning alone, all about as close to the query as the median page. The gap is kept
in a small JSON file keyed by the model and the number of vectors and pages, so a fresh
process does not pay for it again. A vault under ``MIN_PAGES`` pages is not calibrated (floor
0, no noise filter): too few pages to tell a typical one for ranking; from
``SUMMARY_MIN_PAGES`` the levels are measured from every page for the search's summary alone
(a weak best match is called weak, nothing is dropped or ranked by them).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..fsutil import atomic_write_json
from ..page.model import Page
from .vector import VectorRetriever

SAMPLE = 64
NOISE_SHARE = 0.5
MIN_PAGES = 60
SUMMARY_MIN_PAGES = 10
"""A vault this small is calibrated for the search's summary alone (hybrid.py ``_weak``)."""


@dataclass(frozen=True)
class Calibration:
    """A typical query's background and best cosine on this vault (0, 0: not calibrated)."""

    background: float = 0.0
    match: float = 0.0

    @property
    def gap(self) -> float:
        """How far a typical query's best page stands above its background."""
        return self.match - self.background


def background(vector: VectorRetriever, query: str, sample: list[str]) -> float:
    """The median cosine of the ``sample`` pages to ``query``: its zero point. Pages scoring
    exactly 0 are not counted: they have no vectors of the query's model (one model per
    language: a Japanese page has none of the English model's)."""
    scores = list(vector.page_scores(query, sample).values())
    scores = [s for s in scores if s != 0.0] or scores
    return float(statistics.median(scores)) if scores else 0.0


def spread(paths: list[str], n: int) -> list[str]:
    """``n`` of ``paths`` (sorted) taken at even steps: the same sample every time."""
    paths = sorted(paths)
    step = max(1, len(paths) // n)
    return paths[::step][:n]


def pseudo_queries(pages: Mapping[str, Page], sample: int = SAMPLE) -> list[tuple[str, str]]:
    """(page, its title plus first other heading) for ``sample`` pages spread over the vault."""
    out = []
    for path in spread(list(pages), sample):
        page = pages[path]
        heading = next((s.heading for s in page.sections
                        if s.heading and s.heading != page.title), "")
        text = f"{page.title} {heading}".strip()
        if text:
            out.append((path, text))
    return out


def measure(vector: VectorRetriever, pages: Mapping[str, Page],
            served: str | None = None, min_pages: int = MIN_PAGES) -> Calibration:
    """Both levels, measured now (2 × ``SAMPLE`` vector searches); with ``served``, from the
    pseudo-queries that model embeds (one model per language: each has its own levels)."""
    if len(pages) < min_pages:
        return Calibration()
    others = spread(list(pages), SAMPLE)
    backgrounds, matches = [], []
    for path, query in pseudo_queries(pages):
        if served is not None and vector.query_provider(query).model_version != served:
            continue
        hits = vector.search(query, 1)
        if hits:
            matches.append(hits[0].score)
            backgrounds.append(background(vector, query, [p for p in others if p != path]))
    return Calibration(float(statistics.median(backgrounds)) if backgrounds else 0.0,
                       float(statistics.median(matches)) if matches else 0.0)


def calibration(vector: VectorRetriever, pages: Mapping[str, Page],
                cache_file: Path | None = None, served: str | None = None,
                min_pages: int = MIN_PAGES) -> Calibration:
    """The levels, from ``cache_file`` when they were measured for this model and store
    (``served``: the model, of one per language, whose queries they are for; ``min_pages``:
    the smallest vault measured, ``SUMMARY_MIN_PAGES`` for the summary's levels)."""
    routed = served is not None and served != vector.model_version
    stem = f"{vector.model_version}|{vector.store.count(vector.model_version)}|{len(pages)}"
    key = f"{stem}|{served}" if routed else stem
    if min_pages != MIN_PAGES:
        key = f"{key}|from {min_pages}"
    cached = _read(cache_file).get(key) if cache_file else None
    if isinstance(cached, dict):
        try:
            return Calibration(float(cached["background"]), float(cached["match"]))
        except (KeyError, TypeError, ValueError):
            pass
    found = measure(vector, pages, served if routed else None, min_pages)
    if cache_file is not None:
        # the levels of this store's other models (one per language) stay; older ones go
        kept = {k: v for k, v in _read(cache_file).items() if k.startswith(stem + "|")}
        _write(cache_file, {**kept, key: {"background": found.background,
                                          "match": found.match}})
    return found


def drop_vector_noise(candidates: dict[str, Any], noise: float) -> None:
    """Remove the candidates only the vector side found with a cosine under ``noise`` (the
    query's background plus ``NOISE_SHARE`` of the gap) — unless that would remove them all."""
    weak = [p for p, c in candidates.items() if "keyword" not in c.sources
            and c.sources.get("vector", {}).get("score", 1.0) < noise]
    if len(weak) < len(candidates):
        for path in weak:
            del candidates[path]


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
