"""Explain keyword hits: which query terms matched in which fields, and a snippet with them.

Only the few hits shown are explained, by re-analysing their fields, so search itself stays a
pure sparse-matrix computation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..page.language import page_language
from ..page.model import Page, Section
from ..text.answer_labels import label, localized, name
from ..text.cjk import CJK_RUN
from .analyzer import analyze, highlight_terms, iter_term_spans
from .embeds import Embedded
from .keyword import KeywordHit, page_fields
from .native import app_url
from .present import embed_label, embeds_shown, readable
from .snippet_marks import marked, outside_code

SNIPPET_CHARS = 240
FIELDS = ("title", "folder", "heading", "body")


@dataclass(frozen=True)
class SearchResult:
    """A keyword hit with its page title, best section, snippet and explanation."""

    rank: int
    path: str
    title: str
    score: float
    page_score: float
    section_score: float
    section_id: str | None
    heading: str
    snippet: str                      # matched terms wrapped in ** **
    matched: tuple[str, ...]          # query words that matched, as typed
    fields: dict[str, list[str]]      # field → query words matched there
    why: str                          # one readable sentence
    url: str | None = None            # the deep link into the note app it came from

    def to_dict(self) -> dict:
        """JSON-friendly form: the fields every search result has (rank, page, title,
        section_id, heading, snippet, score; see the README's result table), then BM25's."""
        return {"rank": self.rank, "page": self.path, "title": self.title,
                "section_id": self.section_id, "heading": self.heading,
                "snippet": self.snippet, "score": round(self.score, 4),
                "scores": {"page_bm25": round(self.page_score, 4),
                           "section_bm25": round(self.section_score, 4)},
                "matched_terms": list(self.matched),
                "why": {"fields": self.fields, "summary": self.why},
                "retrievers": ["keyword"],       # as a hybrid hit names its retrievers
                "url": self.url}


def query_words(query: str) -> dict[str, str]:
    """Index term → the word of the query it came from (first occurrence); one pass over the
    query (a scan per term was quadratic: 2,000 words took seconds). Worked out once a
    search (its caller hands it to ``explain`` for every hit), not in a cache shared by the
    searches of every tenant: a hit there told that the query was asked before."""
    terms = dict.fromkeys(analyze(query, query=True))
    found: dict[str, str] = {}
    cjk = any(CJK_RUN.search(t) for t in terms)
    for start, end, own in iter_term_spans(query, cjk=cjk, query=True):
        # a CJK word is reported whole, whichever of its terms matched (動かない, not 動く);
        # "web-capture" gives web-capture, web and captur from spans of their own
        for term in own:
            if term in terms:
                found.setdefault(term, query[start:end])
        if len(found) == len(terms):
            break
    return {term: found.get(term, term) for term in terms}


def explain(hit: KeywordHit, page: Page, query: str, why: bool = True,
            embedded: Sequence[Embedded] = (), subwords: Mapping[str, str] | None = None,
            words: Mapping[str, str] | None = None, said_in: str = "en") -> SearchResult:
    """Explain one hit of ``query`` on ``page``; ``why=False`` leaves out which words matched
    in which field (``matched``, ``fields`` and ``why`` empty: a fifth of the time, for
    callers that do not show it); ``embedded``: what the hit section's embeds show (field
    "embed", and the snippet from there when the section's own text has no query word);
    ``subwords``: the vault's words searched for a short query word (``KeywordIndex.
    subword_terms``: 霜冻 for 霜), lit and reported as the query word they contain;
    ``words``: ``query_words(query)``, worked out once for all the hits of a search;
    ``said_in``: the language ``why`` is said in (the query's: text/answer_labels.py has
    Japanese and Chinese; English otherwise)."""
    words = query_words(query) if words is None else words
    if subwords:
        words = {**words, **{term: words.get(word, word) for term, word in subwords.items()}}
    lang = page_language(page)
    section = page.section(hit.section_id) if hit.section_id else None
    fields: dict[str, list[str]] = {}
    matched: dict[str, None] = {}
    if why:
        head = page_fields(page)
        texts = {"title": head["title"], "folder": head["folder"],
                 "heading": " ".join(section.path) if section else
                 " ".join(s.heading for s in page.sections),
                 "body": section.text if section else page.indexed_body}
        embedded = [e for e in embedded if set(analyze(e.text, lang=lang, only=words))]
        texts["embed"] = "\n".join(e.text for e in embedded)
        for name in (*FIELDS, "embed"):
            present = set(analyze(texts[name], lang=lang, only=words))
            hits = [words[t] for t in words if t in present]
            if hits:
                fields[name] = list(dict.fromkeys(hits))
                matched.update(dict.fromkeys(hits))
    return SearchResult(
        rank=hit.rank, path=hit.path, title=page.title, score=hit.score,
        page_score=hit.page_score, section_score=hit.section_score,
        section_id=hit.section_id, heading=section.heading if section else "",
        snippet=_snippet(section, page, list(words), lang, embedded),
        matched=tuple(matched), fields=fields,
        why=_summary(fields, section, embedded, said_in) if why else "",
        url=app_url(page))


def _snippet(section: Section | None, page: Page, terms: list[str], lang: str,
             embedded: Sequence[Embedded]) -> str:
    own = (section.text if section else "") or page.indexed_body
    if embedded and not highlight_terms(readable(own), terms, lang):
        for shown in embedded:      # the section's own text has no query word: an embed's
            if highlight_terms(readable(shown.text), terms, lang):
                return embed_label(shown) + snippet(shown.text, terms, lang=lang)
    return snippet(own, terms, lang=lang)


def _summary(fields: dict[str, list[str]], section: Section | None,
             embedded: Sequence[Embedded] = (), lang: str = "en") -> str:
    embeds = ", ".join(dict.fromkeys(f"[[{e.label}]]" for e in embedded))
    heading = section.heading if section is not None else ""
    if localized(lang):
        return _summary_in(lang, fields, heading, embeds)
    labels = {"title": "title/aliases/file name", "folder": "folder", "heading": "heading",
              "body": "text", "embed": "text embedded from " + embeds}
    parts = []
    for name in (*FIELDS, "embed"):
        if name in fields:
            where = labels[name]
            if name in ("heading", "body") and heading:
                where += f" of section '{heading}'"
            parts.append(", ".join(f"'{w}'" for w in fields[name]) + f" in {where}")
    return "matched " + "; ".join(parts) if parts else "matched index terms only"


def _summary_in(lang: str, fields: dict[str, list[str]], heading: str, embeds: str) -> str:
    """``_summary`` in a language of text/answer_labels.py's tables."""
    parts = []
    for field in (*FIELDS, "embed"):
        if field in fields:
            where = name(lang, field).format(embeds=embeds)
            if field in ("heading", "body") and heading:
                where = label(lang, "in_section", heading=heading, where=where)
            words = "".join(label(lang, "word", word=w) for w in fields[field])
            parts.append(label(lang, "matched_part", where=where, words=words))
    return (label(lang, "matched", parts=label(lang, "matched_parts_joiner").join(parts))
            if parts else label(lang, "matched_none"))


def snippet(text: str, terms: list[str], width: int = SNIPPET_CHARS, lang: str | None = None
            ) -> str:
    """The window of ``text`` with the most matched terms, matches wrapped in ** **."""
    flat = readable(text)
    if not flat:
        return embeds_shown(text)
    spans = highlight_terms(flat, terms, lang)
    if not spans:
        end = outside_code(flat, 0, min(len(flat), width))[1]
        return flat[:end] + ("…" if len(flat) > end else "")
    # Densest window: the start that covers the most spans within ``width`` characters.
    best_start, best_count, j = spans[0][0], 0, 0
    for i, (start, _) in enumerate(spans):
        while j < len(spans) and spans[j][1] <= start + width:
            j += 1
        if j - i > best_count:
            best_start, best_count = start, j - i
    begin = max(0, best_start - width // 6)
    space = flat.rfind(" ", 0, begin)
    begin = space + 1 if begin > 0 and space >= 0 else begin
    begin, end = outside_code(flat, begin, min(len(flat), begin + width))
    window = [(start - begin, stop - begin) for start, stop in spans
              if start >= begin and stop <= end]
    return (("…" if begin > 0 else "") + marked(flat[begin:end], window)
            + ("…" if end < len(flat) else ""))
