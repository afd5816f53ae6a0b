"""Find a page by the name a person or an agent gives: path, title, alias or file name."""

from __future__ import annotations

import difflib
from typing import Mapping

from ..errors import NotFoundError
from .model import Page


def find_page(pages: Mapping[str, Page], name: str) -> Page:
    """The page ``name`` refers to, tried as: exact path, path + ".md", then case-insensitive
    path, title, alias and file name; NotFoundError with suggestions (or the candidates when
    the name is ambiguous) otherwise."""
    name = name.strip()
    for key in (name, name + ".md"):
        if key in pages:
            return pages[key]
    wanted = name.lower().removesuffix(".md")
    for rule in (lambda p: p.path.lower().removesuffix(".md"),):
        hits = [p for p in pages.values() if rule(p) == wanted]
        if len(hits) == 1:
            return hits[0]
    for label, names_of in (("title", lambda p: [p.title]), ("alias", lambda p: p.aliases),
                            ("file name", lambda p: [p.stem])):
        hits = [p for p in pages.values() if wanted in (n.lower() for n in names_of(p))]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            paths = ", ".join(sorted(p.path for p in hits)[:5])
            raise NotFoundError(f"'{name}' is the {label} of {len(hits)} pages ({paths}); "
                                f"name the page by its path.")
    raise NotFoundError(f"No page named '{name}'.{suggest(pages, name)}")


def suggest(pages: Mapping[str, Page], name: str) -> str:
    """" Did you mean: ...?" with close titles and paths, or "" when nothing is close."""
    choices: dict[str, str] = {}
    for page in pages.values():
        choices.setdefault(page.title.lower(), page.path)
        choices.setdefault(page.path.lower().removesuffix(".md"), page.path)
    close = difflib.get_close_matches(name.lower().removesuffix(".md"), list(choices), n=3,
                                      cutoff=0.6)
    paths = list(dict.fromkeys(choices[c] for c in close))
    return f" Did you mean: {', '.join(paths)}?" if paths else \
        " List pages with `mindgraph stats` or search with `mindgraph search`."
