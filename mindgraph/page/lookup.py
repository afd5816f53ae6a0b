"""Find a page by the name a person or an agent gives: path, title, alias or file name."""

from __future__ import annotations

import difflib
from typing import Mapping

from ..errors import AmbiguousName, NotFoundError
from .model import Page
from .resolve import fold


def find_page(pages: Mapping[str, Page], name: str) -> Page:
    """The page ``name`` refers to, tried as: exact path, path + ".md", then case-insensitive
    path, file name (as Obsidian resolves [[Home]] to Home.md), title and alias, blind to
    Unicode normalisation as links are (``resolve.fold``). When a kind of
    name fits several pages, the next kind that fits any of them decides only if it fits just
    one (two v1.4.0.md, one titled "v1.4.0"); otherwise NotFoundError lists the candidates.
    Suggestions when nothing fits."""
    for key in (name, name + ".md"):    # as given first: " idea.md" is a path of its own
        if key in pages:
            return pages[key]
    name = name.strip()
    for key in (name, name + ".md"):
        if key in pages:
            return pages[key]
    wanted = fold(name).removesuffix(".md")
    for rule in (lambda p: fold(p.path).removesuffix(".md"),):
        hits = [p for p in pages.values() if rule(p) == wanted]
        if len(hits) == 1:
            return hits[0]
    ambiguous: tuple[str, list[Page]] | None = None
    for label, names_of in (("file name", lambda p: [p.stem]), ("title", lambda p: [p.title]),
                            ("alias", lambda p: p.aliases)):
        hits = [p for p in pages.values() if wanted in (fold(n) for n in names_of(p))]
        if ambiguous is not None:       # a later kind of name may only choose among those
            among = {p.path for p in ambiguous[1]}
            hits = [p for p in hits if p.path in among]
            if len(hits) > 1:           # it names several of them too: truly ambiguous
                break
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            ambiguous = (label, hits)
    if ambiguous is not None:
        label, hits = ambiguous
        candidates = tuple(sorted(p.path for p in hits))
        more = f" and {len(candidates) - 5} more" if len(candidates) > 5 else ""
        raise AmbiguousName(f"'{name}' is the {label} of {len(hits)} pages "
                            f"({', '.join(candidates[:5])}{more}); name the page by its path, "
                            f"e.g. '{candidates[0]}'.", candidates)
    raise NotFoundError(f"No page named '{name}'.{suggest(pages, name)}")


def suggest(pages: Mapping[str, Page], name: str) -> str:
    """" Did you mean: ...?" with close titles and paths, else to search for it, or to
    compile the notes when the wiki has no page at all."""
    if not pages:
        return " The wiki has no pages yet: compile the notes first (`mindgraph ingest`)."
    choices: dict[str, str] = {}
    for page in pages.values():
        choices.setdefault(page.title.lower(), page.path)
        choices.setdefault(page.path.lower().removesuffix(".md"), page.path)
    close = difflib.get_close_matches(name.lower().removesuffix(".md"), list(choices), n=3,
                                      cutoff=0.6)
    paths = list(dict.fromkeys(choices[c] for c in close))
    return f" Did you mean: {', '.join(paths)}?" if paths else \
        " Search for it by its words (`mindgraph search`, REST /search, MCP search)."
