"""The dense models we ship, alone and as an ensemble, and smaller chunks (issue 13).

    python bench/bench_dense_ensemble.py --cache /tmp/dense22-cache --embed-only
    python bench/bench_dense_ensemble.py --cache /tmp/dense22-cache            # every variant
    python bench/bench_dense_ensemble.py --cache /tmp/dense22-cache --variants base,en_gap_me5

Every variant is the hybrid method of `mindgraph bench` (offline defaults: keyword index,
graph, fusion, noise filter, reservations, penalties all the product's) with only the vector
side replaced by a replay over cached chunk vectors. Each model's vectors of the vault's and
SciFact's chunks are computed once (bench/dense_cache.py; minutes per model, kept in
``--cache``, never in the repo), and each query's best-chunk cosine per page once per model;
the variants then combine them:

- ``base``: today's default, routed: all-MiniLM-L6-v2 for English pages and questions,
  use-multilingual-v3 for Japanese and Chinese (its figures must equal `mindgraph bench`'s);
- an **ensemble** for a route (English: MiniLM with multilingual-e5-small and/or USE;
  Japanese/Chinese: USE with e5): each model's page cosine is measured from the query's zero
  point (the median page of a fixed sample, calibration.py) in units of the model's typical
  gap (its pseudo-queries' best page above their background, measured per corpus as the
  product does), the weighted mean is taken, and put back into the route's first model's
  units (its background + its gap × the mean), so that the rest of the hybrid — max
  normalisation, the noise filter's background and gap — sees a cosine of the kind it knows;
  with one model it is that model's cosine exactly; ``…_max`` variants instead average each
  model's cosine divided by its own top (what fusing the models as separate vector
  retrievers under max normalisation does);
- **chunking** ``s128``: sections cut into windows of whole sentences of at most 128 of the
  model's tokens (an eighth overlapping), a page scored by its best window.

Prints, per variant: dev and held-out hit@1 / R@5 / MRR@10 (en / ja / zh MRR@10) and SciFact
nDCG@10 (the vector side alone in brackets), and the vector side's MRR@10 alone on the two
sets; then each cached corpus's chunks, CPU ms per chunk and store size per model.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_fusion import HELD_OUT, figures, line  # noqa: E402
from dense_cache import QueryVectors, embed_corpus  # noqa: E402
from mindgraph.bench.corpora import beir_retriever, wiki_retriever  # noqa: E402
from mindgraph.bench.runner import run_methods  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.page.model import Page  # noqa: E402
from mindgraph.retrieval.calibration import SAMPLE, pseudo_queries, spread  # noqa: E402
from mindgraph.retrieval.datasets import Question, load_beir, load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.query_language import query_language_in  # noqa: E402
from mindgraph.retrieval.vector import VectorPageHit  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
CJK = ("ja", "zh")

# (corpus, model, chunking) embedded by --embed-only, in this order
JOBS = [("scifact", "minilm", "default"), ("vault", "use", "default"),
        ("vault", "minilm", "default"), ("scifact", "e5", "default"),
        ("vault", "e5", "default"), ("scifact", "use", "default"),
        ("scifact", "minilm", "s128"), ("vault", "minilm", "s128")]


def route_pages(corpus: str, model: str, pages: Mapping[str, Page]) -> list[Page]:
    """The pages a model embeds for the replay: MiniLM only the pages routed to it (not
    Japanese or Chinese ones); the multilingual models every page."""
    chosen = [pages[p] for p in sorted(pages)]
    if corpus == "vault" and model == "minilm":
        chosen = [p for p in chosen if page_language(p) not in CJK]
    return chosen


@dataclass
class ModelIndex:
    """One model's cached chunk vectors over a corpus, grouped by page."""

    model: str
    vectors: np.ndarray
    pages: list[str]          # the page of each chunk, chunks grouped by page
    sections: np.ndarray
    starts: np.ndarray        # first chunk of each page in ``page_order``
    page_order: list[str]
    queries: QueryVectors
    _rows: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path, model: str, queries: QueryVectors) -> "ModelIndex":
        data = np.load(path)
        pages = data["pages"].tolist()
        order = np.argsort(np.array(pages), kind="stable")
        pages = [pages[i] for i in order]
        vectors = data["vectors"][order]
        sections = data["sections"][order]
        starts, page_order = [], []
        for i, page in enumerate(pages):
            if not page_order or page_order[-1] != page:
                page_order.append(page)
                starts.append(i)
        return cls(model, vectors, pages, sections, np.array(starts), page_order, queries)

    def page_rows(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """(best cosine per page of ``page_order``, the chunk index of that best)."""
        found = self._rows.get(query)
        if found is None:
            cos = self.vectors @ self.queries.get([query])[0]
            best = np.maximum.reduceat(cos, self.starts)
            # the best chunk of each page: first index where the cosine equals the page's best
            which = np.empty(len(self.starts), dtype=np.int64)
            ends = np.append(self.starts[1:], len(cos))
            for i, (a, b) in enumerate(zip(self.starts, ends)):
                which[i] = a + int(np.argmax(cos[a:b]))
            found = self._rows[query] = (best, which)
        return found

    def scores(self, query: str) -> dict[str, tuple[float, str]]:
        best, which = self.page_rows(query)
        return {p: (float(s), str(self.sections[w]))
                for p, s, w in zip(self.page_order, best, which)}


@dataclass(frozen=True)
class Route:
    """The models serving one group of languages and how their cosines are combined."""

    models: tuple[str, ...]
    weights: tuple[float, ...] = ()
    combine: str = "gap"           # gap: calibrated mean; max: mean of cosine / own top


@dataclass(frozen=True)
class Variant:
    english: Route
    cjk: Route
    chunking: dict[str, str] = field(default_factory=dict)   # model → chunking


def _variants() -> dict[str, Variant]:
    m, u = Route(("minilm",)), Route(("use",))
    out = {"base": Variant(m, u)}
    for name, models, weights in [("me5", ("minilm", "e5"), (1, 1)),
                                  ("mu", ("minilm", "use"), (1, 1)),
                                  ("me5u", ("minilm", "e5", "use"), (1, 1, 1)),
                                  ("m2e5", ("minilm", "e5"), (2, 1)),
                                  ("m2e5u", ("minilm", "e5", "use"), (2, 1, 1))]:
        out[f"en_gap_{name}"] = Variant(Route(models, weights), u)
        out[f"en_max_{name}"] = Variant(Route(models, weights, "max"), u)
    out["cjk_gap_ue5"] = Variant(m, Route(("use", "e5"), (1, 1)))
    out["cjk_max_ue5"] = Variant(m, Route(("use", "e5"), (1, 1), "max"))
    out["both_gap_me5_ue5"] = Variant(Route(("minilm", "e5"), (1, 1)),
                                      Route(("use", "e5"), (1, 1)))
    out["s128_minilm"] = Variant(m, u, {"minilm": "s128"})
    out["s128_m_def_e5"] = Variant(Route(("minilm", "e5"), (1, 1)), u, {"minilm": "s128"})
    out["gap_m_s128m"] = Variant(Route(("minilm", "minilm@s128"), (1, 1)), u)
    return out


VARIANTS = _variants()


class _Store:
    """What calibration asks of a store: how many vectors it holds."""

    def __init__(self, n: int):
        self.n = n

    def count(self, model_version: str | None = None) -> int:
        return self.n


class _Provider:
    """What the hybrid asks of the query's model: its version (calibration is kept per
    model_version) and its languages (MiniLM: English only; fusion's vector factor)."""

    def __init__(self, version: str, languages: tuple[str, ...] | None):
        self.model_version = version
        self.languages = languages
        self.compressed_cosines = False


class ReplayVector:
    """The vector side of one variant: a VectorRetriever over cached per-model page scores.

    A query is served by its language's route (English and every other language: the
    English route; Japanese and Chinese: the CJK route) over the pages of that route's
    languages, as the routed default searches only its own model's sections."""

    waits_on_io = False

    def __init__(self, corpus: str, variant: Variant, indexes: Mapping[str, ModelIndex],
                 pages: Mapping[str, Page], languages: Any):
        self.variant = variant
        self.indexes = indexes
        self.languages = languages
        self.lang_of = {p: page_language(page) for p, page in pages.items()}
        self.pages_of = {
            "en": sorted(p for p, lang in self.lang_of.items() if lang not in CJK),
            "cjk": sorted(p for p, lang in self.lang_of.items() if lang in CJK)}
        self.corpus_pages = pages
        self.providers = {
            "en": _Provider("replay:en:" + "+".join(variant.english.models),
                            ("en",) if variant.english.models == ("minilm",) else None),
            "cjk": _Provider("replay:cjk:" + "+".join(variant.cjk.models), None)}
        self.provider = self      # route_order is None: one model_version per route
        self.model_version = "replay"
        self.store = _Store(sum(len(i.vectors) for i in indexes.values()))
        self._gaps: dict[tuple[str, str], tuple[float, float]] = {}
        self._scores: dict[str, dict[str, tuple[float, str]]] = {}
        self.pages: Collection[str] | None = None
        self._allowed: dict[str, set[str]] = {}

    route_order = None

    # -- what the hybrid asks ----------------------------------------------------------
    def route(self, query: str) -> str:
        lang = query_language_in(query, self.languages)
        return "cjk" if lang in CJK else "en"

    def query_provider(self, query: str) -> _Provider:
        return self.providers[self.route(query)]

    def is_cached(self, query: str) -> bool:
        return True

    def forget_queries(self) -> None:
        """Query vectors are cached on disk: replayed, never embedded again."""

    def search(self, query: str, limit: int) -> list[VectorPageHit]:
        scored = self.page_table(query)
        ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
        return [VectorPageHit(p, s, sec, sec) for p, (s, sec) in ranked]

    def page_scores(self, query: str, paths: Collection[str]) -> dict[str, float]:
        scored = self.page_table(query)
        return {p: scored[p][0] if p in scored else 0.0 for p in paths}

    # -- the replay ----------------------------------------------------------------------
    def index(self, name: str) -> ModelIndex:
        model, _, chunking = name.partition("@")
        chunking = chunking or self.variant.chunking.get(model, "default")
        return self.indexes[f"{model}@{chunking}"]

    def model_scores(self, name: str, query: str, route: str) -> dict[str, tuple[float, str]]:
        allowed = self._allowed.get(route)
        if allowed is None:
            allowed = self._allowed[route] = set(self.pages_of[route])
        return {p: v for p, v in self.index(name).scores(query).items() if p in allowed}

    def levels(self, name: str, route: str) -> tuple[float, float]:
        """(background, gap) of a model's pseudo-queries over the route's pages, as
        calibration.measure does it (each pseudo-query's best page, and the median page of
        the fixed sample without that page)."""
        key = (name, route)
        found = self._gaps.get(key)
        if found is None:
            sample = spread(list(self.corpus_pages), SAMPLE)
            backgrounds, matches = [], []
            for path, text in pseudo_queries(self.corpus_pages):
                if self.route(text) != route:
                    continue
                scored = self.model_scores(name, text, route)
                if not scored:
                    continue
                matches.append(max(s for s, _ in scored.values()))
                backgrounds.append(self.background(scored, [p for p in sample if p != path]))
            bg = statistics.median(backgrounds) if backgrounds else 0.0
            match = statistics.median(matches) if matches else 0.0
            found = self._gaps[key] = (bg, max(match - bg, 1e-6))
        return found

    @staticmethod
    def background(scored: Mapping[str, tuple[float, str]], sample: Sequence[str]) -> float:
        values = [scored[p][0] for p in sample if p in scored and scored[p][0] != 0.0]
        return float(statistics.median(values)) if values else 0.0

    def page_table(self, query: str) -> dict[str, tuple[float, str]]:
        found = self._scores.get(query)
        if found is not None:
            return found
        route_name = self.route(query)
        route = self.variant.english if route_name == "en" else self.variant.cjk
        per_model = [self.model_scores(m, query, route_name) for m in route.models]
        if len(per_model) == 1:
            found = per_model[0]
        else:
            weights = np.array(route.weights or (1.0,) * len(route.models), dtype=float)
            weights = weights / weights.sum()
            paths = sorted(set().union(*per_model))
            sample = spread(list(self.corpus_pages), SAMPLE)
            units = []
            for name, scored in zip(route.models, per_model):
                values = np.array([scored.get(p, (0.0, ""))[0] for p in paths])
                if route.combine == "max":
                    units.append(values / max(values.max(), 1e-6))
                else:
                    _, gap = self.levels(name, route_name)
                    units.append((values - self.background(scored, sample)) / gap)
            mixed = np.tensordot(weights, np.array(units), axes=1)
            first = per_model[0]
            if route.combine == "max":
                top = max(s for s, _ in first.values())
                values = top * mixed
            else:
                _, gap = self.levels(route.models[0], route_name)
                values = self.background(first, sample) + gap * mixed
            found = {p: (float(v), (first.get(p) or next(s[p] for s in per_model if p in s))[1])
                     for p, v in zip(paths, values)}
        self._scores[query] = found
        return found


def hybrid_over(base: HybridRetriever, vector: ReplayVector) -> HybridRetriever:
    return HybridRetriever(base.pages, base.keyword, base.graph, vector,  # type: ignore
                           base.settings, expander=base.expander)


def needed(variants: Sequence[Variant], corpus: str = "vault") -> set[str]:
    """The model@chunking indexes the variants read (SciFact: its English route only)."""
    out = set()
    for v in variants:
        for route in (v.english, v.cjk) if corpus == "vault" else (v.english,):
            for name in route.models:
                model, _, chunking = name.partition("@")
                out.add(f"{model}@{chunking or v.chunking.get(model, 'default')}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--cache", type=Path, required=True,
                        help="folder for the chunk and query vectors (outside the repo)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--no-scifact", action="store_true", help="the vault's sets only")
    parser.add_argument("--embed-only", action="store_true",
                        help="embed what the variants need and stop")
    parser.add_argument("--jobs", default="",
                        help="with --embed-only: corpus:model:chunking,... (default: all)")
    args = parser.parse_args()
    names = [n for n in args.variants.split(",") if n]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"--variants: unknown {unknown}; choose from {', '.join(VARIANTS)}")
    cache = args.cache.resolve()
    if ROOT in cache.parents or cache == ROOT:
        parser.error(f"--cache: {cache} is inside the repository; give a folder outside it "
                     f"(e.g. /tmp/dense-cache)")
    shared_corpora.require(CORPORA, "obsidian-help-queries.dev.jsonl", "scifact",
                           "obsidian-help")
    workspace = cache / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "mindgraph.yml").write_text(
        f"paths:\n  wiki: {CORPORA / 'obsidian-help'}\n  state: state\n", encoding="utf-8")
    settings = load_settings(workspace)
    wiki = wiki_retriever(Mindgraph(settings), embed=False)
    data = load_beir(CORPORA / "scifact")
    sci = beir_retriever(settings, data, "scifact", embed=False)
    corpora = {"vault": wiki, "scifact": sci}
    if args.embed_only:
        jobs = [tuple(j.split(":")) for j in args.jobs.split(",") if j] or JOBS
        for corpus, model, chunking in jobs:
            embed_corpus(cache, corpus, model, chunking,
                         route_pages(corpus, model, corpora[corpus].pages))
        return
    chosen = [VARIANTS[n] for n in names]
    queries = {m: QueryVectors(cache, m) for m in ("minilm", "e5", "use")}
    indexes: dict[str, dict[str, ModelIndex]] = {"vault": {}, "scifact": {}}
    for corpus in indexes:
        for key in sorted(needed(chosen, corpus)):
            model, chunking = key.split("@")
            path = cache / f"{corpus}-{model}-{chunking}.npz"
            if path.exists():
                indexes[corpus][key] = ModelIndex.load(path, model, queries[model])
    sets = {"dev": load_questions(CORPORA / "obsidian-help-queries.dev.jsonl"),
            "held-out": load_questions(HELD_OUT)}
    graded = {q: {f"{d}.md": g for d, g in rel.items()} for q, rel in data.qrels.items()}
    claims = [Question(qid, text, tuple(f"{d}.md" for d, g in data.qrels[qid].items() if g > 0))
              for qid, text in data.queries.items()]
    for name, variant in zip(names, chosen):
        missing = [f"{c}:{k}" for c in indexes for k in needed([variant], c)
                   if k not in indexes[c] and not (args.no_scifact and c == "scifact")]
        if missing:
            print(f"{name}: not embedded yet ({', '.join(sorted(set(missing)))}); "
                  f"run --embed-only", flush=True)
            continue
        row, vector_mrr = {}, []
        for key, questions in sets.items():
            vector = ReplayVector("vault", variant, indexes["vault"], wiki.pages,
                                  wiki.page_languages)
            row[key] = figures(hybrid_over(wiki, vector), questions)
            vector_mrr.append(run_methods(hybrid_over(wiki, vector), questions,
                                          ["vector"])[0].overall.mrr10)
        if not args.no_scifact:
            vector = ReplayVector("scifact", variant, indexes["scifact"], sci.pages,
                                  sci.page_languages)
            retriever = hybrid_over(sci, vector)
            row["scifact"] = figures(retriever, claims, graded)
            alone = run_methods(retriever, claims, ["vector"], graded)[0].overall.ndcg10
        print(line(name, row) + ("" if args.no_scifact else f" (vector alone {alone:.3f})")
              + f" | vector alone MRR@10 dev {vector_mrr[0]:.3f}, held-out {vector_mrr[1]:.3f}",
              flush=True)
        for q in queries.values():
            q.save()
    costs(cache)


def costs(cache: Path) -> None:
    """Chunks, CPU and wall ms per chunk, and vector bytes of every cached corpus."""
    print("\ncorpus model chunking: chunks, tokens/chunk, CPU ms/chunk, wall ms/chunk, MB")
    for path in sorted(cache.glob("*-*-*.npz")):
        if path.name.startswith("queries") or ".tmp" in path.name:
            continue
        data = np.load(path)
        n = len(data["pages"])
        print(f"{path.stem}: {n}, {float(np.mean(data['tokens'])):.0f}, "
              f"{1000 * float(data['cpu_s']) / n:.1f}, {1000 * float(data['wall_s']) / n:.1f}, "
              f"{data['vectors'].nbytes / 1e6:.1f}")


if __name__ == "__main__":
    main()
