"""How a concept evolved: every dated note that mentions it, in date order.

When the concept names a page (by title, file name, alias or path) the timeline follows that
page: notes that use its title or aliases as names — "Canvas" the feature, not "canvas
rendering"; "Bases", not "base filename" (see ``name_pattern``) — and notes that link to it.
Once a dated note has named it, later notes count in any case too ("canvas cards"): the word
now means the feature; before that it was a common word. Code is not prose (`Workspace.on()`
is an API). Notes without a real date are counted, never placed by their file time. A phrase
that names no page is matched in every form: any case, simple plurals. Latin words
match on word boundaries, CJK text as a substring (it has no spaces). A raw note and the wiki
page compiled from it are one entry (the raw note, with the page attached); the wiki page's
own links were added by the compiler, so they are not evidence.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import InputError
from ..fsutil import writable
from ..ingest.normalise import code_mask
from ..page.dates import note_dates
from ..page.history import git_history
from ..page.html_words import html_words
from ..page.links import replace_links
from ..page.model import Page
from ..page.rawlines import source_paths
from ..page.cache import open_pages
from ..page.vault import PageLimits, Vault, load_vault

SNIPPET_RADIUS = 90
# the markup a snippet leaves out (_as_read), and where the match sits while it does
_HEADING_MARK = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+")
_CALLOUT_MARK = re.compile(r"(?m)^[ \t]*>[ \t]*\[![^\]\n]*\][+-]?")
_QUOTE_MARK = re.compile(r"(?m)^[ \t]*(?:>[ \t]?)+")
_OPEN, _CLOSE = "\x02", "\x03"
_LINK_REACH = 200           # how far a snippet's edge moves to take a link whole
_TAG_START = re.compile(r"</?[A-Za-z]")


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
    total: int = 0       # dated notes that mention it (in since/until), before the limit

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"concept": self.concept, "terms": list(self.terms),
                "count": len(self.entries), "total": self.total, "undated": self.undated,
                "entries": [asdict(e) for e in self.entries]}


@dataclass(frozen=True)
class Concept:
    """What a timeline looks for: the names shown, their pattern, and the pages they name."""

    terms: tuple[str, ...]
    pattern: re.Pattern
    pages: frozenset[str]      # vault paths of the pages the concept names: links to them count
    # once the notes have named the concept, its names in any case ("canvas cards" after
    # "Introducing the Canvas core plugin"); None for a free phrase, matched in any case anyway
    once_named: re.Pattern | None = None


def find_concept(concept: str, vaults: Iterable[Vault]) -> Concept:
    """The concept's page(s) and names, or the phrase itself when it names no page.

    A page is named by its title, file name, an alias or its path. Its names are then its
    title, its aliases that are names (capitalised: "Bases", "Web viewer", not "metadata" or
    "front matter", which are other words for the topic) and the alias the phrase was, matched
    as names (see ``name_pattern``). A phrase that names no page is matched in every form."""
    wanted = concept.strip().lower().removesuffix(".md")
    phrase = concept.strip()
    if phrase.lower().endswith(".md"):     # a path is not a phrase: "en/Plugins/Canvas.md"
        phrase = phrase[:-3].rsplit("/", 1)[-1]
    names: list[str] = []
    pages: set[str] = set()
    for vault in vaults:
        for page in vault.pages.values():
            given = [page.title, page.stem, *page.aliases]
            if wanted in (n.lower() for n in given) or wanted == page.path.lower().removesuffix(".md"):
                pages.add(page.path)
                # path-like aliases ("Plugins/Canvas") are old addresses, not phrases in text
                names.append(page.title)
                names.extend(a for a in page.aliases if "/" not in a
                             and (a != a.lower() or a.lower() == wanted))
    if not names:
        terms = _unique([phrase])
        return Concept(tuple(terms), term_pattern(terms), frozenset())
    terms = _unique(names)
    return Concept(tuple(terms), name_pattern(terms), frozenset(pages),
                   name_pattern(terms, any_case=True))


def _unique(terms: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    unique = []
    for term in terms:
        if term and term.lower() not in seen:
            seen.add(term.lower())
            unique.append(term)
    return unique


def name_pattern(names: list[str], any_case: bool = False) -> re.Pattern:
    """One regex for a page's names, matched as names, not as the common words they may be.

    A name keeps its capital ("Canvas" is the feature, "the canvas" or "canvas rendering" is
    not; "Bases" never finds "base filename"; "Outgoing links" is not the graph's "outgoing
    links"), the rest in any case ("File Recovery"), with its plural or singular ("Bookmark
    groups"). A name written in lowercase matches only itself. CJK names as substrings.
    ``any_case``: in any case, a one-word name only as spelled ("canvas", "properties"; not
    "property" or "workspace", which stay common words)."""
    parts = []
    for name in sorted(names, key=len, reverse=True):
        if not re.search(r"[A-Za-z]", name):
            parts.append(re.escape(name))      # CJK: no word boundaries, no case
            continue
        several = bool(re.search(r"\s", name.strip()))
        forms = _number_forms(name) if re.search(r"[A-Za-z]$", name) else [name]
        if any_case:
            body = "(?i:" + "|".join(_phrase(f) for f in (forms if several else [name])) + ")"
        elif name[:1].isupper():
            body = "|".join(re.escape(f[0]) + "(?i:" + _phrase(f[1:]) + ")" for f in forms)
        else:
            body = _phrase(name)
        parts.append(_bounded(name, body))
    return re.compile("|".join(parts))


def _phrase(form: str) -> str:
    return re.escape(form).replace(r"\ ", r"\s+")


def _bounded(term: str, body: str) -> str:
    start = r"(?<![A-Za-z0-9_])" if re.match(r"[A-Za-z0-9_]", term) else ""
    end = r"(?![A-Za-z0-9_])" if re.search(r"[A-Za-z0-9_]$", term) else ""
    return f"{start}(?:{body}){end}"


def term_pattern(terms: list[str]) -> re.Pattern:
    """One regex for a free phrase in every form: word boundaries around Latin ends, none
    around CJK ones, any case.

    A term ending in a Latin letter also matches its simple plural or singular
    ("Bookmarks" finds "bookmark", "Canvas" finds "canvases", "library" finds "libraries"),
    so that the history of a feature is not split by grammar.
    """
    parts = []
    for term in sorted(terms, key=len, reverse=True):
        forms = _number_forms(term) if re.search(r"[A-Za-z]$", term) else [term]
        parts.append(_bounded(term, "|".join(_phrase(f) for f in forms)))
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


def _walk_order(path: str) -> list[tuple[int, str]]:
    """Sort key of os.walk with sorted names: a folder's files (0) before its folders (1)."""
    *folders, name = path.split("/")
    return [(1, folder) for folder in folders] + [(0, name)]


def _pages(label: str, folder: Path, state_dir: Path | None, limits: PageLimits) -> Vault:
    """The parsed pages of ``folder``: from its page cache in ``state_dir`` when given (the
    wiki's is the one every command shares; other folders get "<label>-pages.pickle")."""
    if state_dir is None:
        return load_vault(folder, limits)
    name = "pages.pickle" if label == "wiki" else f"{label}-pages.pickle"
    cache, _ = open_pages(folder, state_dir, limits=limits, cache_name=name,
                          save=writable(state_dir))    # read-only: in memory
    # in load_vault's order (a folder's files before its sub-folders'): the concept's names
    # are listed in the order their pages are found
    ordered = sorted(cache.pages, key=_walk_order)
    return Vault(folder, {path: cache.pages[path] for path in ordered}, cache.problems)


def check_window(since: dt.date | None, until: dt.date | None) -> None:
    """Refuse a window that ends before it starts (InputError: a 400 over REST, before the
    request waits for the slow lane; exit 2 in the CLI)."""
    if since and until and since > until:
        raise InputError(f"since ({since}) is after until ({until}); swap them.")


def build_timeline(concept: str, folders: list[tuple[str, Path]], *,
                   since: dt.date | None = None, until: dt.date | None = None,
                   newest_first: bool = False, limit: int | None = None,
                   use_git: bool = True, limits: PageLimits = PageLimits(),
                   state_dir: Path | None = None,
                   visible: Callable[[str, Page], bool] | None = None) -> Timeline:
    """The timeline of ``concept`` over the notes in ``folders`` ((label, path) pairs);
    only the notes ``visible(label, page)`` accepts, when given (a scoped view).

    With ``state_dir``, each folder's parsed pages come from its page cache there (only
    changed files are parsed: parsing every note's YAML was 3/4 of the time of a timeline).
    """
    check_window(since, until)      # before reading a note: a backwards window is an error
    vaults = [(label, _pages(label, Path(path), state_dir, limits)) for label, path in folders
              if Path(path).is_dir()]
    if visible is not None:
        vaults = [(label, Vault(v.root, {p: page for p, page in v.pages.items()
                                         if visible(label, page)})) for label, v in vaults]
    found = find_concept(concept, [v for _, v in vaults])
    if not any(re.search(r"\w", term) for term in found.terms):
        raise InputError(f"'{concept}' has no words to look for. Give a concept, e.g. a page "
                         f"title or a feature name.")
    entries: list[TimelineEntry] = []
    compiled_from: dict[str, str] = {}
    raw_paths: set[str] = set()
    for label, vault in vaults:
        if label == "wiki":
            for page in vault.pages.values():
                for source in _sources(page):
                    compiled_from[source] = page.path
        elif label == "raw":
            raw_paths.update(vault.pages)
    seen: list[tuple[str, str, Page, Any, bool, tuple[str, str]]] = []
    undated = 0
    for label, vault in vaults:
        git = git_history(vault.root) if use_git else {}
        for path in sorted(vault.pages):
            page = vault.pages[path]
            if label == "wiki" and any(s in raw_paths for s in _sources(page)):
                continue     # the raw note speaks for it (its links were added by the compiler)
            mention = _mention(page, vault, found.pattern, found.pages)
            named = mention is not None
            if mention is None and found.once_named is not None:
                mention = _mention(page, vault, found.once_named, frozenset())
            if mention is None:
                continue
            when = note_dates(page.frontmatter, page.body, path, git.get(path))
            if when is None:
                undated += 1
                continue
            seen.append((label, path, page, when, named, mention))
    first_named = min((when.created for *_, when, named, _ in seen if named), default=None)
    for label, path, page, when, named, mention in seen:
        if not named and (first_named is None or when.created < first_named):
            continue     # a common word before the notes ever named the concept
        if (since and when.created < since) or (until and when.created > until):
            continue
        entries.append(TimelineEntry(
            date=when.created.isoformat(), date_source=when.source, path=path, folder=label,
            title=page.title, matched=mention[0], snippet=mention[1],
            page=compiled_from.get(path) if label == "raw" else None))
    entries.sort(key=lambda e: (e.date, e.path), reverse=newest_first)
    total = len(entries)
    if limit:
        entries = entries[:limit]
    return Timeline(concept, found.terms, tuple(entries), undated, total)


def _mention(page: Page, vault: Vault, pattern: re.Pattern, targets: frozenset[str]
             ) -> tuple[str, str] | None:
    """(what matched, snippet) where ``page`` matches ``pattern`` or links to ``targets``."""
    for text in (page.body, page.title):
        match = pattern.search(_prose(text))
        if match:
            return text[match.start():match.end()], _snippet(text, match)
    if targets:
        lines = page.body.split("\n")
        for link in page.page_links:
            if vault.resolve(link, page.path).target in targets:
                at = link.line - page.body_line
                line = lines[at].strip() if 0 <= at < len(lines) else ""
                return link.alias or link.target, line[:2 * SNIPPET_RADIUS]
    return None


def _sources(page: Page) -> list[str]:
    """Raw paths a compiled wiki page records in its provenance (or old ``sources``)."""
    return source_paths(page.frontmatter)


def _snippet(text: str, match: re.Match) -> str:
    """The text around ``match`` with the match in bold, unless the note has it in bold
    already (``**Canvas**`` became ``****Canvas****``, and a match inside a bold phrase
    closed and reopened the note's own bold)."""
    start, end = _whole_links(text, max(0, match.start() - SNIPPET_RADIUS),
                              min(len(text), match.end() + SNIPPET_RADIUS))
    start, end = _whole_tags(text, start, end, match.start(), match.end())
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    mark = "" if _in_bold(text, match.start(), match.end()) else "**"
    window = (text[start:match.start()] + _OPEN + text[match.start():match.end()] + _CLOSE
              + text[match.end():end])
    shown = _as_read(window)
    if shown.count(_OPEN) != 1 or shown.count(_CLOSE) != 1:
        shown = window              # the match was a link's target its alias hides
    shown = re.sub(r"\s+", " ", shown).strip()
    return f"{prefix}{shown.replace(_OPEN, mark).replace(_CLOSE, mark)}{suffix}"


def _whole_links(text: str, start: int, end: int) -> tuple[int, int]:
    """``start``/``end`` moved out of a wikilink or embed they cut (``![[pil…``), by at most
    a link's length, so the snippet shows the link's words, not half its markup."""
    opened = text.rfind("[[", start, end)
    if opened >= 0 and text.find("]]", opened, end) < 0:
        closed = text.find("]]", end, end + _LINK_REACH)
        end = closed + 2 if closed >= 0 else end
    closed = text.find("]]", start, end)
    if closed >= 0 and text.find("[[", start, closed) < 0:
        opened = text.rfind("[[", max(0, start - _LINK_REACH), start)
        start = opened - (opened > 0 and text[opened - 1] == "!") if opened >= 0 else start
    return start, end


def _whole_tags(text: str, start: int, end: int, first: int, last: int) -> tuple[int, int]:
    """``start``/``end`` moved off an HTML tag they cut (``<img alt="…``), to leave it out
    (a whole tag leaves its words: _as_read); never into the match (``first``-``last``)."""
    opened = text.rfind("<", start, end)
    if opened >= last and _TAG_START.match(text, opened) and text.find(">", opened, end) < 0:
        end = opened
    opened = text.rfind("<", 0, start)
    if opened >= 0 and _TAG_START.match(text, opened) and text.rfind(">", opened, start) < 0:
        closed = text.find(">", start, first)
        start = closed + 1 if closed >= 0 else start
    return start, end


def _as_read(text: str) -> str:
    """A note's lines without the markup a reader does not see: ``[[Garden]]`` is Garden,
    ``# Title`` is Title, a callout's ``> [!tip]-`` and a quote's ``>`` go, an embed goes,
    raw HTML leaves its words (``<small>Released May 5</small>``, an image its alt)."""
    text = html_words(replace_links(text, lambda target, heading, _block, alias:
                                    alias or target or heading or ""))
    text = _CALLOUT_MARK.sub("", text)
    text = _QUOTE_MARK.sub("", text)
    return _HEADING_MARK.sub("", text)


def _in_bold(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` lies inside a bold span of its line (``**…**``,
    ``__…__``)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    return any(bold.start() <= start and end <= bold.end()
               for bold in _BOLD_RE.finditer(text, line_start, line_end))


def _prose(text: str) -> str:
    """``text`` with code blanked out (same length): `Workspace.onLayoutReady()` is an API
    name, not the Workspaces feature."""
    lines = text.split("\n")
    kept = [" " * len(line) if code else line for line, code in zip(lines, code_mask(lines))]
    return _INLINE_CODE_RE.sub(lambda m: " " * len(m.group(0)), "\n".join(kept))


_INLINE_CODE_RE = re.compile(r"(`+)[^`\n]+?\1")
_BOLD_RE = re.compile(r"(\*\*|__)(?=\S)(?:(?!\1).)+?(?<=\S)\1")
