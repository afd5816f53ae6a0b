"""Frontmatter ``permalink``: the address a published page claims, which its translations
share (retrieval/twins.py) and no other page may.

Two pages may claim one permalink only as translations of each other: pages in different
languages. Two pages in the same language (by their text and by their title, page/language.py)
claiming one are a collision: a published site serves one of them at that address, and a
question's twin lookup picks one at random. ``collisions`` finds them for `mindgraph check`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from .language import page_language, query_language
from .model import Page

_KEY = re.compile(r"^permalink\s*:", re.IGNORECASE)


def permalink(page: Page) -> str | None:
    """The page's frontmatter permalink, without surrounding slashes (None: it has none)."""
    value = page.frontmatter.get("permalink")
    return value.strip().strip("/") if isinstance(value, str) and value.strip() else None


def collisions(pages: Iterable[Page]) -> list[tuple[str, list[Page]]]:
    """(permalink, pages in path order) for each permalink two or more pages of one language
    claim, in permalink order. Translations (another language by text or by title) are not
    collisions: sharing the address is how they say they are one page."""
    groups: dict[tuple[str, str, str], list[Page]] = defaultdict(list)
    for page in pages:
        link = permalink(page)
        if link is not None:
            groups[(link, page_language(page), query_language(page.title))].append(page)
    return sorted((key[0], sorted(found, key=lambda p: p.path))
                  for key, found in groups.items() if len(found) > 1)


def permalink_line(root: Path, page: Page) -> int:
    """The file line of the page's ``permalink:`` key (0 when it cannot be told)."""
    if not page.has_frontmatter:
        return 0
    try:
        with open(root / page.path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if number >= page.body_line:
                    break
                if _KEY.match(line):
                    return number
    except OSError:
        pass
    return 0


__all__ = ["collisions", "permalink", "permalink_line"]
