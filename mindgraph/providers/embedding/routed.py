"""One model per language: ``embedding.languages`` routes sections and queries by language.

``embedding.languages: {ja: multilingual-e5-small, zh: multilingual-e5-small}`` embeds
Japanese and Chinese sections with e5 and every other section with ``embedding.model``
(MiniLM by default); a query is embedded by the model of its own language.

The vectors of two models must never be compared, so each model owns a block of the vector
(``blocks``): a section embedded by model *i* is its unit vector in block *i* and zeros
elsewhere, and a query embedded for model *i* has only block *i* filled. A cosine between a
query and a section of another model is then exactly 0, and within one model it is that
model's own cosine. One model_version (naming every model and its languages) keys them all,
so `embed` and its incremental sync work unchanged. The store keeps only the filled block of
each vector, one table per model (stores/routed.py): no zeros are stored or multiplied.

A query whose own model holds under a tenth of the chunks searched (an English question over
a vault of Japanese pages, where MiniLM holds only the few pages written mostly in English)
is answered by the multilingual model that holds more, and one whose model holds none by the
next model that has some: ``VectorRetriever`` asks ``route_order`` and the store's
``part_counts``. Which model a section gets is its page's language (``page_language``):
vectors/chunking.py's ``LanguageChunker`` cuts each page for its model's tokenizer and
limit, so English pages are chunked exactly as with MiniLM alone.
"""

from __future__ import annotations

import threading
from typing import Mapping, Sequence

import numpy as np

from .base import EmbeddingProvider, model_languages, model_version_of, script_language

DEFAULT = "*"        # the route of every language not named


class RoutedEmbeddings:
    """Several providers side by side, each for its languages (see the module docstring)."""

    def __init__(self, default: EmbeddingProvider,
                 by_language: Mapping[str, EmbeddingProvider], every_page: bool = False):
        members: list[EmbeddingProvider] = [default]
        for provider in by_language.values():
            if all(provider is not m for m in members):
                members.append(provider)
        self.members = tuple(members)
        self._route = {lang: members.index(p) for lang, p in by_language.items()}
        offsets = np.cumsum([0] + [m.dimension for m in members])
        self._blocks = [(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]
        self._lock = threading.Lock()
        # ``embedding.cross_lingual_vectors``: the first multilingual model routed to also
        # embeds every page of the other models (a second vector a section, chunking.py)
        multilingual = [i for i in range(1, len(members))
                        if model_languages(members[i]) is None]
        self.second_route: int | None = multilingual[0] if every_page and multilingual else None

    # -- identity ------------------------------------------------------------------------
    @property
    def model_version(self) -> str:
        """``local:routed(*=<model_version>,ja+zh=<model_version>):<dimension>``: every model and its
        languages (``*``: those not named); another routing is another model_version."""
        parts = []
        for i, member in enumerate(self.members):
            langs = [DEFAULT] * (i == 0) + sorted(k for k, v in self._route.items() if v == i)
            parts.append(f"{'+'.join(langs)}={member.model_version}")
        return model_version_of("local", f"routed({','.join(parts)})", self.dimension)

    @property
    def dimension(self) -> int:
        """The width of every block together."""
        return self._blocks[-1][1]

    @property
    def max_tokens(self) -> int:
        """The smallest member's chunk size: a chunk fits whichever model embeds it."""
        return min(m.max_tokens for m in self.members)

    @property
    def blocks(self) -> tuple[tuple[int, int], ...]:
        """Each model's (start, end) in the vector, in route order (stores/routed.py keeps
        only the block of a vector's own model)."""
        return tuple(self._blocks)

    @property
    def routes(self) -> int:
        """How many models (blocks) there are."""
        return len(self.members)

    # -- routing ---------------------------------------------------------------------------
    def route_of(self, language: str) -> int:
        """The block of the model that embeds ``language``."""
        return self._route.get(language, 0)

    def route_order(self, language: str) -> list[int]:
        """The blocks to try for a query in ``language``: its model first, then the others."""
        own = self.route_of(language)
        return [own] + [i for i in range(len(self.members)) if i != own]

    def member_languages(self, route: int) -> tuple[str, ...] | None:
        """The languages the model of ``route`` was trained for (None: multilingual)."""
        return model_languages(self.members[route])

    def route_name(self, route: int) -> str:
        """The model_version of the model of ``route``."""
        return self.members[route].model_version

    def warm(self) -> None:
        """Load the default model now (``warm_for``: a query's)."""
        self.warm_for("")

    def warm_for(self, query: str, language: str | None = None) -> None:
        """Load the model that embeds ``query`` (its ``language``'s, by default its
        script's; the default model's without one) now: a fresh process about to search
        calls this on a thread."""
        member = self.members[self.route_of(language or script_language(query))] \
            if query else self.members[0]
        warm = getattr(member, "warm", None)
        if warm is not None:
            warm()

    # -- embedding -------------------------------------------------------------------------
    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """The longest count any member gives (for a text whose model is not known)."""
        counts = [m.count_tokens(texts) for m in self.members]
        return [max(column) for column in zip(*counts)]

    def embed_documents(self, texts: Sequence[str],
                        routes: Sequence[int] | None = None) -> np.ndarray:
        """Each text by the model of ``routes`` (the sync passes its page's, from
        ``LanguageChunker``; -1 or none given: the text's own language), in its block."""
        routes = [r if r >= 0 else self.route_of(script_language(t))
                  for t, r in zip(texts, routes or [-1] * len(texts))]
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for route, member in enumerate(self.members):
            rows = [i for i, r in enumerate(routes) if r == route]
            if rows:
                start, end = self._blocks[route]
                out[rows, start:end] = member.embed_documents([texts[i] for i in rows])
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Each query by the model of its own language."""
        return np.vstack([self.embed_query_for(t, self.route_of(script_language(t)))
                          for t in texts]) \
            if texts else np.zeros((0, self.dimension), dtype=np.float32)

    def embed_query_for(self, query: str, route: int) -> np.ndarray:
        """``query`` embedded by the model of ``route``, in its block."""
        start, end = self._blocks[route]
        out = np.zeros((1, self.dimension), dtype=np.float32)
        out[0, start:end] = self.members[route].embed_queries([query])[0]
        return out
