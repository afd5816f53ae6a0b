"""Features one page calls deprecated or removed while other pages still describe them.

A deprecation statement says that something "is deprecated", "has been removed", "is no
longer supported" (非推奨, 廃止, 削除されました; 已弃用, 已移除, 不再支持 …). What it is about is
an inline-code name (`Scope.registerKey`, `cssclass`) or a linked page, written in the same
clause before the keyword ("`X` is deprecated") or right after it ("Removed `X`",
"deprecated `X` in favour of `Y`" — `Y` is the replacement, not the subject). Every other
page that names the subject in a statement without such a word is describing it as current,
unless the page is dated before the deprecation (an older release note is history).

What went away is the specific thing the sentence names, not every use of a word in it: in
«Removed "[[Properties|Property]]" type» it is the Property *type*, in «the starred [[core
plugin]] has been removed» the *starred* core plugin. A linked name with a modifier next to
it (a word before it, a noun after it) makes a phrase, and only statements that say that
phrase describe it; so does a code name followed by a plural or a noun that is no mere
classifier ("`Workspace` functions", where "the `cssclass` property" is `cssclass` itself).
A subject named on a large share of the pages (``GENERIC_SHARE``) is too generic to be what a
release removed and is skipped.
"""

from __future__ import annotations

import datetime as dt
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterator

from ..page.model import Link, Page
from ..retrieval.analyzer import STOP_WORDS
from .statements import Statement

KEYWORD = re.compile(
    r"\b(?:deprecated|deprecate|removed(?! from)|no longer (?:supported|available|exists?|maintained|"
    r"works?)|discontinued|obsolete)\b|非推奨|廃止|削除されました|サポートされなくな|"
    r"已弃用|已废弃|弃用|已移除|已删除|不再支持|停止支持", re.I)
# Words after which a name is the replacement, not what went away.
REPLACEMENT = re.compile(r"\b(?:in favou?r of|instead|replaced (?:by|with)|use|with|for|"
                         r"to)\b|代わりに|改为|替代|使用", re.I)
# After the keyword, a word that starts a place, time or cause: what follows it is not what
# went away ("removed when switching [[workspaces]]", "removed spinning from the status bar").
_NOT_OBJECT = re.compile(r"\b(?:from|when|whenever|while|if|because|since|in|on|at|by|after|"
                         r"before|during|within|into|across|until|unless)\b", re.I)
# A keyword after "is", "are been" … is passive: its subject stands before it.
_PASSIVE = re.compile(r"\b(?:is|are|was|were|been|be|being)\s+(?:(?:now|also|\w+ly)\s+)*$",
                      re.I)
CLAUSE_BREAK = re.compile(r"[:;|,]|\.\s|、|。|，|；")
_LISTED = re.compile(r"\s*(?:,|\band\b|\bor\b|、|和|或)?\s*\x00\s*(?:,|\band\b|\bor\b|、|和|或)?\s*")
# What may stand between a subject and the keyword: "is now", "has been", "は", "已经" …
_SUBJECT_GLUE = re.compile(
    r"(?:\s|\b(?:is|are|was|were|has|have|had|been|be|will|now|also|officially|completely|"
    r"fully|being|propert(?:y|ies)|settings?|options?|methods?|functions?|apis?|plugins?|"
    r"features?|commands?|syntax|keys?|fields?|flags?|parameters?)\b|は|が|も|を|现在|已经|已|"
    r"被|将|属性|设置|选项|功能|插件|命令|プロパティ|設定|オプション|機能|プラグイン|コマンド)*", re.I)
_CODE = re.compile(r"`([^`\n]+)`")
# Key combinations are reassigned, not deprecated features: they are no subjects.
_HOTKEY = re.compile(r"\b(?:ctrl|cmd|alt|shift|option|opt|meta|super)\s*\+", re.I)
WINDOW = 40   # characters between a name and the keyword, within one clause
# A subject named on more than this share of the pages (and on GENERIC_PAGES pages or more)
# is a general term of the vault ("core plugin", "Property"), not a thing that went away.
GENERIC_SHARE = 0.05
GENERIC_PAGES = 20
# Nouns that only say what kind of thing a code name is: "the `cssclass` property" is
# `cssclass`. Any other noun after a name ("`Workspace` functions", "Property type") makes
# the subject the phrase.
_CLASSIFIERS = frozenset("""
property setting option method function api plugin feature command syntax key field flag
parameter attribute argument class module event hook variable type element component
""".split())
# Words next to a name that do not modify it: function words, the deprecation words, the
# glue between a subject and its keyword.
_NOT_MODIFIERS = STOP_WORDS | frozenset("""
now officially completely fully entirely permanently altogether since because due also been
being has have had was were is are be will removed deprecated deprecate discontinued
obsolete no longer several many every previous use using used instead favour favor replaced
we you they it which that whose
""".split())
_WORD_AFTER = re.compile(r"""[\"'”’*_\])]*\s+([A-Za-z][\w-]*)""")
_WORD_BEFORE = re.compile(r"""([A-Za-z][\w-]*)\s+[\"'“‘*_\[(]*$""")
_QUOTES = re.compile(r"""[\"'“”‘’`*_]""")


@dataclass(frozen=True)
class Deprecation:
    """Something a statement says went away."""

    subject: str          # the code name, or the path of the linked page
    shown: str            # how to name it in a message
    statement: Statement
    phrase: str = ""      # the name with its modifier ("Property type"), when it has one

    @property
    def key(self) -> str:
        """What a current use must name: the phrase (lower case) or else the subject."""
        return "phrase:" + _plain(self.phrase) if self.phrase else self.subject

    @property
    def what(self) -> str:
        """How a message names it."""
        return self.phrase or self.shown


@dataclass(frozen=True)
class CurrentUse:
    """A statement that names a deprecated subject as if it were current."""

    deprecation: Deprecation
    statement: Statement


def deprecations(statements: list[Statement],
                 names: dict[Statement, list[tuple[str, str]]]) -> list[Deprecation]:
    """What ``statements`` say is deprecated or removed; ``names`` holds, per statement, the
    (text shown, subject) of each code name and resolved link written in it."""
    found: list[Deprecation] = []
    for s in statements:
        keywords = list(KEYWORD.finditer(s.text))
        for shown, subject in names.get(s, []) if keywords else []:
            others = [n for n, _ in names[s] if n != shown]
            if any(_is_subject(s.text, shown, k, others) for k in keywords):
                found.append(Deprecation(subject, shown, s,
                                         _phrase(s.text, shown, code=shown == subject)))
    return found


def current_uses(deprecated: list[Deprecation], statements: list[Statement],
                 names: dict[Statement, list[tuple[str, str]]],
                 dates: dict[str, dt.date | None]) -> Iterator[CurrentUse]:
    """Statements on other pages that name a deprecated subject (or phrase) without saying
    it went; subjects named on a large share of the pages are skipped as too generic."""
    by_key: dict[str, Deprecation] = {}
    for d in deprecated:
        by_key.setdefault(d.key, d)
    phrases = {k: d for k, d in by_key.items() if d.phrase}
    named_by: dict[Statement, set[str]] = {
        s: _named(s, names, phrases) & by_key.keys() for s in statements}
    pages_naming: dict[str, set[str]] = {}
    for s, keys in named_by.items():
        for key in keys:
            pages_naming.setdefault(key, set()).add(s.page)
    every_page = len({s.page for s in statements})
    generic = {k for k, pages in pages_naming.items()
               if len(pages) >= GENERIC_PAGES and len(pages) > GENERIC_SHARE * every_page}
    flagged: set[tuple[str, str]] = set()
    for s in statements:
        if KEYWORD.search(s.text) or "legacy" in s.text.lower():
            continue
        for subject in sorted(named_by[s] - generic):
            d = by_key[subject]
            if s.page == d.statement.page or (s.page, subject) in flagged:
                continue
            said, here = dates.get(d.statement.page), dates.get(s.page)
            if said is not None and here is not None and here < said:
                continue
            flagged.add((s.page, subject))
            yield CurrentUse(d, s)


def _named(s: Statement, names: dict[Statement, list[tuple[str, str]]],
           phrases: dict[str, Deprecation]) -> set[str]:
    """The keys ``s`` names: its subjects, and the deprecated phrases its text says."""
    keys = {subject for _, subject in names.get(s, [])}
    if phrases:
        text = " ".join(_QUOTES.sub("", s.text).split())
        keys.update(k for k, d in phrases.items() if _phrase_pattern(d.phrase, d.shown)
                    .search(text))
    return keys


@lru_cache(maxsize=256)
def _phrase_pattern(phrase: str, name: str) -> re.Pattern:
    """The phrase as a statement may write it: the modifier in any case, the name as written
    when it has capitals (the "Property" type is not any "property type"), plural or not."""
    words = _plain(phrase).split()
    named = _plain(name).split()
    at = next(i for i in range(len(words)) if words[i:i + len(named)] == named)
    shown = " ".join(_QUOTES.sub("", name).split())
    exact = shown != shown.lower()
    parts = [re.escape(w) for w in words[:at]] + \
        [f"(?-i:{re.escape(shown)})" if exact else re.escape(shown.lower())] + \
        [re.escape(w) for w in words[at + len(named):]]
    return re.compile(r"(?i)(?<!\w)" + r"\s+".join(parts) + r"s?(?!\w)")


def _plain(text: str) -> str:
    """Lower case, without quotes or emphasis, one space between words."""
    return " ".join(_QUOTES.sub("", text).lower().split())


def _phrase(text: str, name: str, *, code: bool) -> str:
    """The name with the word that modifies it, when one does: a word before a linked name
    ("starred core plugin"), a noun after it ("Property type"; after a code name only a
    plural or a noun that is not a mere classifier: "`Workspace` functions"). "" if none."""
    at = _find(text, name)
    if at < 0:
        return ""
    phrase = name
    after = _WORD_AFTER.match(text, at + len(name))
    if after and after.group(1).lower() not in _NOT_MODIFIERS:
        noun = after.group(1).lower()
        plural = noun.endswith("s") and not noun.endswith(("ss", "us", "is"))
        if not code or plural or noun not in _CLASSIFIERS:
            phrase = f"{phrase} {after.group(1)}"
    before = _WORD_BEFORE.search(text, 0, at)
    if not code and before and before.group(1).lower() not in _NOT_MODIFIERS \
            and not KEYWORD.fullmatch(before.group(1)):
        phrase = f"{before.group(1)} {phrase}"
    return "" if phrase == name else phrase


def _find(text: str, name: str) -> int:
    """Where ``name`` stands in ``text`` as a whole name (`Scope.register` is not found in
    "Scope.registerKey"), or -1."""
    left = r"(?<!\w)" if name[:1].isalnum() or name[:1] == "_" else ""
    right = r"(?!\w)" if name[-1:].isalnum() or name[-1:] == "_" else ""
    match = re.search(left + re.escape(name) + right, text)
    return match.start() if match else -1


def statement_names(page: Page, statements: list[Statement],
                    resolve: Callable[[Link], str | None]) -> dict[Statement, list[tuple[str, str]]]:
    """Per statement of ``page``: its inline-code names (subject: the name itself) and its
    links to pages (subject: the resolved page path), each as (text shown, subject)."""
    lines = page.body.split("\n")
    # the links each statement may name, by line: a statement looks only at its own lines
    # (a scan of every link per statement took minutes on a note of 40,000 linked lines)
    links = sorted((link for link in page.page_links
                    if link.syntax != "frontmatter" and not link.heading and not link.block),
                   key=lambda link: link.line)
    at = [link.line for link in links]
    targets: dict[int, str | None] = {}        # a link is seen by each statement over it
    out: dict[Statement, list[tuple[str, str]]] = {}
    for s in statements:
        raw = _raw_text(lines, s.line - page.body_line)
        last = s.line + raw.count("\n")
        found = [(name, name) for name in _CODE.findall(raw)
                 if _is_name(name) and name in s.text]
        for index in range(bisect_left(at, s.line), bisect_right(at, last)):
            link = links[index]
            shown = link.alias or link.target.rsplit("/", 1)[-1]
            if index not in targets:
                targets[index] = resolve(link)
            target = targets[index]
            if target and shown and shown in s.text:
                found.append((shown, target))
        if found:
            out[s] = found
    return out


def _is_name(code: str) -> bool:
    """A code span that names something: two characters or more, a letter, no key combo."""
    return 2 <= len(code) <= 60 and any(c.isalpha() for c in code) and not _HOTKEY.search(code)


def _raw_text(lines: list[str], index: int) -> str:
    """The paragraph of the body that starts at line ``index`` (0-based)."""
    out: list[str] = []
    for at in range(max(0, index), len(lines)):     # no slice: a copy of the rest per call
        line = lines[at]
        if out and not line.strip():
            break
        out.append(line)
        if len(out) >= 12:
            break
    return "\n".join(out)


def _is_subject(text: str, name: str, keyword: re.Match, others: list[str]) -> bool:
    """Is ``name`` what the keyword says went away: its subject ("`X` is now deprecated",
    "`X`は非推奨です"), or what follows it before any word that introduces a replacement
    ("Removed `X`", "deprecated the `X` in favour of `Y`"). Other names listed with it
    ("`a`, `b` and `c` are deprecated") do not break the clause."""
    at = _find(text, name)
    if at < 0 or (at < keyword.end() and at + len(name) > keyword.start()):
        return False     # not there, or the keyword is part of the name ("deprecated property")
    before = at < keyword.start()
    between = text[at + len(name):keyword.start()] if before else text[keyword.end():at]
    for other in others:
        between = between.replace(other, "\x00")
    between = _LISTED.sub(" ", between)
    if before:
        return bool(_SUBJECT_GLUE.fullmatch(between))
    if _PASSIVE.search(text, 0, keyword.start()):
        return False
    return len(between) <= WINDOW and not CLAUSE_BREAK.search(between) \
        and not REPLACEMENT.search(between) and not _NOT_OBJECT.search(between)
