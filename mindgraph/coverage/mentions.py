"""Find where the wiki refers to code units, on identifier boundaries.

The wiki's text is cut into maximal identifier-like tokens (``mindgraph/page/parse.py``,
``mindgraph.page.parse``, ``parse_page``); a token refers to a unit when one of its
separator-aligned parts equals one of the unit's *forms*. A word is never matched inside a
longer word: a module ``api`` is not mentioned by "capital".

Strong forms count anywhere (prose, code, links): the relative path with or without its
extension and its folder-aligned suffixes, the file name with extension, the dotted module name
and its suffixes of two or more parts, and distinctive symbol names (``parse_page``,
``LinkResolver``); a service (top-level folder) has the forms of its modules too. Weak forms — the bare module name (``parse``) and plain symbol names
(``Vault``) — are too common as words, so they count only in code spans, code blocks and links,
and only on a page that also names the codebase by a strong form (a wiki about something else
writes `Example`, [[apps]] or `read` about its own things: calibrate/recency_fit.py's class
``Example`` is not covered by a help page's "[[Example]]"). A weak form that the wiki uses as
a plain word in its prose on many pages (``COMMON_SHARE`` of them, ``COMMON_PAGES`` at least)
is an ordinary word of that wiki and names nothing anywhere. A form shared by two units names
neither.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable

from ..page.markdown import FENCE_RE, INLINE_CODE_RE, mask_code
from ..page.links import MDLINK_RE, WIKILINK_RE
from .units import Unit

TOKEN_RE = re.compile(r"[A-Za-z_][\w\-]*(?:[./][\w\-]+)*")
SEPARATOR_RE = re.compile(r"[./]")
MAX_PARTS = 8
# A weak form written as a plain word in the prose of more than this share of the pages (and
# of COMMON_PAGES pages or more) is a word of the wiki, not a name of the code.
COMMON_SHARE = 0.05
COMMON_PAGES = 3


@dataclass(frozen=True)
class Mention:
    """How often one page refers to one unit, and by which forms."""

    page: str
    count: int
    forms: tuple[str, ...]


def unit_forms(unit: Unit) -> tuple[set[str], set[str]]:
    """(strong, weak) reference forms of a unit."""
    strong: set[str] = set()
    weak: set[str] = set()
    path = unit.path
    stem_path = re.sub(r"\.[A-Za-z0-9]+$", "", path) if unit.kind == "module" else path
    parts = stem_path.split("/")
    for i in range(len(parts)):
        suffix = "/".join(parts[i:])
        if i < len(parts) - 1:
            strong.add(suffix)                   # page/parse
            strong.add(path.split("/", i)[-1] if i else path)
        if unit.kind == "module":
            strong.add("/".join(path.split("/")[i:]))  # page/parse.py, parse.py
    dotted = [p for p in parts if p]
    for i in range(len(dotted) - 1):
        strong.add(".".join(dotted[i:]))         # mindgraph.page.parse, page.parse
    weak.add(parts[-1])
    for symbol in unit.symbols:
        (strong if _distinctive(symbol.name) else weak).add(symbol.name)
    if unit.kind == "service":
        strong.add(path + "/")
        weak.add(path)
        for member in unit.members:   # a service is named wherever one of its modules is
            member_strong, member_weak = unit_forms(Unit(id=member, kind="module",
                                                         path=member))
            strong |= member_strong
            weak |= member_weak
    strong.discard("")
    return strong, weak - strong


def _distinctive(name: str) -> bool:
    inner = name.strip("_")
    return "_" in inner or bool(re.search(r"[a-z][A-Z]", inner)) or bool(
        re.fullmatch(r"[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+", inner))


class MentionIndex:
    """Maps forms to units once, then counts mentions page by page."""

    def __init__(self, units: list[Unit]):
        owners: dict[str, set[str]] = defaultdict(set)
        strength: dict[tuple[str, str], bool] = {}
        for unit in units:
            strong, weak = unit_forms(unit)
            for form in strong | weak:
                owners[form].add(unit.id)
                strength[(form, unit.id)] = form in strong
        self._strong: dict[str, str] = {}
        self._weak: dict[str, str] = {}
        self.common_words: set[str] = set()     # weak forms found common (count_pages)
        full_paths = {u.path for u in units}
        for form, ids in owners.items():
            if len(ids) != 1 and form not in full_paths:
                continue  # ambiguous: names no unit
            (unit_id,) = ids if len(ids) == 1 else {i for i in ids if i == form}
            target = self._strong if strength[(form, unit_id)] else self._weak
            target[form] = unit_id

    def count(self, page_path: str, body: str) -> dict[str, Mention]:
        """Mentions of every unit in one page's markdown body, weak forms as one page alone
        tells (counted when the page also has a strong mention; see ``count_pages``)."""
        strong, weak, _ = self._scan(body)
        return _mentions(page_path, strong, weak if strong else Counter())

    def count_pages(self, pages: Iterable[tuple[str, str]]) -> dict[str, list[Mention]]:
        """Unit id → its mentions over ``pages`` ((path, body) pairs): strong forms anywhere,
        weak forms on pages with a strong mention and only when not a common word of the
        pages' prose (``COMMON_SHARE``)."""
        weak_words = {form.lower() for form in self._weak}
        scans: list[tuple[str, Counter, Counter]] = []
        prose_pages: Counter[str] = Counter()
        for path, body in pages:
            strong, weak, words = self._scan(body)
            prose_pages.update(words & weak_words)
            scans.append((path, strong, weak if strong else Counter()))
        common = {w for w, n in prose_pages.items()
                  if n >= COMMON_PAGES and n > COMMON_SHARE * len(scans)}
        self.common_words = common
        out: dict[str, list[Mention]] = defaultdict(list)
        for path, strong, weak in scans:
            usable = Counter({k: n for k, n in weak.items() if k[1].lower() not in common})
            for unit_id, mention in _mentions(path, strong, usable).items():
                out[unit_id].append(mention)
        return out

    def _scan(self, body: str) -> tuple[Counter, Counter, set[str]]:
        """(strong, weak) counts of (unit id, form) in a body, and the plain words (lower
        case) of its prose."""
        prose, code, links = split_regions(body)
        strong: Counter[tuple[str, str]] = Counter()
        weak: Counter[tuple[str, str]] = Counter()
        words: set[str] = set()
        for text, weak_ok in ((prose, False), (code, True), (links, True)):
            for token, n in Counter(TOKEN_RE.findall(text)).items():
                if not weak_ok and not SEPARATOR_RE.search(token):
                    words.add(token.lower())
                for unit_id, (form, is_strong) in self._units_of(token, weak_ok).items():
                    (strong if is_strong else weak)[(unit_id, form)] += n
        return strong, weak, words

    def _units_of(self, token: str, weak_ok: bool) -> dict[str, tuple[str, bool]]:
        """Unit id → (the form of it in ``token``, whether strong)."""
        found: dict[str, tuple[str, bool]] = {}
        for part in _parts(token):
            unit_id = self._strong.get(part)
            is_strong = unit_id is not None
            if unit_id is None and weak_ok:
                unit_id = self._weak.get(part)
            if unit_id and unit_id not in found:
                found[unit_id] = (part, is_strong)
        return found


def _mentions(page_path: str, *counted: Counter) -> dict[str, Mention]:
    """One Mention per unit from counts of (unit id, form)."""
    counts: Counter[str] = Counter()
    forms: dict[str, set[str]] = defaultdict(set)
    for counter in counted:
        for (unit_id, form), n in counter.items():
            counts[unit_id] += n
            forms[unit_id].add(form)
    return {unit_id: Mention(page_path, n, tuple(sorted(forms[unit_id])))
            for unit_id, n in counts.items()}


def _parts(token: str) -> list[str]:
    """The token and every separator-aligned contiguous part of it (at most MAX_PARTS parts)."""
    pieces = SEPARATOR_RE.split(token)
    seps = SEPARATOR_RE.findall(token)
    if len(pieces) > MAX_PARTS:
        return [token]
    out = []
    for i in range(len(pieces)):
        text = pieces[i]
        out.append(text)
        for j in range(i + 1, len(pieces)):
            text += seps[j - 1] + pieces[j]
            out.append(text)
    # "parse.py/" style folder references: keep a trailing-slash form for services.
    out.extend(p + "/" for p in pieces[:-1])
    return out


def split_regions(body: str) -> tuple[str, str, str]:
    """(prose without code, code spans and blocks, link targets) of a markdown body."""
    lines = body.split("\n")
    masked = mask_code(lines)
    code_parts = []
    for original, kept in zip(lines, masked):
        if original != kept:
            if kept == "" and not FENCE_RE.match(original):
                code_parts.append(original)
            else:
                code_parts.extend(m.group(2) for m in INLINE_CODE_RE.finditer(original))
    prose = "\n".join(masked)
    links = [m.group(2).split("|")[0] for m in WIKILINK_RE.finditer(prose)]
    links += [m.group(3) for m in MDLINK_RE.finditer(prose)]
    return prose, "\n".join(code_parts), "\n".join(links)
