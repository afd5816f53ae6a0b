"""`mindgraph bench`: run a query file against retrieval methods and score them.

Methods are switches of one hybrid retriever (see ``METHODS``), so every method sees the same
indexes and the comparison is fair. Metrics per method, per language, per intent and per
question style (a question line's ``style``, when any names one): hit@1, recall@5, MRR@10,
nDCG@10, and latency median and p95 (warm, in-process, one query at a time, answer and
query-vector caches cleared: every query is new to every method).
Two inputs: our JSONL question format over a wiki, and the BEIR layout (corpus.jsonl,
queries.jsonl, qrels/test.tsv), whose documents become pages.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..retrieval.datasets import Question
from ..retrieval.hybrid import HybridRetriever, SearchOptions
from ..retrieval.metrics import hit_at, mean, mrr_at, ndcg_at, recall_at

METHODS: dict[str, SearchOptions] = {
    "keyword": SearchOptions(use_vector=False, graph_boost=False, expansion=False),
    "vector": SearchOptions(use_keyword=False, graph_boost=False, expansion=False),
    "hybrid": SearchOptions(),
    "rrf": SearchOptions(fusion="rrf"),
    "hybrid-nograph": SearchOptions(graph_boost=False),
    "hybrid-noexpand": SearchOptions(expansion=False),
    "hybrid-noreserve": SearchOptions(reserve=False),
    "hybrid-norerank": SearchOptions(rerank=False),
    # a note app's own search (an adapter's search_by_query), alone and left out of hybrid
    "native": SearchOptions(use_keyword=False, use_vector=False, graph_boost=False,
                            expansion=False),
    "hybrid-nonative": SearchOptions(use_native=False),
}
NATIVE_METHODS = ("native",)     # need an adapter with search_by_query
DEPTH = 10


@dataclass(frozen=True)
class Scores:
    """Mean metrics over a group of questions, plus latency."""

    n: int
    hit1: float
    recall5: float
    mrr10: float
    ndcg10: float
    latency_median_ms: float = 0.0
    latency_p95_ms: float = 0.0

    def to_dict(self) -> dict[str, float]:
        """JSON-ready form."""
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}


@dataclass
class MethodReport:
    """One method: overall scores and the same per language, per intent and per style."""

    method: str
    overall: Scores
    by_lang: dict[str, Scores] = field(default_factory=dict)
    by_intent: dict[str, Scores] = field(default_factory=dict)
    by_style: dict[str, Scores] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"method": self.method, "overall": self.overall.to_dict(),
                "by_lang": {k: v.to_dict() for k, v in self.by_lang.items()},
                "by_intent": {k: v.to_dict() for k, v in self.by_intent.items()},
                "by_style": {k: v.to_dict() for k, v in self.by_style.items()},
                "misses": self.misses}


def run_methods(retriever: HybridRetriever, questions: Sequence[Question],
                methods: Iterable[str],
                graded: Mapping[str, Mapping[str, float]] | None = None,
                progress: Callable[[str, int], None] | None = None) -> list[MethodReport]:
    """Score every method on every question (``graded``: BEIR relevance grades by id)."""
    reports = []
    for method in methods:
        options = METHODS[method]
        rows: list[tuple[Question, tuple[float, float, float, float], float]] = []
        for i, question in enumerate(questions):
            if retriever.vector is not None:
                # every method pays for its own query embedding: a vector cached by the
                # method before would make the later ones look faster than they are
                retriever.vector.forget_queries()
            started = time.perf_counter()
            response = retriever.search(question.query,
                                        SearchOptions(**{**options.__dict__, "top_k": DEPTH}),
                                        use_cache=False)
            latency = (time.perf_counter() - started) * 1e3
            ranked = [r.page for r in response.results]
            relevance = graded[question.id] if graded else question.relevant
            rows.append((question, (hit_at(ranked, question.relevant, 1),
                                    recall_at(ranked, question.relevant, 5),
                                    mrr_at(ranked, question.relevant, DEPTH),
                                    ndcg_at(ranked, relevance, DEPTH)), latency))
            if progress:
                progress(method, i + 1)
        report = MethodReport(method, _scores(rows))
        for group, target in ((_lang, report.by_lang), (_intent, report.by_intent),
                              (_style, report.by_style)):
            groups: dict[str, list] = {}
            for row in rows:
                groups.setdefault(group(row[0]), []).append(row)
            if target is not report.by_style or set(groups) != {"?"}:
                target.update({k: _scores(v) for k, v in sorted(groups.items())})
        report.misses = [{"id": q.id, "query": q.query[:120], "relevant": list(q.relevant)[:3]}
                         for q, m, _ in rows if m[2] == 0][:20]
        reports.append(report)
    return reports


def _lang(question: Question) -> str:
    return question.lang or "?"


def _intent(question: Question) -> str:
    return question.intent or "?"


def _style(question: Question) -> str:
    """A question line's ``style`` (keyword, howto, symptom, paraphrase, ...), "?" if none."""
    return str(question.extra.get("style") or "?")


def _scores(rows: list) -> Scores:
    latencies = sorted(r[2] for r in rows)
    p95 = latencies[min(len(latencies) - 1, int(round(0.95 * (len(latencies) - 1))))] \
        if latencies else 0.0
    return Scores(len(rows), mean(r[1][0] for r in rows), mean(r[1][1] for r in rows),
                  mean(r[1][2] for r in rows), mean(r[1][3] for r in rows),
                  statistics.median(latencies) if latencies else 0.0, p95)


def format_table(reports: list[MethodReport]) -> str:
    """A text table: one line per method, then per-language, per-intent and per-style
    lines."""
    lines = [f"{'method':18} {'n':>4} {'hit@1':>6} {'R@5':>6} {'MRR@10':>7} {'nDCG@10':>8} "
             f"{'p50 ms':>7} {'p95 ms':>7}"]

    def row(label: str, s: Scores) -> str:
        return (f"{label:18} {s.n:>4} {s.hit1:6.3f} {s.recall5:6.3f} {s.mrr10:7.3f} "
                f"{s.ndcg10:8.3f} {s.latency_median_ms:7.1f} {s.latency_p95_ms:7.1f}")

    for report in reports:
        lines.append(row(report.method, report.overall))
    for group in ("by_lang", "by_intent", "by_style"):
        if any(len(getattr(r, group)) > 1 for r in reports):
            lines.append(f"\n{group.replace('by_', 'per ')}:")
            for report in reports:
                for key, scores in getattr(report, group).items():
                    lines.append(row(f"  {report.method}:{key}", scores))
    return "\n".join(lines)
