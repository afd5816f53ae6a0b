"""Sections → chunks: the units that get embedded, each with its context and content hash.

A page's sections (lead text, H2/H3/H4; each holds only its own text, see page/model.py)
become chunks. Each chunk's text starts with its context, the page title and the heading path
("Sync > Set up > On iOS"), so a short section still says what it is about. A section
longer than the model's limit is split into parts that overlap by about an eighth of the
limit; parts are cut at word boundaries (each CJK ideograph counts as a word) and measured
with the model's own token counts (exact for the local model, an estimate for remote ones).

Chunk ids: the section id for the first part, "<section_id>~2", "~3"... for later parts.
The content hash covers everything stored about a chunk (its text and its scope), so an
unchanged chunk is never embedded twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..fsutil import sha256_text
from ..page.language import page_language
from ..page.links import replace_links
from ..page.markdown import replace_comments
from ..page.model import Page, Section
from ..providers.embedding.base import EmbeddingProvider
from ..stores.base import SECOND_VECTOR

TokenCounter = Callable[[Sequence[str]], list[int]]
SCOPES = frozenset({"personal", "team", "shared"})

# CJK ideographs: BERT-style tokenizers treat each one as a word of its own (kana and hangul
# are not split that way, so they stay inside the surrounding run).
_IDEOGRAPH = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
# A unit is one ideograph, or a run of anything else up to whitespace or an ideograph; a
# split between units is a word boundary for the tokenizer, so unit counts add up.
_UNIT = re.compile(rf"[{_IDEOGRAPH}]\s*|[^\s{_IDEOGRAPH}]+\s*")


@dataclass(frozen=True)
class Chunk:
    """One piece of a section, ready to embed."""

    page: str
    chunk_id: str
    section_id: str
    text: str            # exactly what is embedded: context line(s), blank line, body
    content_hash: str
    tokens: int          # length of ``text`` in the model's tokens (estimate for remote models)
    scope: str = ""
    route: int = -1      # with one model per language: the model that embeds it (else -1)


def clean_markdown(text: str) -> str:
    """Section text as a reader sees it: links reduced to their words, embeds and comments gone.

    URLs and link syntax would spend the model's few hundred tokens on noise.
    """
    text = replace_comments(text, lambda _: " ")
    text = replace_links(text, lambda target, heading, _block, alias:
                         alias or " ".join(part for part in (target, heading) if part))
    # Runs of spaces carry nothing for a tokenizer; collapsing them keeps hashes stable
    # against re-indentation.
    text = re.sub(r"[ \t]{2,}", " ", text)
    return re.sub(r"[ \t]+\n", "\n", text).strip()


def context_of(page: Page, section: Section) -> str:
    """"Title" or "Title\\nHeading > Sub-heading": what every chunk of the section starts with."""
    heading_path = " > ".join(section.path)
    return f"{page.title}\n{heading_path}" if heading_path else page.title


def scope_of(page: Page) -> str:
    """The page's scope from frontmatter ``scope:`` (personal/team/shared), else ""."""
    value = page.frontmatter.get("scope")
    return value.strip().lower() if isinstance(value, str) and \
        value.strip().lower() in SCOPES else ""


class Chunker:
    """Splits pages into chunks that fit ``max_tokens`` as measured by ``count_tokens``."""

    def __init__(self, count_tokens: TokenCounter, max_tokens: int,
                 overlap_tokens: int | None = None):
        if max_tokens < 16:
            raise ValueError("max_tokens must be at least 16")
        self.count_tokens = count_tokens
        self.max_tokens = max_tokens
        self.overlap_tokens = max_tokens // 8 if overlap_tokens is None else overlap_tokens

    def chunk_pages(self, pages: Iterable[Page]) -> Iterator[Chunk]:
        """Chunks of every page, page by page."""
        for page in pages:
            yield from self.chunk_page(page)

    def chunk_page(self, page: Page) -> list[Chunk]:
        """The chunks of one page, in section order."""
        scope = scope_of(page)
        pieces = [(s, context_of(page, s), clean_markdown(s.text)) for s in page.sections]
        pieces = [(s, ctx, body) for s, ctx, body in pieces if body]
        if not pieces:
            # A page of headings only still gets one vector, from its title and headings.
            headings = " · ".join(s.heading for s in page.sections if s.heading)
            title = page.title.strip()
            if not title and not headings:
                return []
            text = f"{title}\n\n{headings}" if headings else title
            return [self._chunk(page, "lead", "lead", text,
                                self.count_tokens([text])[0], scope)]
        texts = [f"{ctx}\n\n{body}" for _, ctx, body in pieces]
        counts = self.count_tokens(texts)
        chunks: list[Chunk] = []
        for (section, ctx, body), text, count in zip(pieces, texts, counts):
            if count <= self.max_tokens:
                chunks.append(self._chunk(page, section.id, section.id, text, count, scope))
                continue
            for part, (part_text, part_count) in enumerate(self._split(ctx, body), start=1):
                chunk_id = section.id if part == 1 else f"{section.id}~{part}"
                chunks.append(self._chunk(page, chunk_id, section.id, part_text, part_count,
                                          scope))
        return chunks

    def _chunk(self, page: Page, chunk_id: str, section_id: str, text: str, tokens: int,
               scope: str) -> Chunk:
        return Chunk(page.path, chunk_id, section_id, text, chunk_hash(text, scope), tokens,
                     scope)

    def _split(self, context: str, body: str) -> list[tuple[str, int]]:
        """Overlapping parts of ``body``, each with ``context`` in front, under the limit."""
        context_tokens = self.count_tokens([context])[0]
        # A very long title/heading path must not starve the body of room.
        budget = max(self.max_tokens - context_tokens, self.max_tokens // 2)
        units = self._units(body, budget)
        sizes = self.count_tokens(units)
        parts: list[tuple[str, int]] = []
        start = 0
        while start < len(units):
            end, used = start, 0
            while end < len(units) and (used + sizes[end] <= budget or end == start):
                used += sizes[end]
                end += 1
            text = f"{context}\n\n{''.join(units[start:end]).strip()}"
            parts.append((text, context_tokens + used))
            if end >= len(units):
                break
            # Step back over the last units worth about overlap_tokens, always moving forward.
            back, kept = end, 0
            while back - 1 > start and kept + sizes[back - 1] <= self.overlap_tokens:
                back -= 1
                kept += sizes[back]
            start = back
        return parts

    def _units(self, body: str, budget: int) -> list[str]:
        """Words (and CJK characters), with any single unit longer than the budget cut up."""
        units = _UNIT.findall(body)
        sizes = self.count_tokens(units)
        out: list[str] = []
        for unit, size in zip(units, sizes):
            if size <= budget:
                out.append(unit)
                continue
            # One enormous "word" (a URL, base64, a minified line): cut it by characters.
            width = max(1, len(unit) * budget // (2 * size))
            out.extend(unit[i:i + width] for i in range(0, len(unit), width))
        return out


def chunker_for(provider: EmbeddingProvider) -> "Chunker | LanguageChunker":
    """A Chunker sized for an embedding provider (its max_tokens and count_tokens); with one
    model per language (providers/embedding/routed.py), one per model."""
    if hasattr(provider, "route_of"):
        return LanguageChunker(provider)
    return Chunker(provider.count_tokens, provider.max_tokens)


def chunk_hash(text: str, scope: str, route: int = -1) -> str:
    """The content hash of a chunk: of everything stored about it (text and scope, and the
    model that embeds it when there is one per language)."""
    digest = sha256_text(f"{scope}\x00{text}")
    return digest if route < 0 else sha256_text(f"{route}:{digest}")


def hash_under_title(chunk: Chunk, title: str, old_title: str) -> str:
    """The hash ``chunk`` had on a page titled ``old_title`` (its text starts with the
    title of its page, ``title``): a renamed page's unchanged sections are told by it."""
    if not old_title or old_title == title or not chunk.text.startswith(title):
        return chunk.content_hash
    return chunk_hash(old_title + chunk.text[len(title):], chunk.scope, chunk.route)


class LanguageChunker:
    """One model per language: each page is cut for the model of its language (its
    tokenizer and limit) and its chunks say which model embeds them (``Chunk.route``), so a
    Japanese page's English code block is still embedded by the Japanese page's model.

    With ``embedding.cross_lingual_vectors`` (the provider's ``second_route``), a page of
    another model is also cut for the multilingual model, each chunk's id ending in
    ``SECOND_VECTOR``: a Japanese or Chinese question, embedded by that model, then meets
    English pages by its meaning (today's alternative, MiniLM's vectors of the question, is
    noise and weighed down). English questions keep MiniLM's: the two models' vectors are
    never compared (routed.py)."""

    def __init__(self, provider: Any):
        self.provider = provider
        self._chunkers = [Chunker(m.count_tokens, m.max_tokens) for m in provider.members]
        self.second = getattr(provider, "second_route", None)
        # the chunk memo's key (vectors/chunk_memo.py): turning the option on or off plans
        # every page again; off it stays 0, the key of the memos written before it
        self.memo_key: int | str = 0 if self.second is None else f"0|xl{self.second}"

    def chunk_pages(self, pages: Iterable[Page]) -> Iterator[Chunk]:
        """Chunks of every page, page by page."""
        for page in pages:
            yield from self.chunk_page(page)

    def chunk_page(self, page: Page) -> list[Chunk]:
        """The page's chunks, cut and routed by its language."""
        route = self.provider.route_of(page_language(page))
        # the model is part of the hash: a page that changes language is embedded anew
        chunks = [replace(c, route=route, content_hash=chunk_hash(c.text, c.scope, route))
                  for c in self._chunkers[route].chunk_page(page)]
        second = self.second
        if second is None or second == route or \
                self.provider.member_languages(route) is None:
            return chunks
        return chunks + [replace(c, chunk_id=c.chunk_id + SECOND_VECTOR, route=second,
                                 content_hash=chunk_hash(c.text, c.scope, second))
                         for c in self._chunkers[second].chunk_page(page)]
