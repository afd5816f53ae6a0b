"""Semantic coverage links: a unit whose docstrings read like a wiki section is covered by it.

A unit's text is what its docstrings say: the module docstring, then one entry per public
symbol, its name split into words with the first paragraph of its docstring. A unit with no
docstring at all has no text and never gets a semantic link: names alone are the mention
matcher's job (mentions.py). The path is left out for the same reason, and so is an entry
repeated word for word in several units (boilerplate such as every command's ``register``).

The text is embedded as a *query* and compared with the wiki's stored section vectors. The
sections were stored as documents, and the question asked is a retrieval question ("which
section describes this code?"): asymmetric models (Gemini's RETRIEVAL_QUERY against
RETRIEVAL_DOCUMENT) are trained to score exactly that pair, while symmetric ones (MiniLM,
OpenAI, hashing) embed both sides alike, so nothing is lost there. The store is asked with the
provider's ``model_version``, so vectors of two models are never compared.

A text longer than the model's limit is cut at entry boundaries into pieces that each fit
(rather than letting the model silently drop the tail); a section's similarity to the unit is
its best over the pieces.

Each model has its own cosine scale, so the threshold is per model unless one is given
(``--semantic-threshold``): MiniLM's measured 0.7, the others' from
providers/embedding/cutoffs.py. Under ``embedding.languages`` (one model per language) the
text is embedded by each model that holds sections among the pages asked, and each model's
hits are held to that model's threshold: a wiki of Japanese or Chinese pages only is searched
by their model (use-multilingual-v3 or e5, both multilingual), not by MiniLM's, which has no
vectors there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from ..providers.embedding.base import EmbeddingProvider
from ..providers.embedding.cutoffs import SEMANTIC_CUTOFFS, members, per_member
from ..stores.base import VectorStore, is_second_vector
from .units import Unit

# Measured with the local MiniLM model on this repository's package against its architecture
# notes, as written and with every name removed (bench/semantic_threshold.py): the lowest
# cosine at which at least 9 in 10 semantic links point to a page that describes the module.
# Lower cut-offs link every CLI command to the overview page. Other models have other cosine
# scales: theirs are SEMANTIC_CUTOFFS (providers/embedding/cutoffs.py).
DEFAULT_THRESHOLD = 0.7
# An entry repeated word for word in this many units ("register: Add this command to the CLI
# group.") is boilerplate: it would pull every such unit towards whatever section describes
# the common frame, so it is left out.
BOILERPLATE_UNITS = 3
MAX_LINKS = 5            # per unit, best first: enough to judge, short enough to read
CANDIDATES = 50          # chunks asked of the store per piece before the threshold cut

SemanticLink = tuple[str, str, float]          # (page, section id, cosine similarity)


@dataclass(frozen=True)
class SemanticLinks:
    """The semantic links of every unit with docstrings, and what they were measured with."""

    model_version: str
    threshold: float                           # the (default) model's
    links: dict[str, list[SemanticLink]]       # unit id → links at or above the threshold
    units_with_text: int                       # units that had docstrings to compare
    pages_not_embedded: tuple[str, ...] = ()   # wiki pages with no stored vector of the model
    # each model's threshold when the provider routes languages to several models
    thresholds: dict[str, float] = field(default_factory=dict)

    @property
    def notes(self) -> tuple[str, ...]:
        """Warnings for the report: pages the semantic links could not see."""
        missing = self.pages_not_embedded
        if not missing:
            return ()
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3
                                          else "")
        note = (f"{len(missing)} wiki pages have no vectors of {self.model_version} ({shown}); "
                f"run `mindgraph embed` so that semantic links can find them.")
        return (note,)


def words_of(name: str) -> str:
    """An identifier as words: ``parse_page`` → "parse page", ``LinkResolver`` → "Link Resolver"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return " ".join(spaced.replace("_", " ").split())


def first_paragraph(docstring: str) -> str:
    """The docstring up to its first blank line, on one line."""
    return " ".join(docstring.strip().split("\n\n", 1)[0].split())


def unit_entries(unit: Unit, common: Collection[str] = ()) -> list[str]:
    """The pieces of text a unit says about itself, less ``common`` ones; [] without docstrings.

    A unit has text only when a docstring of its own (not one of the ``common`` entries)
    remains: symbol names alone never make a semantic link."""
    entries = [" ".join(unit.docstring.split())] if unit.docstring.strip() else []
    documented = bool(entries) and entries[0] not in common
    for symbol in unit.symbols:
        summary = first_paragraph(symbol.docstring)
        entry = f"{words_of(symbol.name)}: {summary}" if summary else words_of(symbol.name)
        entries.append(entry)
        documented = documented or (bool(summary) and entry not in common)
    return [e for e in entries if e not in common] if documented else []


def common_entries(units: list[Unit], at_least: int) -> set[str]:
    """Entries found in ``at_least`` units or more: boilerplate that tells no unit apart."""
    counts = Counter(e for unit in units for e in set(unit_entries(unit)))
    return {entry for entry, n in counts.items() if n >= at_least}


def pack(entries: list[str], lengths: list[int], limit: int) -> list[str]:
    """Join consecutive entries into texts of at most ``limit`` tokens (one entry may exceed it)."""
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for entry, length in zip(entries, lengths):
        if current and used + length + 1 > limit:
            pieces.append("\n".join(current))
            current, used = [], 0
        current.append(entry)
        used += length + 1       # the newline between entries costs about one token
    if current:
        pieces.append("\n".join(current))
    return pieces


def unit_texts(units: list[Unit], provider: EmbeddingProvider) -> list[tuple[str, str]]:
    """(unit id, text) pairs to embed: each documented unit's entries, packed to fit the model."""
    common = common_entries(units, BOILERPLATE_UNITS)
    texts: list[tuple[str, str]] = []
    for unit in units:
        entries = unit_entries(unit, common)
        if entries:
            texts += [(unit.id, piece) for piece in
                      pack(entries, provider.count_tokens(entries), provider.max_tokens)]
    return texts


def section_scores(texts: list[tuple[str, str]], provider: EmbeddingProvider,
                   store: VectorStore, *, threshold: float | Mapping[str, float] = -1.0,
                   k: int = CANDIDATES, pages: Collection[str] | None = None
                   ) -> dict[str, dict[tuple[str, str], float]]:
    """unit id → (page, section id) → best cosine over the unit's texts, at least ``threshold``
    (a number, or each model's: model_version → cut-off, ``thresholds``).

    Only the ``k`` nearest chunks of each text are looked at, of ``pages`` when given; under
    one model per language, by every model with sections there (see the module docstring)."""
    model = provider.model_version
    if getattr(provider, "second_route", None) is not None:
        k *= 2       # the second vectors (embedding.cross_lingual_vectors) are left out below
    best: dict[str, dict[tuple[str, str], float]] = {}
    for route, vectors in _route_vectors(texts, provider, store, pages):
        cut = threshold if isinstance(threshold, (int, float)) else \
            threshold[members(provider)[route]]
        for (owner, _), vector in zip(texts, vectors):
            found = best.setdefault(owner, {})
            for hit in store.query(vector, k, model, pages=pages):
                if hit.score < cut:
                    break        # hits come best first
                if is_second_vector(hit.chunk_id):
                    continue     # the page's own model's vector speaks for it
                key = (hit.page, hit.section_id)
                found[key] = max(found.get(key, -1.0), float(hit.score))
    return best


def _route_vectors(texts: list[tuple[str, str]], provider: EmbeddingProvider,
                   store: VectorStore, pages: Collection[str] | None
                   ) -> list[tuple[int, np.ndarray]]:
    """(route, the texts' query vectors by its model) for each model to search: the provider's
    one, or under one model per language each model that holds vectors among ``pages``."""
    if not texts:
        return []
    if getattr(provider, "route_order", None) is None:
        return [(0, np.asarray(provider.embed_queries([text for _, text in texts])))]
    counts = getattr(store, "part_counts", None)     # each model's chunks among the pages
    held = None if counts is None else counts(provider.model_version, pages=pages)
    out = []
    for route in range(provider.routes):
        if held is not None and not held[route]:
            continue
        first = provider.embed_query_for(texts[0][1], route)
        if held is None:
            # an older, wide layout does not count: probe it (another model's sections score 0)
            probe = store.query(first, 1, provider.model_version, pages=pages)
            if not probe or float(probe[0].score) == 0.0:
                continue
        rest = [provider.embed_query_for(text, route) for _, text in texts[1:]]
        out.append((route, np.vstack([first, *rest])))
    return out


def thresholds(provider: EmbeddingProvider, given: float | None = None) -> dict[str, float]:
    """Each model of ``provider`` → its threshold: ``given`` for every one, else the measured
    defaults (MiniLM's ``DEFAULT_THRESHOLD``, ``SEMANTIC_CUTOFFS`` for the others)."""
    if given is not None:
        return {name: float(given) for name in members(provider)}
    return {name: float(v) for name, v in
            per_member(provider, SEMANTIC_CUTOFFS, DEFAULT_THRESHOLD).items()}


def find_semantic_links(units: list[Unit], provider: EmbeddingProvider, store: VectorStore,
                        threshold: float | None = None, *,
                        pages: Collection[str] | None = None) -> SemanticLinks:
    """Sections of ``pages`` (all stored pages when None) that are close to each unit's text,
    at ``threshold`` (None: each model's default)."""
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"Semantic threshold {threshold} is outside 0..1; pass a cosine "
                          f"similarity such as {DEFAULT_THRESHOLD}.")
    cuts = thresholds(provider, threshold)
    model = provider.model_version
    stored = set(store.hashes(model))
    if not stored:
        raise ConfigError(_not_embedded_message(model, store))
    wanted = stored if pages is None else set(pages) & stored
    missing = tuple(sorted(set(pages) - stored)) if pages is not None else ()
    texts = unit_texts(units, provider)
    scores: dict[str, dict[tuple[str, str], float]] = {}
    if texts and wanted:
        # Ask only about current pages when the store still holds deleted ones.
        scores = section_scores(texts, provider, store, threshold=cuts,
                                pages=None if wanted == stored else wanted)
    links = {unit_id: [(page, section, score) for (page, section), score in
                       sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))][:MAX_LINKS]
             for unit_id, found in scores.items() if found}
    return SemanticLinks(model, next(iter(cuts.values())), links, len({u for u, _ in texts}),
                         missing, cuts if len(cuts) > 1 else {})


def _not_embedded_message(model: str, store: VectorStore) -> str:
    damaged = [r for r in store.repairs() if model in r]     # a damaged file reads as empty
    if damaged:
        return "; ".join(damaged) + ", then run `mindgraph coverage --semantic` again."
    others = store.model_versions()
    if others:
        return (f"{store.description} holds no vectors of {model} (the configured embedding "
                f"model) but has vectors of {', '.join(sorted(others))}. Run `mindgraph embed` "
                f"to embed the wiki with {model}, or set embedding.provider back to the model "
                f"you embedded with; vectors of different models are never compared.")
    return (f"{store.description} holds no vectors of {model}: the wiki has not been embedded. "
            f"Run `mindgraph embed` first, then `mindgraph coverage --semantic` again.")
