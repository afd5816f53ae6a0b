"""How a concept evolved: every dated note that mentions it, in date order.

A concept is matched by the phrase itself and, when it names a wiki page, by that page's title
and aliases; on word boundaries for Latin script (with a plural/singular variant) and as a
plain substring in CJK text, which has no spaces. A raw note and the wiki page compiled from it
are one entry (the raw note, with the page attached).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from ..errors import InputError
from ..page.dates import note_dates
from ..page.history import git_history
from ..page.model import Page
from ..page.vault import Vault, load_vault

SNIPPET_RADIUS = 90


@dataclass(frozen=True)
class TimelineEntry:
    """One dated note that mentions the concept."""

    date: str
    date_source: str
    path: str
    folder: str          # "raw" or "wiki"
    title: str
    matched: str
    snippet: str
    page: str | None = None   # the wiki page compiled from this raw note, if any


@dataclass(frozen=True)
class Timeline:
    """The entries for a concept and the terms that were searched."""

    concept: str
    terms: tuple[str, ...]
    entries: tuple[TimelineEntry, ...]
    undated: int = 0     # notes that mention the concept but carry no real date

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"concept": self.concept, "terms": list(self.terms),
                "count": len(self.entries), "undated": self.undated,
                "entries": [asdict(e) for e in self.entries]}


def concept_terms(concept: str, vaults: Iterable[Vault]) -> list[str]:
    """The phrase, plus title and aliases of a page the phrase names (by title, alias or path)."""
    wanted = concept.strip().lower().removesuffix(".md")
    phrase = concept.strip()
    if phrase.lower().endswith(".md"):     # a path is not a phrase: "en/Plugins/Canvas.md"
        phrase = phrase[:-3].rsplit("/", 1)[-1]
    terms = [phrase]
    for vault in vaults:
        for page in vault.pages.values():
            names = [page.title, page.stem, *page.aliases]
            if wanted in (n.lower() for n in names) or wanted == page.path.lower().removesuffix(".md"):
                # path-like aliases ("Plugins/Canvas") are old addresses, not phrases in text
                terms.extend(n for n in (page.title, *page.aliases) if "/" not in n)
    seen: set[str] = set()
    unique = []
    for term in terms:
        if term and term.lower() not in seen:
            seen.add(term.lower())
            unique.append(term)
    return unique


def term_pattern(terms: list[str]) -> re.Pattern:
    """One regex for all terms: word boundaries around Latin ends, none around CJK ones.

    A term ending in a Latin letter also matches its simple plural or singular
    ("Bookmarks" finds "bookmark", "Canvas" finds "canvases", "library" finds "libraries"),
    so that the history of a feature is not split by grammar.
    """
    parts = []
    for term in sorted(terms, key=len, reverse=True):
        forms = _number_forms(term) if re.search(r"[A-Za-z]$", term) else [term]
        body = "|".join(re.escape(f).replace(r"\ ", r"\s+") for f in forms)
        start = r"(?<![A-Za-z0-9_])" if re.match(r"[A-Za-z0-9_]", term) else ""
        end = r"(?![A-Za-z0-9_])" if re.search(r"[A-Za-z0-9_]$", term) else ""
        parts.append(f"{start}(?:{body}){end}")
    return re.compile("|".join(parts), re.I)


def _number_forms(term: str) -> list[str]:
    """``term`` with its English simple singular and plural forms, longest first. A word
    ending in one "s" may be either ("bookmarks", "canvas"), so it gets both."""
    lower = term.lower()
    forms = {term}
    if lower.endswith("ies") and len(term) > 4:    # libraries → library, cookies → cookie
        forms.update((term[:-3] + "y", term[:-1]))
    elif lower.endswith("es") and lower[:-2].endswith(_SIBILANTS):
        forms.update((term[:-2], term[:-1]))      # canvases → canvas, databases → database
    else:
        if lower.endswith("s") and not lower.endswith("ss"):   # bookmarks → bookmark
            forms.add(term[:-1])
        if lower.endswith(_SIBILANTS):                          # canvas → canvases
            forms.add(term + "es")
        elif re.search(r"[^aeiou]y$", lower):                   # library → libraries
            forms.add(term[:-1] + "ies")
        else:
            forms.add(term + "s")
    return sorted(forms, key=lambda f: (-len(f), f))


_SIBILANTS = ("s", "x", "z", "ch", "sh")


def build_timeline(concept: str, folders: list[tuple[str, Path]], *,
                   since: dt.date | None = None, until: dt.date | None = None,
                   newest_first: bool = False, limit: int | None = None,
                   use_git: bool = True) -> Timeline:
    """The timeline of ``concept`` over the notes in ``folders`` ((label, path) pairs)."""
    vaults = [(label, load_vault(path)) for label, path in folders if Path(path).is_dir()]
    if since and until and since > until:
        raise InputError(f"since ({since}) is after until ({until}); swap them.")
    terms = concept_terms(concept, [v for _, v in vaults])
    if not any(re.search(r"\w", term) for term in terms):
        raise InputError(f"'{concept}' has no words to look for. Give a concept, e.g. a page "
                         f"title or a feature name.")
    pattern = term_pattern(terms)
    entries: list[TimelineEntry] = []
    compiled_from: dict[str, str] = {}
    for label, vault in vaults:
        if label == "wiki":
            for page in vault.pages.values():
                for source in _sources(page):
                    compiled_from[source] = page.path
    raw_seen: set[str] = set()
    undated = 0
    for label, vault in vaults:
        git = git_history(vault.root) if use_git else {}
        for path in sorted(vault.pages):
            page = vault.pages[path]
            if label == "wiki" and any(s in raw_seen for s in _sources(page)):
                continue
            match = pattern.search(page.body) or pattern.search(page.title)
            if not match:
                continue
            if label == "raw":
                raw_seen.add(path)
            when = note_dates(page.frontmatter, page.body, path, git.get(path))
            if when is None:
                undated += 1
                continue
            if (since and when.created < since) or (until and when.created > until):
                continue
            text = page.body if pattern.search(page.body) else page.title
            entries.append(TimelineEntry(
                date=when.created.isoformat(), date_source=when.source, path=path, folder=label,
                title=page.title, matched=match.group(0), snippet=_snippet(text, pattern),
                page=compiled_from.get(path) if label == "raw" else None))
    entries.sort(key=lambda e: (e.date, e.path), reverse=newest_first)
    if limit:
        entries = entries[:limit]
    return Timeline(concept, tuple(terms), tuple(entries), undated)


def _sources(page: Page) -> list[str]:
    """Raw paths a compiled wiki page records in its frontmatter ``sources``."""
    out = []
    for item in page.frontmatter.get("sources") or []:
        if isinstance(item, dict) and item.get("path"):
            out.append(str(item["path"]))
        elif isinstance(item, str):
            out.append(item)
    return out


def _snippet(text: str, pattern: re.Pattern) -> str:
    match = pattern.search(text)
    if not match:
        return ""
    start = max(0, match.start() - SNIPPET_RADIUS)
    end = min(len(text), match.end() + SNIPPET_RADIUS)
    before = re.sub(r"\s+", " ", text[start:match.start()]).lstrip()
    after = re.sub(r"\s+", " ", text[match.end():end]).rstrip()
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    return f"{prefix}{before}**{match.group(0)}**{after}{suffix}"
