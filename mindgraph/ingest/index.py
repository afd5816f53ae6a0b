"""The title index: which words in a note mention another page (by title, file name or alias).

Built from every raw note at the start of a run. Terms are matched case-insensitively at phrase
boundaries by one trie-shaped regex (fast over thousands of titles); Latin terms need a
non-letter on both sides, CJK terms match inside CJK text, which has no spaces (the linker then
keeps only mentions on word boundaries). A term shared
by several pages goes to the one nearest the mentioning note (longest shared folder prefix, as
Obsidian resolves links); if none is nearest, the term is ambiguous and never linked. A term
mentioned in more than half of all notes (at least GENERIC_MIN_NOTES of them) is the vault's
subject, not a topic ("Obsidian" in the Obsidian help): it is generic and never linked.
In a vault with pages in several languages (``page.language.prose_language`` of each note), a
term links only to pages in the mentioning note's language: the Chinese page 属性 has the alias
"YAML", and English notes that say YAML are not sent to it. A term whose only page is in
another language stays text as well: on the Obsidian Help vault 243 of the 245 such links from
Japanese and Chinese notes went to the English twin of a page they have in their own language.
A vault in one language links exactly as without languages.
"""

from __future__ import annotations

import copy
import functools
import posixpath
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Mapping

from ..fsutil import sha256_bytes, sha256_text
from ..page.resolve import LinkResolver, nearest_path
from ..text.cjk import CJK_RUN as _CJK_RUN

# A letter or digit that is not CJK: what must not touch a Latin term on either side.
_WORD = r"[^\W\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff00-\uffef]"
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
GENERIC_SHARE = 0.5
GENERIC_MIN_NOTES = 20

# Function words never linked on their own, even if some page is named that way.
_STOP_TERMS = frozenset("""a an and are as at be but by for from has have he her his how i if
in into is it its my no not of on or our she so than that the their them then there these they
this to too up us was we were what when where which who why will with you your about after
again all also any back because before both can could did do does down each even few get got
had here just like make many may more most much must new now off only other out over own same
see should some such take through under use very way well while would yes""".split())

# A longer title, name or alias is never linked where the text mentions it: the term regex is
# a trie nested one group per character, and a 5,000-character title (a note app's item, a
# pasted paragraph) made building it recurse past Python's limit and crash the whole ingest.
MAX_TERM_CHARS = 200


@dataclass(frozen=True)
class IndexEntry:
    """One page of the index: its wiki path, title and aliases."""

    path: str
    title: str
    aliases: tuple[str, ...] = ()
    language: str = ""      # prose_language of the note ("": not known, links anywhere)

    @property
    def stem(self) -> str:
        """File name without folder and extension."""
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name


def generic_row(path: str, sha256: str) -> str:
    """One counted note's row in ``TitleIndex.generic_of``."""
    return f"{path}\t{sha256}"


def generic_limit(notes: int) -> float:
    """A term found in more than this many of ``notes`` notes is generic."""
    return max(GENERIC_MIN_NOTES, GENERIC_SHARE * notes)


def latin_word_goes_on(char: str) -> bool:
    """True for a letter or digit that is not CJK: a mention cut short before it would end
    inside a Latin word (the linker never shortens a CJK mention to end there)."""
    return char.isalnum() and not _CJK_RUN.match(char)    # "" (the end): False


def usable_term(term: str) -> bool:
    """True for a term worth linking: long enough (not too long), not a bare number or a
    function word."""
    term = term.strip()
    if not term or len(term) > MAX_TERM_CHARS or term.lower() in _STOP_TERMS or not re.search(r"\w", term):
        return False
    if any(ch in term for ch in "[]|#^\n"):   # would break the [[link]] written around it
        return False
    if _CJK_RE.search(term):
        return len(term) >= 2
    return len(term) >= 3 and not re.fullmatch(r"[\d\s.,:/-]+", term)


class TitleIndex:
    """Terms (titles, file names, aliases) of every page, and how to link to each page."""

    def __init__(self, entries: Iterable[IndexEntry]):
        # Terms and resolver are built when first used: a run that compiles nothing needs
        # neither, only the digests (100,000 notes: seconds).
        self.entries = {e.path: e for e in sorted(entries, key=lambda e: e.path)}
        self.generic: frozenset[str] = frozenset()

    @cached_property
    def languages(self) -> dict[str, str]:
        """Each page's language, when the vault has pages in several languages (else empty:
        every page may link to every other, as in a vault without languages)."""
        found = {e.path: e.language for e in self.entries.values()}
        return found if len(set(found.values()) - {""}) > 1 else {}

    @cached_property
    def terms(self) -> dict[str, tuple[str, ...]]:
        """Every usable term (lower case) → the pages it names, sorted."""
        terms: dict[str, set[str]] = {}
        for entry in self.entries.values():
            for term in (entry.title, entry.stem, *entry.aliases):
                term = " ".join(str(term).split())
                if usable_term(term):
                    terms.setdefault(term.lower(), set()).add(entry.path)
        return {t: tuple(sorted(p)) for t, p in terms.items()}

    @cached_property
    def resolver(self) -> LinkResolver:
        """How a link text resolves among the index's pages."""
        return LinkResolver(self.entries)

    @cached_property
    def terms_digest(self) -> str:
        """SHA-256 of the term set and of this module's code (how mentions are scanned):
        mentions found with an equal digest are still valid."""
        return sha256_text(_code_digest() + "\n" + "\n".join(sorted(self.terms)))

    @cached_property
    def _rows(self) -> str:
        return "\n".join(f"{e.path}\t{e.title}\t" + "\t".join(e.aliases)
                         for e in self.entries.values())

    @cached_property
    def entries_digest(self) -> str:
        """SHA-256 of the pages' paths, titles and aliases and of this module's code: all
        the term set is made from."""
        return sha256_text(_code_digest() + "\n" + self._rows)

    def memo(self) -> dict[str, str]:
        """What the next run's ``recall`` needs: the terms digest of these entries."""
        return {"entries": self.entries_digest, "terms": self.terms_digest}

    def recall(self, memo: Mapping[str, str]) -> None:
        """Take the terms digest from ``memo`` (a previous ``memo()``) when it was found for
        the same entries, instead of building every term to find it again."""
        if memo.get("terms") and memo.get("entries") == self.entries_digest:
            self.__dict__["terms_digest"] = memo["terms"]

    def within(self, paths: set[str]) -> "TitleIndex":
        """A copy that links only to the pages in ``paths`` (a scoped note's link targets);
        generic terms stay those of the whole index, and so do the terms matched: a
        mention of a page out of reach is left as text, as a generic one is, and not
        matched as a shorter or overlapping term instead (which the scan, over every term,
        does not report, so a page added under that term would not relink the note)."""
        other = TitleIndex(e for p, e in self.entries.items() if p in paths)
        other.generic = self.generic
        other.__dict__["languages"] = self.languages    # the vault's, as the generic terms
        if self.pattern is not None:
            other.__dict__["pattern"] = self.pattern
        return other

    def with_generic(self, mentions: Iterable[Iterable[str]]) -> "TitleIndex":
        """A copy that treats terms found in too many notes as generic (never linked).

        ``mentions`` holds, per note, the terms found in it (see ``scan_mentions``).
        """
        df: Counter[str] = Counter()
        notes = 0
        for found in mentions:
            notes += 1
            df.update(set(found))
        limit = generic_limit(notes)
        return self.with_generic_terms(frozenset(t for t, n in df.items() if n > limit))

    def with_generic_recalled(self, memo: Mapping[str, str], notes: list[tuple[str, str]],
                              mentions: list[tuple[str, ...]]
                              ) -> tuple["TitleIndex", dict[str, str]]:
        """``with_generic(mentions)``, the mentions of ``notes`` ((raw path, content hash)
        each) scanned against this term set: the same notes with the same contents have the
        generic terms ``memo`` keeps from the last run (counting every mention again takes
        seconds at 100,000 notes). Also the memo to keep for the next run."""
        of = self.generic_of(notes)
        if memo.get("generic_of") == of and "generic" in memo:
            other = self.with_generic_terms(frozenset(filter(None, memo["generic"].split("\n"))))
        else:
            other = self.with_generic(mentions)
        return other, self.memo() | {"generic_of": of, "generic": "\n".join(sorted(other.generic))}

    def generic_of(self, notes: Iterable[tuple[str, str]]) -> str:
        """What the generic terms are found from: this term set and the notes counted ((raw
        path, content hash) each, in path order), as the memo's ``generic_of`` digest."""
        return self.generic_of_rows("\n".join(generic_row(p, h) for p, h in notes))

    def generic_of_rows(self, rows: str) -> str:
        """``generic_of`` from the notes' rows (``generic_row`` each) joined by newlines."""
        return sha256_text(_code_digest() + "\n" + self.terms_digest + "\n" + rows)

    def with_generic_terms(self, generic: frozenset[str]) -> "TitleIndex":
        """A copy whose generic terms are ``generic`` (found by ``with_generic``)."""
        other = copy.copy(self)
        other.generic = generic
        for derived in ("_term_bases", "digest"):   # they say which terms are generic
            other.__dict__.pop(derived, None)
        return other

    def scan_mentions(self, text: str) -> tuple[str, ...]:
        """The terms ``text`` mentions, sorted: every term the linker may link in it, and
        more (code, links and URLs are not masked).

        A run relinks only the notes whose mentions name a page that changed, so this must
        hold every term ``linker.find_mentions`` can match: the same matches (the linker
        matches lines as written and drops those it protects), and where a match touches
        CJK text, the shorter terms it starts with (the linker falls back to one when the
        match cuts a CJK word)."""
        found: set[str] = set()
        for match in self.mentions(text):
            found.add(match.group(0))
            start, end = match.span()
            if _CJK_RUN.match(text, start, start + 1) or _CJK_RUN.match(text, end - 1, end):
                found.update(self._shorter_terms(match.group(0)))
        return tuple(sorted({" ".join(term.split()).lower() for term in found}))

    def _shorter_terms(self, matched: str) -> tuple[str, ...]:
        """The shorter terms a mention written ``matched`` starts with, where the linker may
        end it (not inside a Latin word). They depend on those characters alone (the
        character before passed the pattern's lookbehind already; a shorter match ends
        where the linker's does, at the end of its search): found once per spelling."""
        cache = self._shorter_cache
        shorter = cache.get(matched)
        if shorter is None:
            pattern = self.pattern
            assert pattern is not None      # ``matched`` was matched by it
            shorter = cache[matched] = tuple(
                found.group(0) for stop in range(1, len(matched))
                if not latin_word_goes_on(matched[stop])
                and (found := pattern.fullmatch(matched, 0, stop)) is not None)
        return shorter

    @cached_property
    def _shorter_cache(self) -> dict[str, tuple[str, ...]]:
        return {}

    @cached_property
    def pattern(self) -> re.Pattern[str] | None:
        """One regex matching any term at phrase boundaries (longest term first)."""
        if not self.terms:
            return None
        # The lookahead for a term's first character first: most positions of a text fail it
        # in one step, instead of in the lookbehind and every branch of the trie (2x faster
        # over the Obsidian Help vault, the same matches).
        first = "".join(sorted({re.escape(t[0]) for t in self.terms}))
        return re.compile(rf"(?=[{first}])(?<!{_WORD})(?:{_trie_regex(self.terms)})(?!{_WORD})",
                          re.I)

    def mentions(self, text: str) -> list[re.Match[str]]:
        """Every term occurrence in ``text`` (no code or link masking: an over-estimate)."""
        return list(self.pattern.finditer(text)) if self.pattern is not None else []

    def target(self, term: str, source_path: str) -> str | None:
        """The page a term mentioned in ``source_path`` refers to; None if ambiguous/generic."""
        key = " ".join(term.split()).lower()
        if key in self.generic:
            return None
        paths = self.terms.get(key, ())
        if self.languages and paths:
            paths = self.in_language(paths, source_path)
        if len(paths) == 1:
            return paths[0]
        return nearest_path(paths, source_path) if paths else None

    def in_language(self, paths: tuple[str, ...], source_path: str) -> tuple[str, ...]:
        """The pages of ``paths`` in the language of ``source_path`` (all of them when its
        language or the vault's languages are not known)."""
        languages = self.languages
        language = languages.get(source_path, "")
        if not language:
            return paths
        return tuple(p for p in paths if languages.get(p, "") == language)

    def link_target(self, path: str, source_path: str) -> str:
        """The shortest link text that resolves to ``path`` from ``source_path``."""
        stem = self.entries[path].stem if path in self.entries else path.removesuffix(".md")
        if self.resolver.resolve_target(stem, source_path).target == path:
            return stem
        return path.removesuffix(".md")

    def links_digest(self, mentions: Iterable[str], source_path: str) -> str:
        """Digest of what the links added to a page can depend on, given its mentions.

        A page compiled offline needs recompiling only when this changes: when a page whose
        title or alias the note mentions appears, disappears, moves or becomes generic.
        """
        parts = []
        for term in sorted(set(mentions)):
            target = self.target(term, source_path)
            if target is None or target == source_path:
                parts.append(f"{term}\t-")
            else:
                parts.append(f"{term}\t{target}\t{self.link_target(target, source_path)}")
        return sha256_text("\n".join(parts))


    @cached_property
    def digest(self) -> str:
        """SHA-256 of everything any links digest over this index reads (its pages' paths,
        titles and aliases, and the generic terms): while it is equal, so is every note's."""
        rows = self._rows + "\n" if self.entries else ""
        languages = "".join(f"{p}\t{lang}\n" for p, lang in self.languages.items())
        return sha256_text(rows + languages + "\t".join(sorted(self.generic)))[:32]   # short

    def links_basis(self, mentions: Iterable[str], source_path: str) -> str:
        """A digest of everything ``links_digest(mentions, source_path)`` reads, cheap to
        compute: per mentioned term whether it is generic, the pages it names and, per page,
        every page its link text could resolve to (those sharing its file name), and in a vault
        of several languages the languages of the note and of those pages. While it is equal
        the links digest is too, so an unchanged note's digest is not recomputed."""
        bases = self._term_bases
        parts = [source_path]
        if self.languages:
            parts.append("@" + self.languages.get(source_path, ""))
        for term in sorted(set(mentions)):
            basis = bases.get(term)
            if basis is None:
                basis = bases[term] = self._term_basis(term)
            parts.append(basis)
        return sha256_text("\n".join(parts))[:32]

    @cached_property
    def _term_bases(self) -> dict[str, str]:
        return {}

    def _term_basis(self, term: str) -> str:
        return sha256_text(self._term_rows(term))[:20]     # short: a note joins many

    def _term_rows(self, term: str) -> str:
        key = " ".join(term.split()).lower()
        if key in self.generic:
            return f"{term}\t!"
        rows = [term]
        for path in self.terms.get(key, ()):
            stem = self.entries[path].stem if path in self.entries else path
            # the keys LinkResolver.resolve_target looks the link text up by
            name = posixpath.normpath(stem.strip().replace("\\", "/").lstrip("/") or ".").lower()
            names = sorted({stem.lower(), name, name.removesuffix(".md")})
            language = f"@{self.languages.get(path, '')}" if self.languages else ""
            rows.append(path + language + "="
                        + ";".join(",".join(self.resolver.named(n)) for n in names))
        return "\t".join(rows)


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """SHA-256 of this module's source: new term rules find the terms again."""
    try:
        return sha256_bytes(Path(__file__).read_bytes())
    except OSError:
        return ""


def _trie_regex(words: Iterable[str]) -> str:
    """A regex alternation shaped as a trie: fast even for thousands of words."""
    trie: dict = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict) -> str:
        if list(node) == [""]:
            return ""
        optional = "" in node
        # Longer continuations are tried before ending here, so the longest term wins.
        branches = [re.escape(ch) + build(node[ch]) for ch in sorted(k for k in node if k)]
        body = branches[0] if len(branches) == 1 and not optional else \
            "(?:" + "|".join(branches) + ")"
        if optional:
            body = (body if body.startswith("(?:") else f"(?:{body})") + "?"
        return body

    return build(trie)
