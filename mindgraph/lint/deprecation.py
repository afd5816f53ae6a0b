"""Features one page calls deprecated or removed while other pages still describe them.

A deprecation statement says that something "is deprecated", "has been removed", "is no
longer supported" (非推奨, 廃止, 削除されました; 已弃用, 已移除, 不再支持 …). What it is about is
an inline-code name (`Scope.registerKey`, `cssclass`) or a linked page, written in the same
clause before the keyword ("`X` is deprecated") or right after it ("Removed `X`",
"deprecated `X` in favour of `Y`" — `Y` is the replacement, not the subject). Every other
page that names the subject in a statement without such a word is describing it as current,
unless the page is dated before the deprecation (an older release note is history).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Callable, Iterator

from ..page.model import Link, Page
from .statements import Statement

KEYWORD = re.compile(
    r"\b(?:deprecated|deprecate|removed(?! from)|no longer (?:supported|available|exists?|maintained|"
    r"works?)|discontinued|obsolete)\b|非推奨|廃止|削除されました|サポートされなくな|"
    r"已弃用|已废弃|弃用|已移除|已删除|不再支持|停止支持", re.I)
# Words after which a name is the replacement, not what went away.
REPLACEMENT = re.compile(r"\b(?:in favou?r of|instead|replaced (?:by|with)|use|with|for|"
                         r"to)\b|代わりに|改为|替代|使用", re.I)
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


@dataclass(frozen=True)
class Deprecation:
    """Something a statement says went away."""

    subject: str          # the code name, or the path of the linked page
    shown: str            # how to name it in a message
    statement: Statement


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
        keyword = KEYWORD.search(s.text)
        if not keyword:
            continue
        for shown, subject in names.get(s, []):
            if _is_subject(s.text, shown, keyword, [n for n, _ in names[s] if n != shown]):
                found.append(Deprecation(subject, shown, s))
    return found


def current_uses(deprecated: list[Deprecation], statements: list[Statement],
                 names: dict[Statement, list[tuple[str, str]]],
                 dates: dict[str, dt.date | None]) -> Iterator[CurrentUse]:
    """Statements on other pages that name a deprecated subject without saying it went."""
    by_subject: dict[str, Deprecation] = {}
    for d in deprecated:
        by_subject.setdefault(d.subject, d)
    flagged: set[tuple[str, str]] = set()
    for s in statements:
        if KEYWORD.search(s.text) or "legacy" in s.text.lower():
            continue
        named = {subject for _, subject in names.get(s, [])}
        for subject in sorted(named & by_subject.keys()):
            d = by_subject[subject]
            if s.page == d.statement.page or (s.page, subject) in flagged:
                continue
            said, here = dates.get(d.statement.page), dates.get(s.page)
            if said is not None and here is not None and here < said:
                continue
            flagged.add((s.page, subject))
            yield CurrentUse(d, s)


def statement_names(page: Page, statements: list[Statement],
                    resolve: Callable[[Link], str | None]) -> dict[Statement, list[tuple[str, str]]]:
    """Per statement of ``page``: its inline-code names (subject: the name itself) and its
    links to pages (subject: the resolved page path), each as (text shown, subject)."""
    lines = page.body.split("\n")
    out: dict[Statement, list[tuple[str, str]]] = {}
    for s in statements:
        raw = _raw_text(lines, s.line - page.body_line)
        last = s.line + raw.count("\n")
        found = [(name, name) for name in _CODE.findall(raw)
                 if _is_name(name) and name in s.text]
        for link in page.page_links:
            if s.line <= link.line <= last and link.syntax != "frontmatter" \
                    and not link.heading and not link.block:
                shown = link.alias or link.target.rsplit("/", 1)[-1]
                target = resolve(link)
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
    out = []
    for line in lines[max(0, index):]:
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
    at = text.find(name)
    if at < 0 or (at < keyword.end() and at + len(name) > keyword.start()):
        return False     # not there, or the keyword is part of the name ("deprecated property")
    before = at < keyword.start()
    between = text[at + len(name):keyword.start()] if before else text[keyword.end():at]
    for other in others:
        between = between.replace(other, "\x00")
    between = _LISTED.sub(" ", between)
    if before:
        return bool(_SUBJECT_GLUE.fullmatch(between))
    return len(between) <= WINDOW and not CLAUSE_BREAK.search(between) \
        and not REPLACEMENT.search(between)
