"""A query-side linear map learned from the vault itself, no question labels (session 24).

    python bench/bench_retrieval_levers.py -C WS --cross-lingual --agent \
        --questions bench/questions/obsidian-help-fresh23.jsonl \
        --levers base,adapt_a,adapt_b,adapt_ab,adapt_ab_l0.1,adapt_ab_l10,adapt_ab_r32
    python bench/vault_adaptation.py -C WS      # the pairs, training time, SciFact's vector side

Issue 13's paraphrase questions ("how do I get rid of a note" for "Delete a file") are missed
by both sides: the keyword side shares no word with the page, and MiniLM puts the page too far
down. Labels we may not use (questions, qrels), but the corpus pairs short descriptions with
the text they describe, and those pairs can teach the query side where the vault's sections
lie. Per embedding model (MiniLM for English, USE for Japanese and Chinese under the default
routing) a map W is learnt and applied to each query vector at search time (then unit length
again); the stored section vectors are unchanged, so nothing is re-embedded:

- pairs ``a`` (titles and headings): a page's title, and each alias, → its lead section's
  first chunk; a section's heading → its first chunk (SciFact: a paper's title → its first
  chunk: the corpus's own text, never its qrels);
- pairs ``b`` (how other pages describe a page): the sentence around a ``[[link]]`` (links
  reduced to the words a reader sees) → the linked page's lead chunk, or the linked
  heading's section when the link names one; a link from a page to itself is skipped, and a
  pair is kept only when both texts are the same model's (a Japanese page's sentence about a
  Japanese page);
- the loss: softmax over every chunk vector of the model (temperature 0.05), the other
  chunks of the positive's page masked out (they are not negatives), plus
  λ × ‖W − I‖²_F (λ 1 unless named), Adam (lr 1e-3, batch 128, 8 epochs), W starting at I;
  ``_r<k>``: W = I + U Vᵀ of rank k (U zero, V small and random, seed 0) in its place.

Every setting is fixed before any run (the usual values for contrastive fine-tuning of
sentence encoders); none was chosen on our questions or on SciFact. The pair texts are
embedded once as queries, by the model that serves them, and cached outside the repository
(``ADAPT_CACHE``, /tmp/adapt24-cache unless set). ``vault_adaptation.py`` prints the number of
pairs per model and each training's time (on stderr), then each variant's vector side alone.

``inlinks`` is the cheaper idea on the keyword side: every page gets one more keyword section
made of the sentences (pairs ``b``'s texts) that link to it, as anchor text.

Measured, not kept (README, "The vector side adapted to the vault without labels, session
24"): the link sentences lift the fresh set's paraphrase questions (hybrid MRR@10 0.519 →
0.656) but every variant loses dev English and all but λ 10 lose the held-out set.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mindgraph.page.links import replace_links  # noqa: E402
from mindgraph.page.model import Page, Section  # noqa: E402
from mindgraph.page.resolve import LinkResolver  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.keyword import KeywordIndex  # noqa: E402
from mindgraph.retrieval.vector import VectorRetriever  # noqa: E402

CACHE = Path(os.environ.get("ADAPT_CACHE", "/tmp/adapt24-cache"))
TEMPERATURE, LEARNING_RATE, BATCH, EPOCHS = 0.05, 1e-3, 128, 8
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
MAX_SENTENCE_CHARS = 400


@dataclass(frozen=True)
class Pair:
    """A short text and the stored chunk (page, chunk id) it describes."""

    text: str
    page: str
    chunk_id: str
    kind: str           # "a" (title, alias, heading) or "b" (a link's sentence)


# -- pairs -------------------------------------------------------------------------------------

def title_pairs(pages: Mapping[str, Page]) -> list[Pair]:
    """Each page's title and aliases → its lead section's first chunk; each heading → its
    section's first chunk."""
    out = []
    for path, page in pages.items():
        if not page.sections:
            continue
        lead = page.sections[0].id
        for name in (page.title, *page.aliases):
            if name.strip():
                out.append(Pair(name.strip(), path, lead, "a"))
        for section in page.sections[1:]:
            if section.heading.strip():
                out.append(Pair(section.heading.strip(), path, section.id, "a"))
    return out


def _readable(text: str) -> str:
    """Links as the words a reader sees, markdown marks out."""
    text = replace_links(text, lambda target, heading, _block, alias:
                         alias or heading or target.rsplit("/", 1)[-1].removesuffix(".md"))
    text = re.sub(r"[*_`>#|]+", " ", text)
    text = re.sub(r"^\s*(?:[-+]|\d+\.)\s+", "", text)
    return re.sub(r"\s+", " ", text).strip()


def link_pairs(pages: Mapping[str, Page]) -> list[Pair]:
    """The sentence around each [[link]] → the linked page's lead chunk (or the linked
    heading's section)."""
    resolver = LinkResolver(pages, {p.path: p.aliases for p in pages.values()})
    out = []
    for path, page in pages.items():
        lines = page.body.split("\n")
        for link in page.links:
            if link.is_attachment or link.line <= 0 or link.syntax == "inferred":
                continue
            found = resolver.resolve(link, path)
            if found.status != "resolved" or found.target == path or \
                    found.target not in pages:
                continue
            index = link.line - page.body_line
            if not 0 <= index < len(lines):
                continue
            line = lines[index]
            raw = f"[[{link.target}"
            at = line.find(raw) if raw in line else line.find(f"({link.target}")
            pieces, start = [], 0
            for part in _SENTENCE_END.split(line):
                pieces.append((start, part))
                start += len(part) + 1
            around = next((p for s, p in pieces if s <= max(at, 0) < s + len(p) + 1), line)
            sentence = _readable(around)[:MAX_SENTENCE_CHARS]
            if len(sentence) < 8:
                continue
            target = pages[found.target]
            section = target.sections[0].id if target.sections else None
            if link.heading:
                wanted = link.heading.split("#")[-1].strip().lower()
                section = next((s.id for s in target.sections
                                if s.heading.strip().lower() == wanted), section)
            if section is not None:
                out.append(Pair(sentence, found.target, section, "b"))
    return out


# -- stored vectors ------------------------------------------------------------------------------

def _unwrapped(store: Any) -> Any:
    while hasattr(store, "_store"):
        store = store._store
    return store


def model_rows(store: Any, model_version: str) -> list[tuple[int, int, list[list[str]],
                                                             np.ndarray]]:
    """Each model's stored chunks: (route, block start, rows [page, chunk, section, ...],
    their unit vectors); one model (route 0, start 0) for a store that is not routed."""
    store = _unwrapped(store)
    blocks = getattr(store, "blocks", None)
    if blocks is None:
        table = store._table(model_version)
        return [(0, 0, table.rows, np.asarray(table.vectors[np.arange(len(table.rows))],
                                              dtype=np.float32))]
    out = []
    for route, ((a, _b), part) in enumerate(zip(blocks, store.parts)):
        table = store.inner._table(part)
        if table is None or not len(table.rows):
            continue
        out.append((route, a, table.rows,
                    np.asarray(table.vectors[np.arange(len(table.rows))], dtype=np.float32)))
    return out


def embedded_texts(provider: Any, route: int, texts: Sequence[str]) -> np.ndarray:
    """``texts`` embedded as queries by the model of ``route`` (its own width), cached."""
    members = getattr(provider, "members", None)
    model = provider if members is None else members[route]
    digest = hashlib.sha256(("\n".join([model.model_version, *texts])).encode()).hexdigest()
    path = CACHE / f"{digest[:24]}.npy"
    if path.exists():
        return np.load(path)
    CACHE.mkdir(parents=True, exist_ok=True)
    out = np.concatenate([np.asarray(model.embed_queries(list(texts[i:i + 64])),
                                     dtype=np.float32) for i in range(0, len(texts), 64)])
    np.save(path, out)
    return out


# -- training --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Training:
    kinds: str = "ab"          # which pairs: "a", "b" or "ab"
    reg: float = 1.0           # λ of ‖W − I‖²
    rank: int = 0              # 0: a full W; else W = I + U Vᵀ of this rank


def train_map(queries: np.ndarray, positives: np.ndarray, docs: np.ndarray,
              doc_page: np.ndarray, pos_page: np.ndarray, spec: Training) -> np.ndarray:
    """W (d × d) for query vectors ``queries`` whose stored chunk is row ``positives`` of
    ``docs``; ``doc_page`` / ``pos_page``: page ids, to mask a positive page's other chunks."""
    rng = np.random.default_rng(0)
    d = queries.shape[1]
    if spec.rank:
        params = [np.zeros((d, spec.rank)), rng.normal(0, 0.01, (d, spec.rank))]
    else:
        params = [np.eye(d)]
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    step = 0
    for _epoch in range(EPOCHS):
        order = rng.permutation(len(queries))
        for start in range(0, len(order), BATCH):
            rows = order[start:start + BATCH]
            w = params[0] @ params[1].T + np.eye(d) if spec.rank else params[0]
            q = queries[rows]
            u = q @ w.T
            norm = np.linalg.norm(u, axis=1, keepdims=True)
            qh = u / norm
            logits = qh @ docs.T / TEMPERATURE
            same = doc_page[None, :] == pos_page[rows][:, None]
            same[np.arange(len(rows)), positives[rows]] = False
            logits[same] = -np.inf
            logits -= logits.max(axis=1, keepdims=True)
            prob = np.exp(logits)
            prob /= prob.sum(axis=1, keepdims=True)
            prob[np.arange(len(rows)), positives[rows]] -= 1.0
            g_qh = prob @ docs / TEMPERATURE / len(rows)
            g_u = (g_qh - np.sum(g_qh * qh, axis=1, keepdims=True) * qh) / norm
            g_w = g_u.T @ q + 2 * spec.reg * (w - np.eye(d)) / len(queries) * len(rows)
            grads = [g_w @ params[1], g_w.T @ params[0]] if spec.rank else [g_w]
            step += 1
            for p, g, (m, v) in zip(params, grads, moments):
                m *= 0.9
                m += 0.1 * g
                v *= 0.999
                v += 0.001 * g * g
                p -= LEARNING_RATE * (m / (1 - 0.9 ** step)) / (
                    np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    w = params[0] @ params[1].T + np.eye(d) if spec.rank else params[0]
    return w.astype(np.float32)


@dataclass
class Trained:
    maps: dict[int, tuple[int, np.ndarray]]     # route → (block start, W)
    report: list[str]


def train(pages: Mapping[str, Page], vector: VectorRetriever, spec: Training) -> Trained:
    """One W per model that has pairs, from ``pages`` and the store's vectors; a pair is
    the model's that would serve its text as a query."""
    pairs = [*(title_pairs(pages) if "a" in spec.kinds else ()),
             *(link_pairs(pages) if "b" in spec.kinds else ())]
    provider, store, model_version = vector.provider, vector.store, vector.model_version
    order = getattr(provider, "route_order", None)
    route_of = {p: 0 if order is None else order(vector.query_language(p.text))[0]
                for p in pairs}
    maps, report = {}, []
    for route, start, rows, vectors in model_rows(store, model_version):
        where = {(r[0], r[1]): i for i, r in enumerate(rows)}
        kept = [p for p in pairs if (p.page, p.chunk_id) in where
                and route_of[p] == route]
        if not kept:
            report.append(f"route {route}: no pairs")
            continue
        page_ids: dict[str, int] = {}
        doc_page = np.array([page_ids.setdefault(r[0], len(page_ids)) for r in rows])
        positives = np.array([where[(p.page, p.chunk_id)] for p in kept])
        queries = embedded_texts(provider, route, [p.text for p in kept])
        began = time.process_time()
        w = train_map(queries.astype(np.float64), positives, vectors.astype(np.float64),
                      doc_page, doc_page[positives], spec)
        took = time.process_time() - began
        maps[route] = (start, w)
        kinds = {k: sum(p.kind == k for p in kept) for k in "ab"}
        report.append(f"route {route}: {len(kept)} pairs (a {kinds['a']}, b {kinds['b']}), "
                      f"{len(rows)} chunks, {took:.1f} s CPU, ‖W − I‖ "
                      f"{np.linalg.norm(w - np.eye(len(w))):.2f}")
    return Trained(maps, report)


# -- the lever ---------------------------------------------------------------------------------

class MappedVector(VectorRetriever):
    """The vector retriever with each query vector's model block mapped by its W."""

    def __init__(self, base: VectorRetriever, maps: Mapping[int, tuple[int, np.ndarray]]):
        self.__dict__.update(base.__dict__)
        self.base, self.maps = base, maps

    def within(self, *args: Any, **kw: Any) -> "MappedVector":
        return MappedVector(self.base.within(*args, **kw), self.maps)

    def forget_queries(self) -> None:
        self.base.forget_queries()

    def embed_query(self, query: str) -> np.ndarray:
        q = np.array(self.base.embed_query(query), dtype=np.float32)
        for start, w in self.maps.values():
            block = q[start:start + len(w)]
            if np.any(block):
                mapped = w @ block
                q[start:start + len(w)] = mapped / np.linalg.norm(mapped)
        return q

    def query_provider(self, query: str) -> Any:
        return self.base.query_provider(query)

    def route_note(self, query: str) -> Any:
        return self.base.route_note(query)


_TRAINED: dict[tuple[int, Training], Trained] = {}


def adapted(r: HybridRetriever, spec: Training) -> Trained:
    """The maps for ``r``'s store (trained on ``r``'s pages the first time it is seen: the
    whole vault or corpus, as bench_retrieval_levers asks the full retriever first)."""
    store = _unwrapped(r.vector.store)
    key = (id(store), spec)
    if key not in _TRAINED:
        _TRAINED[key] = train(r.pages, r.vector, spec)
        print(f"  [{spec}: {'; '.join(_TRAINED[key].report)}]", file=sys.stderr, flush=True)
    return _TRAINED[key]


def adapt_lever(spec: Training) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        out = HybridRetriever(r.pages, r.keyword, r.graph, r.vector, r.settings,
                              expander=r.expander, vector_error=r.vector_error,
                              calibration_file=r._calibration_file)
        if r.vector is not None:
            out.vector = MappedVector(r.vector, adapted(r, spec).maps)
        return out
    return make


# -- inlink context on the keyword side ----------------------------------------------------------

def with_inlinks(pages: Mapping[str, Page]) -> dict[str, Page]:
    """Each page with one more section: the sentences around the links other pages make to
    it (anchor text, as web search indexes it), for the keyword index only."""
    said: dict[str, list[str]] = {}
    for pair in link_pairs(pages):
        said.setdefault(pair.page, []).append(pair.text)
    out = dict(pages)
    for path, texts in said.items():
        page = pages[path]
        extra = Section(id="inlinks", heading="", level=2, path=(), text="\n".join(texts),
                        start_line=0, end_line=0)
        out[path] = replace(page, sections=(*page.sections, extra))
    return out


def inlink_lever(r: HybridRetriever) -> HybridRetriever:
    augmented = with_inlinks(r.pages)
    if all(augmented[p] is r.pages[p] for p in r.pages):
        return r                    # no links (SciFact): the same index
    keyword = KeywordIndex.build(augmented.values(), r.keyword.params)
    return HybridRetriever(r.pages, keyword, r.graph, r.vector, r.settings,
                           expander=r.expander, vector_error=r.vector_error,
                           calibration_file=r._calibration_file)


LEVERS: dict[str, Callable[[HybridRetriever], HybridRetriever]] = {
    "inlinks": inlink_lever,
    "adapt_a": adapt_lever(Training("a")),
    "adapt_b": adapt_lever(Training("b")),
    "adapt_ab": adapt_lever(Training("ab")),
    "adapt_ab_l0.1": adapt_lever(Training("ab", reg=0.1)),
    "adapt_ab_l10": adapt_lever(Training("ab", reg=10.0)),
    "adapt_ab_r32": adapt_lever(Training("ab", rank=32)),
}


def main() -> None:
    """The pairs and training time per model, and each variant's vector side alone on the
    dev questions (MRR@10 per language) and SciFact (nDCG@10)."""
    from mindgraph.bench.corpora import beir_retriever, wiki_retriever
    from mindgraph.config import load_settings
    from mindgraph.core import Mindgraph
    from mindgraph.retrieval.datasets import load_beir, load_questions
    from mindgraph.retrieval.metrics import mean, mrr_at, ndcg_at
    import shared_corpora

    parser = argparse.ArgumentParser(description=main.__doc__)
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    parser.add_argument("--questions", type=Path, action="append", default=[])
    parser.add_argument("--no-scifact", action="store_true")
    parser.add_argument("--levers", default=",".join(n for n in LEVERS if n != "inlinks"))
    args = parser.parse_args()
    corpora = shared_corpora.corpora()
    settings = load_settings(args.workspace)
    wiki = wiki_retriever(Mindgraph(settings))
    sets = {"dev": load_questions(corpora / "obsidian-help-queries.dev.jsonl"),
            **{p.stem: load_questions(p) for p in args.questions}}
    sci = data = None
    if not args.no_scifact:
        data = load_beir(corpora / "scifact")
        sci = beir_retriever(settings, data, "scifact")
    chosen = {n: LEVERS[n] for n in args.levers.split(",") if n and n != "inlinks"}
    for name, make in {"base": lambda r: r, **chosen}.items():
        cells = []
        for key, questions in sets.items():
            vector = make(wiki).vector
            got: dict[str, list[float]] = {}
            for q in questions:
                vector.forget_queries()
                ranking = [h.path for h in vector.search(q.query, 10)]
                for k in ("all", q.lang or "-", f"style {q.extra.get('style', '-')}"):
                    got.setdefault(k, []).append(mrr_at(ranking, q.relevant, 10))
            cells.append(f"{key} " + " ".join(f"{k} {mean(v):.3f}" for k, v in sorted(got.items())
                                              if not k.endswith("-")))
        if sci is not None and data is not None:
            vector = make(sci).vector
            graded = {q: {f"{d}.md": g for d, g in rel.items()} for q, rel in data.qrels.items()}
            out = []
            for qid, text in data.queries.items():
                vector.forget_queries()
                out.append(ndcg_at([h.path for h in vector.search(text, 10)], graded[qid], 10))
            cells.append(f"scifact nDCG@10 {mean(out):.3f}")
        print(f"vector alone {name:14} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
