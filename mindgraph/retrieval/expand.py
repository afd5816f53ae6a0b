"""Query expansion, pass 2 of the router: 2–3 extra queries for a hard or multi-concept query.

Offline, a deterministic splitter finds the concepts of "A vs B", "difference between A and
B", "how does A relate to B", 「AとBの違い」 and 「A和B的区别」. With an LLM provider
configured, the model proposes the queries instead (the splitter still runs first, for free).
Answers are cached per query; the LLM call is bounded in time by the caller.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from typing import Any

MAX_QUERIES = 3
_LATIN_PATTERNS = [
    re.compile(r"(?:difference|differences|relationship|relation)\s+between\s+(?:the\s+)?"
               r"(?P<a>.+?)\s+and\s+(?:the\s+)?(?P<b>.+?)(?:[,?.;]|$)", re.I),
    re.compile(r"(?:how\s+(?:does|do|is|are)\s+)?(?:the\s+)?(?P<a>[^,?.;]+?)\s+"
               r"(?:relate|relates|compare|compares|differ|differs)\s+(?:to|with|from)\s+"
               r"(?:the\s+)?(?P<b>[^,?.;]+)", re.I),
    re.compile(r"(?P<a>[^,?.;:]+?)\s+(?:vs\.?|versus)\s+(?P<b>[^,?.;:]+)", re.I),
    re.compile(r"how\s+do\s+(?:the\s+)?(?P<a>.+?)\s+and\s+(?:the\s+)?(?P<b>.+?)\s+"
               r"(?:work together|interact|fit together)", re.I),
]
_CJK_PATTERNS = [
    re.compile(r"(?P<a>[^、。？?,，「」]+?)と(?P<b>[^、。？?,，「」]+?)の(?:違い|関係|比較)"),
    re.compile(r"(?P<a>[^、。？?,，「」]+?)[和与跟](?P<b>[^、。？?,，「」]+?)(?:的)?(?:有什么|没有|有)?"
               r"(?:区别|关系|比较|不同)"),
]
# "Is this related to the problem?" names no two concepts: a pronoun is not something to
# search for.
_NOT_CONCEPTS = frozenset("这 那 它 他 她 这个 那个 这些 那些 此 其 これ それ あれ この その あの"
                          " 私 我 你 我们".split())
_LEAD_WORDS = re.compile(r"^(?:what\s+is\s+the|what\s+are\s+the|what's\s+the|is\s+there\s+a|"
                         r"what|how|the|a|an)\s+", re.I)


def split_concepts(query: str) -> list[str]:
    """The concepts of a multi-concept query ([] when it names only one thing)."""
    for pattern in _LATIN_PATTERNS + _CJK_PATTERNS:
        match = pattern.search(query)
        if match:
            parts = [_clean(match.group("a")), _clean(match.group("b"))]
            parts = [p for p in parts if p and len(p) <= 80 and p not in _NOT_CONCEPTS]
            if len(parts) == 2 and parts[0].lower() != parts[1].lower():
                return parts
    return []


def _clean(text: str) -> str:
    text = text.strip(" \t\"'`「」“”")
    previous = None
    while previous != text:
        previous = text
        text = _LEAD_WORDS.sub("", text).strip()
    return text


EXPANSION_PROMPT = """You help a search engine over a personal markdown wiki.
Rewrite the user's question into {n} short, different search queries (keywords or short
phrases, in the language of the question) that together find the pages that answer it.
Answer with a JSON list of strings only.

Question: {query}"""


class QueryExpander:
    """Extra queries for pass 2: the splitter, then (optionally) an LLM; answers are cached."""

    def __init__(self, provider: Any = None, cache_size: int = 256):
        self.provider = provider
        self._cache: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()
        self._size = cache_size

    @property
    def source(self) -> str:
        """"llm:<identity>" or "splitter"."""
        return f"llm:{self.provider.identity}" if self.provider is not None else "splitter"

    def expand(self, query: str) -> list[str]:
        """Up to three extra queries (the query itself never included)."""
        with self._lock:
            if query in self._cache:
                self._cache.move_to_end(query)
                return list(self._cache[query])
        queries = split_concepts(query)
        if self.provider is not None and len(queries) < MAX_QUERIES:
            queries += self._ask_llm(query, MAX_QUERIES - len(queries))
        seen = {query.strip().lower()}
        unique = []
        for q in queries:
            if q.strip() and q.strip().lower() not in seen:
                seen.add(q.strip().lower())
                unique.append(q.strip())
        unique = unique[:MAX_QUERIES]
        with self._lock:
            self._cache[query] = unique
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return list(unique)

    def _ask_llm(self, query: str, n: int) -> list[str]:
        answer = self.provider.complete("You write search queries.",
                                        EXPANSION_PROMPT.format(n=n, query=query),
                                        max_tokens=300)
        match = re.search(r"\[.*\]", answer, re.S)
        if not match:
            return []
        try:
            items = json.loads(match.group(0))
        except json.JSONDecodeError:
            return []
        return [str(i) for i in items if isinstance(i, (str, int, float))][:n]
