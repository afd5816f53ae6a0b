"""What `verify` is asked to check: wiki-relative paths and folders, or pages named as `get`,
`links` and `graph` name them (title, alias, file name), through the same resolver."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..errors import InputError, NotFoundError
from ..page.lookup import find_page
from ..page.vault import load_vault


def resolve_targets(wiki: Path, names: Iterable[str]) -> list[str]:
    """Each name as a wiki-relative path or folder: kept when it is one (``Folder``,
    ``Folder/Page.md``, ``Folder/Page``), else the path of the page it is the title, alias
    or file name of (the wiki is read only then). InputError names what fits nothing."""
    wanted = [str(n).replace("\\", "/").strip("/") for n in names]
    out, missing = [], []
    pages = None
    for name in wanted:
        if name and ((wiki / name).is_dir() or (wiki / name).is_file()
                     or (wiki / f"{name}.md").is_file()):
            out.append(name)
            continue
        if pages is None:
            pages = load_vault(wiki).pages
        try:
            out.append(find_page(pages, name).path)
        except NotFoundError as exc:
            missing.append((name, str(exc)))
    if missing:
        why = " ".join(f"{name}: {exc}" for name, exc in missing if "Did you mean" in exc
                       or "pages (" in exc)
        raise InputError(f"no wiki page or folder {', '.join(n for n, _ in missing)} under "
                         f"{wiki}. Give paths relative to wiki/, e.g. Folder/Page.md, or a "
                         f"page's title or alias.{' ' + why if why else ''}")
    return out
