"""Coverage of a codebase by the wiki: which units it knows, and the CI gate over that.

A unit is covered when the wiki refers to it at least ``min_mentions`` times (see mentions.py),
or, with ``--semantic``, when its docstrings are close to a wiki section (see semantic.py).
``compare_to_baseline`` turns a saved report into a gate: coverage must not drop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import ConfigError
from ..fsutil import read_text
from ..page.model import Page
from .mentions import Mention, MentionIndex
from .units import Unit


@dataclass(frozen=True)
class UnitCoverage:
    """One unit: covered or not, how often mentioned, and by which pages."""

    unit: Unit
    mentions: int
    pages: tuple[Mention, ...]
    symbols_mentioned: tuple[str, ...] = ()
    semantic: tuple[tuple[str, str, float], ...] = ()   # (page, section id, similarity)
    covered: bool = False
    semantic_only: bool = False      # covered by semantic links, not by enough mentions

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data: dict[str, Any] = {
            "unit": self.unit.id, "kind": self.unit.kind, "covered": self.covered,
            "mentions": self.mentions,
            "pages": [{"page": m.page, "count": m.count, "forms": list(m.forms)}
                      for m in self.pages],
        }
        if self.unit.symbols:
            data["symbols"] = [{"name": s.name, "kind": s.kind, "line": s.line,
                                "mentioned": s.name in self.symbols_mentioned}
                               for s in self.unit.symbols]
        if self.semantic:
            data["semantic"] = [{"page": p, "section": s, "similarity": round(v, 4)}
                                for p, s, v in self.semantic]
            data["semantic_only"] = self.semantic_only
        return data


@dataclass(frozen=True)
class CoverageReport:
    """Totals and per-unit detail."""

    codebase: str
    level: str
    min_mentions: int
    units: tuple[UnitCoverage, ...] = field(default_factory=tuple)
    semantic_model: str = ""                  # model_version of the semantic links, "" if off
    semantic_threshold: float | None = None
    notes: tuple[str, ...] = ()               # warnings worth showing (stale vectors, ...)
    # each model's threshold when the embedding routes languages to several models
    semantic_thresholds: dict[str, float] = field(default_factory=dict)

    @property
    def covered(self) -> int:
        """Number of covered units."""
        return sum(1 for u in self.units if u.covered)

    @property
    def covered_semantic_only(self) -> int:
        """Units covered only because of semantic links."""
        return sum(1 for u in self.units if u.semantic_only)

    @property
    def percent(self) -> float:
        """Covered units as a percentage of all units (100 when there are none)."""
        return 100.0 * self.covered / len(self.units) if self.units else 100.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (also the baseline file format)."""
        return {"codebase": self.codebase, "level": self.level,
                "min_mentions": self.min_mentions, "total": len(self.units),
                "covered": self.covered, "uncovered": len(self.units) - self.covered,
                "percent": round(self.percent, 2),
                **({"semantic": {"model_version": self.semantic_model,
                                 "threshold": self.semantic_threshold,
                                 **({"thresholds": self.semantic_thresholds}
                                    if self.semantic_thresholds else {}),
                                 "covered_semantic_only": self.covered_semantic_only}}
                   if self.semantic_model else {}),
                **({"notes": list(self.notes)} if self.notes else {}),
                "units": [u.to_dict() for u in self.units]}


def measure_coverage(units: list[Unit], pages: Iterable[Page], *, codebase: str = "",
                     level: str = "module", min_mentions: int = 1,
                     semantic: dict[str, list[tuple[str, str, float]]] | None = None,
                     semantic_model: str = "", semantic_threshold: float | None = None,
                     semantic_thresholds: dict[str, float] | None = None,
                     notes: tuple[str, ...] = ()) -> CoverageReport:
    """Count every unit's mentions across the pages; ``semantic`` adds vector matches
    (unit id → (page, section id, similarity)), measured with ``semantic_model``."""
    index = MentionIndex(units)
    by_unit: dict[str, list[Mention]] = {u.id: [] for u in units}
    # indexed_body: the offline summary callout repeats the body; counted, each mention was two
    for unit_id, found in index.count_pages((p.path, p.indexed_body) for p in pages).items():
        by_unit[unit_id].extend(found)
    results = []
    semantic = semantic or {}
    for unit in units:
        mentions = sorted(by_unit[unit.id], key=lambda m: (-m.count, m.page))
        total = sum(m.count for m in mentions)
        named = {form for m in mentions for form in m.forms}
        symbols = tuple(s.name for s in unit.symbols if s.name in named)
        matches = tuple(semantic.get(unit.id, ()))
        by_mentions = total >= min_mentions
        results.append(UnitCoverage(unit, total, tuple(mentions), symbols, matches,
                                    by_mentions or bool(matches),
                                    bool(matches) and not by_mentions))
    return CoverageReport(codebase, level, min_mentions, tuple(results), semantic_model,
                          semantic_threshold, notes, dict(semantic_thresholds or {}))


def load_baseline(path: Path) -> dict[str, Any]:
    """Read a report saved with --json or --save."""
    try:
        data = json.loads(read_text(path))
    except FileNotFoundError as exc:
        raise ConfigError(f"Baseline {path} does not exist. Save one first with "
                          f"`mindgraph coverage CODEBASE --save {path}`.") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Baseline {path} is not a coverage report (invalid JSON: {exc}). "
                          f"Re-create it with --save.") from exc
    if not isinstance(data, dict) or "percent" not in data or "units" not in data:
        raise ConfigError(f"Baseline {path} is not a coverage report (no 'percent'/'units'). "
                          f"Re-create it with --save.")
    return data


def compare_to_baseline(report: CoverageReport, baseline: dict[str, Any]) -> dict[str, Any]:
    """What got worse since the baseline: the percentage and units no longer covered."""
    before = {u["unit"] for u in baseline["units"] if u.get("covered")}
    now = {u.unit.id for u in report.units if u.covered}
    lost = sorted(before - now)
    dropped = report.percent + 1e-9 < float(baseline["percent"])
    comparison = {"baseline_percent": float(baseline["percent"]),
                  "percent": round(report.percent, 2), "dropped": dropped,
                  "no_longer_covered": lost, "newly_covered": sorted(now - before)}
    was = baseline.get("semantic") or {}
    if (was.get("model_version", ""), was.get("threshold"), was.get("thresholds") or {}) != (
            report.semantic_model, report.semantic_threshold, report.semantic_thresholds):
        # Not a like-for-like comparison: say so rather than let the numbers speak alone.
        comparison["semantic_changed"] = {
            "baseline": {k: was.get(k) for k in ("model_version", "threshold")} if was
            else None,
            "now": {"model_version": report.semantic_model,
                    "threshold": report.semantic_threshold} if report.semantic_model else None}
    return comparison
