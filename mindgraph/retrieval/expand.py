"""Query expansion, pass 2 of the router: 2–3 extra queries for a hard or multi-concept query.

Offline, a deterministic splitter finds the concepts of "A vs B", "difference between A and
B", "how does A relate to B", 「AとBの違い」 and 「A和B的区别」. With an LLM provider
configured (``compile.provider``, wired by wiring.py), the model adds queries (the
splitter still runs first, for free). LLM answers are cached in memory and in the state
folder; the call is bounded in time by the provider's timeout and by the caller.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from typing import Any, Iterator

from ..errors import ConfigError, ProviderError, failure_note
from .llm_cache import AnswerCache

MAX_QUERIES = 3
MAX_SPLIT_CHARS = 400     # a comparison names two short things; longer text is not one

# Each form is an anchor found once, with the concepts taken around it by string operations:
# a regex with a lazy group before "\s+vs" (or before 和) retries every split of every start
# and took minutes on a 4,000-character query, holding the GIL of the whole server.
_STOPS = re.compile(r"[,?.;]")               # where a concept ends in English text
_STOPS_VS = re.compile(r"[,?.;:]")
_STOPS_CJK = re.compile(r"[、。？?,，「」]")
_BETWEEN = re.compile(r"\b(?:differences?|relationship|relation)\s+between\s+", re.I)
_RELATES = re.compile(r"\s+(?:relates?|compares?|differs?)\s+(?:to|with|from)\s+", re.I)
_VERSUS = re.compile(r"\s+(?:vs\.?|versus)\s+", re.I)
_TOGETHER = re.compile(r"\bhow\s+do\s+", re.I)
_TOGETHER_END = re.compile(r"\s+(?:work together|interact|fit together)", re.I)
_AND = re.compile(r"\s+and\s+", re.I)
_JA_ANCHOR = re.compile(r"の(?:違い|関係|比較)")
_ZH_ANCHOR = re.compile(r"(?:的)?(?:有什么|没有|有)?(?:区别|关系|比较|不同)")
_ZH_AND = re.compile(r"[和与跟]")
# "Is this related to the problem?" names no two concepts: a pronoun is not something to
# search for.
_NOT_CONCEPTS = frozenset("这 那 它 他 她 这个 那个 这些 那些 此 其 これ それ あれ この その あの"
                          " 私 我 你 我们".split())
_LEAD_WORDS = re.compile(r"^(?:what\s+is\s+the|what\s+are\s+the|what's\s+the|is\s+there\s+a|"
                         r"what|how\s+(?:does|do|is|are)|how|the|a|an)\s+", re.I)


def split_concepts(query: str) -> list[str]:
    """The concepts of a multi-concept query ([] when it names only one thing)."""
    if len(query) > MAX_SPLIT_CHARS:
        return []
    for form in (_between, _relates, _versus, _together, _japanese, _chinese):
        # the form's first occurrence that has words on both sides, as a regex search finds
        found = next((pair for pair in form(query) if pair[0].strip() and pair[1].strip()),
                     None)
        if found is None:
            continue
        parts = [_clean(found[0]), _clean(found[1])]
        parts = [p for p in parts if p and len(p) <= 80 and p not in _NOT_CONCEPTS]
        if len(parts) == 2 and parts[0].lower() != parts[1].lower():
            return parts
    return []


Pairs = Iterator[tuple[str, str]]


def _clause_before(text: str, end: int, stops: re.Pattern[str]) -> str:
    """The text from the last of ``stops`` before ``end`` up to ``end``."""
    starts = [m.end() for m in stops.finditer(text, 0, end)]
    return text[starts[-1] if starts else 0:end]


def _clause_after(text: str, start: int, stops: re.Pattern[str]) -> str:
    """The text from ``start`` up to the next of ``stops``."""
    stop = stops.search(text, start)
    return text[start:stop.start() if stop else len(text)]


def _split_once(text: str, separator: re.Pattern[str]) -> Pairs:
    match = separator.search(text)
    if match:
        yield text[:match.start()], text[match.end():]


def _between(query: str) -> Pairs:
    """ "difference between A and B" """
    for anchor in _BETWEEN.finditer(query):
        # the first concept may hold "." or "," (Node.js, Dr. Who); the second ends at one
        middle = _AND.search(query, anchor.end())
        first = query[anchor.end():middle.start()] if middle else ""
        if middle and not re.search(r"[?!？！]", first):     # not across a question's end
            yield first, _clause_after(query, middle.end(), _STOPS)


def _around(query: str, anchors: re.Pattern[str], stops: re.Pattern[str]) -> Pairs:
    """The clause before and the clause after each anchor."""
    for anchor in anchors.finditer(query):
        yield (_clause_before(query, anchor.start(), stops),
               _clause_after(query, anchor.end(), stops))


def _relates(query: str) -> Pairs:
    """ "how does A relate to B" """
    return _around(query, _RELATES, _STOPS)


def _versus(query: str) -> Pairs:
    """ "A vs B" """
    return _around(query, _VERSUS, _STOPS_VS)


def _together(query: str) -> Pairs:
    """ "how do A and B work together" """
    start, end = _TOGETHER.search(query), _TOGETHER_END.search(query)
    if start is not None and end is not None and end.start() > start.end():
        yield from _split_once(query[start.end():end.start()], _AND)


def _japanese(query: str) -> Pairs:
    """「AとBの違い」"""
    for anchor in _JA_ANCHOR.finditer(query):
        clause = _clause_before(query, anchor.start(), _STOPS_CJK)
        if "と" in clause:
            a, b = clause.split("と", 1)
            yield a, b


def _chinese(query: str) -> Pairs:
    """「A和B的区别」, 「A与B有什么关系」"""
    for anchor in _ZH_ANCHOR.finditer(query):
        yield from _split_once(_clause_before(query, anchor.start(), _STOPS_CJK), _ZH_AND)


def _clean(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _LEAD_WORDS.sub("", text.strip(" \t\"'`「」“”")).strip()
    return text


EXPANSION_PROMPT = """You help a search engine over a personal markdown wiki.
Rewrite the user's question into {n} short, different search queries (keywords or short
phrases, in the language of the question) that together find the pages that answer it.
Answer with a JSON list of strings only.

Question: {query}"""


class QueryExpander:
    """Extra queries for pass 2: the splitter, then (optionally) an LLM.

    ``provider`` is an LLM provider or a function that builds one on first use (so a search
    that never expands never loads an SDK; building may raise ConfigError, e.g. a key that
    is not set, which becomes a degradation note). LLM answers are cached in memory and,
    with ``cache``, across processes; a failed call is not cached, and the splitter's
    queries are kept.
    """

    def __init__(self, provider: Any = None, cache_size: int = 256,
                 cache: AnswerCache | None = None):
        self._provider = provider
        self._built = provider if not callable(provider) or hasattr(provider, "complete") \
            else None
        self._cache: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()
        self._size = cache_size
        self._disk = cache

    @property
    def provider(self) -> Any:
        """The LLM provider (built on first use), or None."""
        if self._built is None and self._provider is not None:
            with self._lock:
                if self._built is None:
                    self._built = self._provider()
        return self._built

    @property
    def source(self) -> str:
        """"llm:<identity>" or "splitter"."""
        return f"llm:{self.provider.identity}" if self._provider is not None else "splitter"

    def expand(self, query: str) -> list[str]:
        """Up to three extra queries (the query itself never included)."""
        return self.expand_noted(query)[0]

    def expand_noted(self, query: str) -> tuple[list[str], str | None]:
        """The extra queries and, when the LLM could not help, why (a degradation note)."""
        with self._lock:
            if query in self._cache:
                self._cache.move_to_end(query)
                return list(self._cache[query]), None
        queries = split_concepts(query)
        note = None
        if self._provider is not None and len(queries) < MAX_QUERIES:
            try:
                queries += self._llm_queries(query, MAX_QUERIES - len(queries))
            except (ProviderError, ConfigError) as exc:
                note = failure_note("LLM query expansion", exc, "splitter only")
        seen = {query.strip().lower()}
        unique = []
        for q in queries:
            if q.strip() and q.strip().lower() not in seen:
                seen.add(q.strip().lower())
                unique.append(q.strip())
        unique = unique[:MAX_QUERIES]
        if note is None:
            with self._lock:
                self._cache[query] = unique
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return list(unique), note

    def _llm_queries(self, query: str, n: int) -> list[str]:
        provider = self.provider
        key = f"expand\n{provider.identity}\n{n}\n{query}"
        stored = self._disk.get(key) if self._disk is not None else None
        if stored is not None:
            return _query_list(stored, n)
        answer = provider.complete("You write search queries.",
                                   EXPANSION_PROMPT.format(n=n, query=query), max_tokens=300)
        queries = _query_list(answer, n)
        if self._disk is not None:
            self._disk.put(key, json.dumps(queries, ensure_ascii=False))
        return queries


def _query_list(answer: str, n: int) -> list[str]:
    """The JSON list of strings in an LLM answer ([] when there is none)."""
    match = re.search(r"\[.*\]", answer, re.S)
    if not match:
        return []
    try:
        items = json.loads(match.group(0))
    except json.JSONDecodeError:
        return []
    if not isinstance(items, list):
        return []
    return [str(i)[:200] for i in items if isinstance(i, (str, int, float))][:n]
