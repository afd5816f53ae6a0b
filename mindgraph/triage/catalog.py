"""The Trunk Catalog: what the person cares about now, kept as an agent-data note.

Convention: a page whose frontmatter says ``type: trunk-catalog`` and whose first fenced
```json block is a list of trunks, each ``{"name": "...", "description": "..."}`` (the
person's active projects; ``description`` says what belongs to it). The live catalog is read
from the wiki on every call, so editing the note changes what the next item is matched
against. A malformed catalog is an InputError naming the note, the line and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError, NotFoundError
from ..page.data import DataBlockError, extract_data
from ..page.model import Page

CATALOG_TYPE = "trunk-catalog"
EXAMPLE = ('```json\n[{"name": "Mobile app", "description": "The iOS and Android app: releases, '
           'crashes, store reviews"}]\n```')


@dataclass(frozen=True)
class Trunk:
    """One active project of the catalog."""

    name: str
    description: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"name": self.name, "description": self.description}


@dataclass(frozen=True)
class Catalog:
    """The trunks and the page they come from."""

    page: str
    trunks: tuple[Trunk, ...]


def find_catalog(pages: Mapping[str, Page], raw_dir: Path | None = None) -> Catalog:
    """The one catalog page of the wiki. Several are refused, never one picked: a page an
    agent wrote (a tenant's folder sorts before the owner's) must not become the trunks that
    every item is scored against, nor text in the owner's prompt."""
    found = [p for path, p in sorted(pages.items())
             if str(p.frontmatter.get("type", "")).strip().lower() == CATALOG_TYPE]
    if not found:
        raise NotFoundError(f"No Trunk Catalog: no page has 'type: {CATALOG_TYPE}' in its "
                            f"frontmatter. Add a note with that frontmatter and a list of your "
                            f"active projects, e.g.\n{EXAMPLE}")
    if len(found) > 1:
        shown = ", ".join(p.path for p in found[:5]) + (" …" if len(found) > 5 else "")
        raise InputError(f"{len(found)} pages say 'type: {CATALOG_TYPE}' ({shown}): keep one "
                         f"Trunk Catalog and change the type of the others (a page an agent "
                         f"created counts too).")
    return parse_catalog(found[0], raw_dir)


def parse_catalog(page: Page, raw_dir: Path | None = None) -> Catalog:
    """The trunks of a catalog page, checked."""
    try:
        data: Any = extract_data(page, 1, "json", raw_dir)
    except DataBlockError as exc:
        raise InputError(str(exc)) from exc
    except NotFoundError as exc:
        raise InputError(f"{exc} The Trunk Catalog's block is a list of trunks: "
                         f"{EXAMPLE}") from exc
    if not isinstance(data, list) or not data:
        raise InputError(f"{page.path}: the Trunk Catalog's ```json block is not a list of "
                         f"trunks. Write it as {EXAMPLE}")
    trunks = []
    for n, item in enumerate(data, 1):
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"{page.path}: trunk {n} of the Trunk Catalog has no 'name'. Give "
                             f"every entry a name and a description, e.g. {EXAMPLE}")
        description = item.get("description")
        trunks.append(Trunk(name.strip(), str(description).strip() if description else ""))
    return Catalog(page.path, tuple(trunks))


__all__ = ["CATALOG_TYPE", "Catalog", "Trunk", "find_catalog", "parse_catalog"]
