"""Keyword retrieval: BM25 over sections and whole pages, combined into one page ranking.

Every page is indexed twice: each of its sections is a document (page title, aliases and file
name + the section's heading path + the section's text), and the whole page is a document
(title fields + all headings + all text). Fields are weighted before BM25's saturation (a
simple BM25F): a term in the title counts ``title`` times, in a heading ``heading`` times.

A page's score mixes its page-level score and its best section's score, each divided by the
best score of its kind for the query, so neither scale dominates:
``page_mix · page/page_max + (1 − page_mix) · section/section_max``.
The best section is also what a hit points at (section id and heading).

The index is incremental (add, change and remove pages; see ``apply``) and pickles to a file.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..fsutil import read_bytes
from ..page.cache import ChangeSet, parser_fingerprint, paused_gc, read_state
from ..statefile import write_state
from ..page.language import page_language
from ..page.model import Page
from . import analyzer
from .analyzer import analyze
from .bm25 import BM25Params, SparseBM25, Vocabulary
from .embeds import EmbedLinks, Embedded
from .subwords import MAX_PER_WORD, MAX_TERMS, Subwords, expandable, has_han


@dataclass(frozen=True)
class KeywordParams:
    """Field weights, BM25 parameters and the page/section mix (tuned on the dev questions)."""

    title: float = 3.0      # page title, aliases and file name
    heading: float = 2.0    # heading path (section) or all headings (page)
    folder: float = 1.0     # the page's folder names
    body: float = 1.0
    # the lead text (before the first heading) says what the page is about; this weight
    # replaces the double count it got from a summary callout repeating it
    lead: float = 2.0
    k1: float = 1.2
    b: float = 0.75
    page_mix: float = 0.5   # weight of the page-level score against the best section's
    # a section embedding another note is indexed with the embedded text too (retrieval/
    # embeds.py; config index.expand_embeds), at most this many characters of each; 0: off
    embed_chars: int = 0
    embed: float = 1.0      # the embedded text's weight against the section's own body
    embed_page: float = 1.0  # ... and in the whole-page document (0: the section's only)


@dataclass(frozen=True)
class Concept:
    """Interchangeable index terms scored as one (``SparseBM25.concept_scores``): ``terms``
    maps each to its share, ``weight`` is the concept's against a query term's 1."""

    terms: Mapping[str, float]
    weight: float = 1.0
    # the shares as given, not scaled to sum to 1: the terms' frequencies add up (any of the
    # vault's words containing a query word: retrieval/subwords.py)
    summed: bool = False


@dataclass(frozen=True)
class KeywordHit:
    """One page found by keyword search, with the section that matched best."""

    path: str
    score: float
    section_id: str | None
    page_score: float       # page-level BM25
    section_score: float    # best section's BM25 (0 when no section matched)
    rank: int = 0


def indexed_version(page: Page) -> str:
    """What the index holds of a page: its bytes, and where the index limit cut its text
    (a new limits.max_indexed_chars changes what is indexed of the same bytes)."""
    return page.content_hash + (f":{page.unindexed_chars}" if page.unindexed_chars else "")


def page_fields(page: Page) -> dict[str, str]:
    """The texts of a page's title-like fields: title + aliases + file name, and folders."""
    names = [page.title, *page.aliases]
    if page.stem.lower() not in {n.lower() for n in names}:
        names.append(page.stem)
    folders = page.path.split("/")[:-1]
    return {"title": "\n".join(names), "folder": " ".join(folders)}


class KeywordIndex:
    """BM25 over every section and every page of a set of pages; incremental."""

    def __init__(self, params: KeywordParams = KeywordParams()):
        self.params = params
        bm25 = BM25Params(k1=params.k1, b=params.b)
        self.vocab = Vocabulary()
        self.sections = SparseBM25(bm25)
        self.pages = SparseBM25(bm25)
        self.hashes: dict[str, str] = {}       # page path → content hash it was indexed at
        self._section_ids: dict[str, tuple[str, ...]] = {}
        self._pid: dict[str, int] = {}
        self._paths: list[str | None] = []
        self.embeds = EmbedLinks(params.embed_chars) if params.embed_chars > 0 else None
        # (page, section id) → what the section's embeds show (explain and snippets say so)
        self.embedded: dict[tuple[str, str], tuple[Embedded, ...]] = {}
        self._subwords = Subwords()

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_subwords", None)    # rebuilt from the vocabulary when first needed
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("embeds", None)
        state.setdefault("embedded", {})
        self.__dict__.update(state)
        self._subwords = Subwords()

    @classmethod
    def build(cls, pages: Iterable[Page], params: KeywordParams = KeywordParams()
              ) -> "KeywordIndex":
        """Index ``pages`` from scratch."""
        index = cls(params)
        by_path = {page.path: page for page in pages}
        with paused_gc():
            for page in by_path.values():
                index.add_page(page, by_path)
            index.compact()
        return index

    def __len__(self) -> int:
        return len(self.hashes)

    # -- changes ------------------------------------------------------------------------
    def add_page(self, page: Page, pages: Mapping[str, Page] | None = None) -> None:
        """Index ``page`` (replacing its previous version); ``pages``, every page by path,
        lets its embeds of other notes be read (``KeywordParams.embed_chars``)."""
        if page.path in self.hashes:
            self.remove_page(page.path)
        pid = self._pid.get(page.path)
        if pid is None:
            pid = self._pid[page.path] = len(self._paths)
            self._paths.append(page.path)
        p = self.params
        head = page_fields(page)
        lang = page_language(page)
        shared = self._counts(head["title"], p.title, lang)
        shared.update(self._counts(head["folder"], p.folder, lang))
        page_counts: Counter[int] = Counter(shared)
        ids = []
        embedded = self.embeds.sections(page, pages) \
            if self.embeds is not None and pages is not None else {}
        for section in page.sections:
            page_counts.update(self._counts(section.heading, p.heading, lang))
            if not section.text.strip():
                # a heading with nothing under it (its subsections hold the text) is no answer:
                # as a document of title + heading alone it won short queries with an empty
                # snippet; its heading still counts for the page
                continue
            counts = Counter(shared)
            heading_text = " ".join(section.path)
            counts.update(self._counts(heading_text, p.heading, lang))
            weight = p.body * (p.lead if section.id == "lead" else 1)
            body = self._counts(section.text, weight, lang)
            counts.update(body)
            page_counts.update(body)
            for shown in embedded.get(section.id, ()):
                counts.update(self._counts(shown.text, weight * p.embed, lang))
                page_counts.update(self._counts(shown.text, weight * p.embed * p.embed_page,
                                                lang))
            if section.id in embedded:
                self.embedded[(page.path, section.id)] = tuple(embedded[section.id])
            self.sections.add((page.path, section.id), counts, pid)
            ids.append(section.id)
        self.pages.add(page.path, page_counts, pid)
        self._section_ids[page.path] = tuple(ids)
        self.hashes[page.path] = indexed_version(page)

    def remove_page(self, path: str) -> bool:
        """Drop a page and its sections; False when it was not indexed."""
        if path not in self.hashes:
            return False
        for section_id in self._section_ids.pop(path, ()):
            self.sections.remove((path, section_id))
            self.embedded.pop((path, section_id), None)
        if self.embeds is not None:
            self.embeds.forget(path)
        self.pages.remove(path)
        del self.hashes[path]
        return True

    def apply(self, pages: Mapping[str, Page], added: Iterable[str] = (),
              changed: Iterable[str] = (), removed: Iterable[str] = ()) -> None:
        """Apply a change set: re-index added and changed pages, drop removed ones, and
        re-index the pages whose embeds show one of them (or may resolve anew)."""
        added, changed, removed = list(added), list(changed), list(removed)
        dependents: set[str] = set()
        if self.embeds is not None:
            moved = [p for p in added if p not in self.hashes] + \
                [p for p in removed if p in self.hashes]
            if moved:
                self.embeds.paths_changed()
            dependents = self.embeds.dependents([*changed, *removed, *added], moved)
            dependents -= {*added, *changed, *removed}
        with paused_gc():
            for path in removed:
                self.remove_page(path)
            for path in [*added, *changed, *sorted(p for p in dependents if p in pages)]:
                self.add_page(pages[path], pages)

    def sync(self, pages: Mapping[str, Page]) -> ChangeSet:
        """Bring the index up to date with ``pages`` by content hash; returns the change set."""
        changes = ChangeSet(
            added=tuple(sorted(p for p in pages if p not in self.hashes)),
            changed=tuple(sorted(p for p in pages if p in self.hashes
                                 and self.hashes[p] != indexed_version(pages[p]))),
            removed=tuple(sorted(p for p in self.hashes if p not in pages)))
        if changes:
            self.apply(pages, changes.added, changes.changed, changes.removed)
        return changes

    def save(self, path: Path) -> None:
        """Compact and write the index atomically (pickle)."""
        self.compact()
        write_state(path, "keyword-index", index_fingerprint(), {"index": self})

    @classmethod
    def load(cls, path: Path, params: KeywordParams = KeywordParams()) -> "KeywordIndex | None":
        """The saved index, or None when absent, unreadable, or made by other code or params."""
        state = read_state(path, "keyword-index", index_fingerprint())
        if state is None:
            return None
        index = state.get("index")
        if not isinstance(index, cls) or index.params != params:
            return None
        return index

    def compact(self) -> None:
        """Fold recent changes into the base segments (done before saving)."""
        self.sections.compact()
        self.pages.compact()

    def _counts(self, text: str, weight: float, lang: str) -> Counter[int]:
        if not text or weight <= 0:
            return Counter()
        add = self.vocab.add
        counts: Counter[int] = Counter()
        for term, n in Counter(analyze(text, lang=lang)).items():
            counts[add(term)] = n * weight
        return counts

    # -- search -------------------------------------------------------------------------
    def query_terms(self, query: str) -> list[str]:
        """The distinct index terms of a query, in order of first appearance."""
        return list(dict.fromkeys(analyze(query, query=True)))

    def subword_terms(self, query: str, max_chars: int) -> dict[str, str]:
        """The vault's words that contain a Han word of ``query`` of at most ``max_chars``
        characters that no page has as a word of its own (retrieval/subwords.py), each with
        that query term: {霜冻: 霜}."""
        if not has_han(query):      # most queries: not even analysed again
            return {}
        own = self.query_terms(query)
        ids = self.vocab.ids
        short = [word for word in expandable(own, max_chars)
                 if word not in ids or not self.pages.document_frequency(ids[word])]
        if not short:
            return {}
        self._subwords.refresh(self.vocab)
        taken = set(own)
        out: dict[str, str] = {}
        for word in short:      # capped: a hostile query of 1,000 characters costs little
            room = min(MAX_PER_WORD, MAX_TERMS - len(out))
            if room <= 0:
                break
            for term in self._subwords.containing(word):
                if term not in taken and term not in out:
                    out[term] = word
                    room -= 1
                    if not room:
                        break
        return out

    @staticmethod
    def subword_concepts(found: Mapping[str, str], weight: float) -> list[Concept]:
        """``subword_terms`` as concepts to search, one per query word at ``weight``: the
        words containing it scored as one term, their frequencies summed."""
        by_word: dict[str, dict[str, float]] = {}
        for term, word in found.items():
            by_word.setdefault(word, {})[term] = 1.0
        return [Concept(terms, weight, summed=True) for terms in by_word.values()]

    def search(self, query: str, limit: int = 10,
               extra: Mapping[str, float] | None = None,
               concepts: Sequence[Concept] = ()) -> list[KeywordHit]:
        """The ``limit`` best pages for ``query`` (``extra``: more index terms, each with its
        weight against the query's own terms' 1; ``concepts``: more sets of interchangeable
        terms, each scored as one term, e.g. a word's translations)."""
        scored = self._scores(query, extra, concepts)
        if scored is None:
            return []
        combined, page_score, best, best_row = scored
        candidates = np.flatnonzero(combined > 0)
        if len(candidates) > limit:
            # Keep every candidate tied with the limit-th score: ties are decided by path.
            kth = np.partition(combined[candidates], len(candidates) - limit)[-limit]
            candidates = candidates[combined[candidates] >= kth]
        # Ties broken by path, so the order never depends on insertion history.
        ranked = sorted(candidates, key=lambda pid: (-combined[pid], self._paths[pid]))
        hits = []
        for rank, pid in enumerate(ranked[:limit], 1):
            row = best_row[pid]
            key = self.sections.key(int(row)) if row >= 0 else None
            hits.append(KeywordHit(path=str(self._paths[pid]), score=float(combined[pid]),
                                   section_id=key[1] if key else None,
                                   page_score=float(page_score[pid]),
                                   section_score=float(best[pid]), rank=rank))
        return hits

    def page_scores(self, query: str, paths: Iterable[str],
                    extra: Mapping[str, float] | None = None,
                    concepts: Sequence[Concept] = ()) -> dict[str, float]:
        """The score ``search`` gives each of ``paths`` (0 for a page no query term matches),
        for pages it did not return."""
        scored = self._scores(query, extra, concepts)
        combined = scored[0] if scored is not None else None
        out: dict[str, float] = {}
        for path in paths:
            pid = self._pid.get(path)
            out[path] = float(combined[pid]) if combined is not None and pid is not None \
                else 0.0
        return out

    def _scores(self, query: str, extra: Mapping[str, float] | None = None,
                concepts: Sequence[Concept] = ()
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """Per page id: combined score, page-field score, best section score, its row."""
        weighted = dict.fromkeys(self.query_terms(query), 1.0)
        for term, weight in (extra or {}).items():
            weighted.setdefault(term, weight)
        known = [(self.vocab.ids[t], w) for t, w in weighted.items() if t in self.vocab.ids]
        ids = np.array([i for i, _ in known], dtype=np.int64)
        weights = np.array([w for _, w in known]) if extra else None
        groups = self._concept_ids(concepts)
        if (len(ids) == 0 and not groups) or not self.hashes:
            return None
        n_pids = len(self._paths)
        page_rows = self.pages.scores(ids, weights)
        section_rows = self.sections.scores(ids, weights)
        if groups:
            page_rows += self.pages.concept_scores(groups)
            section_rows += self.sections.concept_scores(groups)
        page_score = np.zeros(n_pids)
        hit = page_rows > 0
        page_score[self.pages.groups[hit]] = page_rows[hit]
        best = np.zeros(n_pids)
        best_row = np.full(n_pids, -1, dtype=np.int64)
        matched = np.flatnonzero(section_rows > 0)
        if len(matched):
            # Best section per page in linear time (a sort of every matched row grew as
            # N log N: a common word matches most sections of a large wiki); on a tie the
            # later row, as a stable sort would keep.
            scores, groups = section_rows[matched], self.sections.groups[matched]
            max_per_group(best, groups, scores)
            top = scores == best[groups]
            max_per_group(best_row, groups[top], matched[top])
        mix = self.params.page_mix
        combined = (mix * page_score / max(page_score.max(), 1e-12)
                    + (1 - mix) * best / max(best.max(), 1e-12))
        return combined, page_score, best, best_row

    def _concept_ids(self, concepts: Sequence[Concept]
                     ) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """Each concept's known terms as ids with their shares (renormalised to sum to 1,
        unless the concept's are ``summed``)."""
        out = []
        for concept in concepts:
            known = [(self.vocab.ids[t], w) for t, w in concept.terms.items()
                     if t in self.vocab.ids and w > 0]
            total = sum(w for _, w in known)
            if known and total > 0:
                scale = 1.0 if concept.summed else total
                out.append((np.array([i for i, _ in known], dtype=np.int64),
                            np.array([w / scale for _, w in known]), concept.weight))
        return out

    def top_sections(self, query: str, limit: int = 10) -> list[tuple[str, str, float]]:
        """The ``limit`` best sections as (page path, section id, BM25 score)."""
        scores = self.sections.scores(self.vocab.lookup(self.query_terms(query)))
        rows = np.flatnonzero(scores > 0)
        if len(rows) > limit:
            rows = rows[np.argpartition(-scores[rows], limit - 1)[:limit]]
        rows = rows[np.lexsort((rows, -scores[rows]))]
        return [(*self.sections.key(int(r)), float(scores[r])) for r in rows]  # type: ignore[misc]


def max_per_group(out: np.ndarray, groups: np.ndarray, values: np.ndarray) -> None:
    """``out[g] = max(out[g], values of group g)`` for every group, in place.

    Each pass writes the values still above their group's maximum (any one of them wins a
    write) and keeps those still above: a few vectorised passes, not a sort of every value
    nor ``np.maximum.at`` (3-6x slower at 200,000 values)."""
    pending = np.flatnonzero(values > out[groups])
    while pending.size:
        out[groups[pending]] = values[pending]
        pending = pending[values[pending] > out[groups[pending]]]


@functools.lru_cache(maxsize=1)
def index_fingerprint() -> str:
    """SHA-256 of the analyzer, index and page parser code and of the CJK settings (the
    dictionaries are pinned in ``text/cjk.py``): a saved index made by other code (or over
    pages parsed another way) is rebuilt."""
    digest = hashlib.sha256(parser_fingerprint().encode())
    folder = Path(__file__).parent
    for path in (folder / "analyzer.py", folder / "bm25.py", folder / "keyword.py",
                 folder / "embeds.py", folder.parent / "page" / "transclude.py",
                 folder.parent / "page" / "language.py",
                 folder.parent / "text" / "cjk.py"):
        digest.update(read_bytes(path))
    digest.update(f"{analyzer.CJK_TERMS} {analyzer.CJK_STOP} {analyzer.CJK_PARTS}".encode())
    return digest.hexdigest()


def open_keyword_index(pages: Mapping[str, Page], state_file: Path,
                       params: KeywordParams = KeywordParams(), save: bool = True
                       ) -> KeywordIndex:
    """The persisted index brought up to date with ``pages`` (built when there is none);
    saved when it changed unless ``save`` is false (a read-only state folder)."""
    index = KeywordIndex.load(state_file, params)
    if index is None:
        index = KeywordIndex.build(pages.values(), params)
        if save:
            index.save(state_file)
        return index
    if index.sync(pages) and save:
        index.save(state_file)
    return index
