"""The pages a fact change affects, and the draft of each one's update.

A page is affected when its readers may read the changed page (reach.py: with scopes, the
same tenant and the linking rule; a stated correction reaches every page) and one of its
statements is like the old one (MIN_AFFECTED of the
content words, three at least) and still carries what changed (the old numbers, or a word
the new statement dropped). Its draft changes only the paragraph of that statement:

- offline, when only numbers changed and each old number occurs once in the paragraph, it is
  replaced by the new one ("substituted");
- offline otherwise, a callout after the paragraph says what the changed page says now
  ("marked"): a person rewrites the passage;
- with an LLM, the paragraph rewritten to agree with the new statement ("rewritten"),
  checked at the boundary (JSON, one paragraph, not empty).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import ProviderError
from ..lint.statements import Statement, page_statements
from ..page.model import Page
from ..providers.llm.answers import json_list
from ..lint.facts import quantities
from ..trust.claims import plain
from .changes import FactChange, similarity
from .reach import ChangeReach

MIN_AFFECTED = 0.4
SYSTEM = (
    "A fact in a wiki changed. Rewrite the paragraph you are given so that it agrees with the "
    "new statement, changing as little as possible and keeping its markdown. Answer with JSON "
    'only: {"paragraphs": ["<the rewritten paragraph>"]}')


@dataclass(frozen=True)
class Draft:
    """One page's planned update."""

    path: str
    change: FactChange
    statement: str           # the affected statement on this page
    line: int                # where its paragraph starts (1-based file line)
    how: str                 # substituted | marked | rewritten
    text: str                # the whole page text after the update


def affected(change: FactChange, pages: dict[str, Page],
             reach: ChangeReach) -> list[tuple[Page, Statement]]:
    """The first affected statement of each other page the change may reach, in path order:
    when only numbers changed, one that gives an old quantity ("5 MB") and shares two words
    with the old statement and its heading; otherwise one like the old statement
    (MIN_AFFECTED, three shared words) that still carries a word the new one dropped."""
    removed = change.removed_words()
    old_words = set(Statement("", "", 0, change.old).words)
    changed = change.changed_quantities() if change.numbers_only else set()
    subject = change.subject_words()
    out = []
    for path in sorted(pages):
        if path == change.page or not reach.allows(change.page, path):
            continue
        for s in page_statements(pages[path]):
            words = set(s.words)
            if changed:
                given = {(u, n) for u, numbers in quantities(s.text).items() for n in numbers}
                hit = bool(given & changed) and len(words & subject) >= 2
            else:
                hit = len(words & old_words) >= 3 and similarity(change.old, s.text) >= \
                    MIN_AFFECTED and bool((words | set(s.numbers)) & removed)
            if hit:
                out.append((pages[path], s))
                break
    return out


def draft(change: FactChange, page: Page, statement: Statement, text: str,
          llm: Any = None) -> Draft:
    """The page ``text`` with the paragraph of ``statement`` updated (see the module)."""
    lines = text.split("\n")
    start = statement.line - 1
    end = start
    while end + 1 < len(lines) and lines[end + 1].strip() and not lines[end + 1].startswith(
            ("#", ">", "```", "- ", "* ", "|")):
        end += 1
    paragraph = "\n".join(lines[start:end + 1])
    if llm is not None:
        rewritten = _rewrite(llm, change, paragraph)
        lines[start:end + 1] = rewritten.split("\n")
        how = "rewritten"
    elif change.numbers_only and change.number_map() and all(
            len(_number_at(old).findall(paragraph)) == 1 for old, _ in change.number_map()):
        updated = paragraph
        for old, new in change.number_map():
            updated = _number_at(old).sub(new, updated)
        lines[start:end + 1] = updated.split("\n")
        how = "substituted"
    else:
        where = f"[[{change.page.removesuffix('.md')}]]" if change.page else "A correction"
        lines[end + 1:end + 1] = ["", "> [!warning] Possibly outdated",
                                  f"> {where} now says: “{change.new}” (it said: "
                                  f"“{change.old}”). Check this passage."]
        how = "marked"
    if how != "marked":     # a marked passage still says the old, so its copy may too
        lines = _summary_follows(page, statement, change, how, lines)
    return Draft(page.path, change, statement.text, statement.line, how, "\n".join(lines))


def _summary_follows(page: Page, statement: Statement, change: FactChange, how: str,
                     lines: list[str]) -> list[str]:
    """``lines`` with the page's copied summary callout (page/summary.py: the offline
    compiler's, sentences taken from the body) brought in line with the updated statement:
    its numbers substituted too, or — when that cannot be done surely, or the paragraph was
    rewritten — the callout dropped, as the copy it was. Left alone, it kept stating the
    old fact above the new one, and was searched as text of its own once it no longer
    repeated the body."""
    start, end = page.copied_summary
    if start == end:
        return lines
    first, last = page.body_line - 1 + start, page.body_line - 1 + end
    if statement.line - 1 < last or _letters(statement.text) not in _letters(
            " ".join(lines[first:last])):
        return lines
    quoted = "\n".join(lines[first:last])
    if how == "substituted" and all(len(_number_at(old).findall(quoted)) == 1
                                    for old, _ in change.number_map()):
        for old, new in change.number_map():
            quoted = _number_at(old).sub(new, quoted)
        return lines[:first] + quoted.split("\n") + lines[last:]
    while last < len(lines) and not lines[last].strip():
        last += 1
    return lines[:first] + lines[last:]


def _letters(text: str) -> str:
    """Only the letters and digits of ``text``'s words, lower case (markup does not count)."""
    return re.sub(r"[\W_]+", "", plain(text)).casefold()


def _number_at(number: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.]){re.escape(number)}(?![\w])")


def _rewrite(llm: Any, change: FactChange, paragraph: str) -> str:
    prompt = (f"Old statement: {change.old}\nNew statement: {change.new}\n\n"
              f"Paragraph:\n{paragraph}")
    answer = llm.complete(SYSTEM, prompt, max_tokens=2048)
    try:
        items = json_list(answer, "paragraphs")
    except ValueError as exc:
        raise ProviderError(f"{llm.identity} returned no paragraph JSON ({exc}: "
                            f"{answer[:80]!r}); nothing was planned for that page.") from None
    if len(items) != 1 or not isinstance(items[0], str) or not items[0].strip() \
            or len(items[0]) > 3 * len(paragraph) + 200:
        raise ProviderError(f"{llm.identity} returned no usable paragraph; nothing was planned "
                            f"for that page.")
    return items[0].strip("\n")
