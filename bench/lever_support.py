"""What every lever module of bench/bench_retrieval_levers.py shares: a retriever rebuilt
around the base's indexes with one thing changed, and the languages the ``cjk`` levers touch."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.keyword import KeywordIndex  # noqa: E402

CJK = ("ja", "zh")


def rebuilt(base: HybridRetriever, keyword: KeywordIndex | None = None,
            cls: type[HybridRetriever] = HybridRetriever, **attrs: Any) -> HybridRetriever:
    """A retriever over ``base``'s pages, graph and vectors with ``keyword`` (or base's)."""
    out = cls(base.pages, keyword or base.keyword, base.graph, base.vector, base.settings,
              expander=base.expander, vector_error=base.vector_error,
              calibration_file=base._calibration_file)
    for key, value in attrs.items():
        setattr(out, key, value)
    return out


def settings_lever(**changes: Any) -> Callable[[HybridRetriever], HybridRetriever]:
    """Other ``retrieval`` settings over the same indexes."""
    def make(r: HybridRetriever) -> HybridRetriever:
        out = rebuilt(r)
        out.settings = replace(r.settings, **changes)
        return out
    return make
