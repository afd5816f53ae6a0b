"""A vault: every markdown page under a folder, parsed, with a link resolver over them.

Reading is forgiving: a file that is not UTF-8, is binary, too large, or unreadable becomes a
PageProblem naming the file and the fix, and the other pages load as usual.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..fsutil import UnreadableFile, read_bytes, sha256_bytes
from .model import Link, Page
from .parse import long_name_message, long_names, parse_page
from .resolve import LinkResolver, Resolution

SKIP_DIRS = frozenset({".git", ".obsidian", ".trash", ".mindgraph", "node_modules", ".venv",
                       "__pycache__"})
MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True)
class PageLimits:
    """How much of a markdown file is read (``max_bytes``) and how much of its section text
    is indexed for search (``max_indexed_chars``); config keys limits.max_page_bytes and
    limits.max_indexed_chars. Past either, the file gets a PageProblem naming the key."""

    max_bytes: int = 5_000_000
    max_indexed_chars: int = 500_000

    @classmethod
    def of(cls, limits: Any) -> "PageLimits":
        """From the settings' ``limits`` section (config.LimitsSettings)."""
        return cls(limits.max_page_bytes, limits.max_indexed_chars)




@dataclass(frozen=True)
class PageProblem:
    """A file that could not be read as a page, or a page with a defect (e.g. bad YAML)."""

    path: str
    kind: str       # unreadable | not-utf8 | binary | too-large | bad-frontmatter | partly-indexed
    #                 | long-name (a title, alias or tag cut: page/parse.py MAX_NAME_CHARS)
    message: str
    line: int = 0


@dataclass
class Vault:
    """Parsed pages keyed by vault-relative path, the resolver over them, and problems."""

    root: Path
    pages: dict[str, Page]
    problems: list[PageProblem] = field(default_factory=list)
    moved: dict[str, str] = field(default_factory=dict)   # old page path → where it moved
    resolver: LinkResolver = field(init=False)

    def __post_init__(self) -> None:
        self.resolver = LinkResolver(self.pages, {p.path: p.aliases for p in self.pages.values()},
                                     self.moved)

    def resolve(self, link: Link, source_path: str) -> Resolution:
        """Resolve one link of the page at ``source_path``."""
        return self.resolver.resolve(link, source_path)

    def links_of(self, page: Page) -> dict[str, Any]:
        """A page's outgoing links with their resolution, and its backlinks."""
        outgoing = []
        for link in page.links:
            result = self.resolve(link, page.path)
            outgoing.append({"target": link.target, "heading": link.heading,
                             "block": link.block, "line": link.line, "syntax": link.syntax,
                             "relation": link.relation, "status": result.status,
                             "page": result.target,
                             "candidates": [] if result.status == "resolved"
                             else list(result.candidates),
                             **self._stale_note(link, result, page.path),
                             **({"score": link.score, "judge": link.judge}
                                if link.syntax == "inferred" else {})})
        backlinks = [{"page": src.path, "line": link.line, "section": link.section_id,
                      "relation": link.relation}
                     for src, link, result in self.resolved_links()
                     if result.status == "resolved" and result.target == page.path
                     and src.path != page.path]
        return {"page": page.path, "outgoing": outgoing, "backlinks": backlinks}

    def _stale_note(self, link: Link, result: Resolution, source: str) -> dict[str, str]:
        """``{"stale": why, "fix": link}`` for a link of the page ``source`` that reached its
        page only through a move (its resolution's rule is "moved"), else {}."""
        if result.rule != "moved":
            return {}
        from .check import link_name

        return {"stale": f"[[{link.target}]] names a page that moved to {result.target}; the "
                         f"link still resolves there (raw/ is never rewritten). Fix it in the "
                         f"raw note.",
                "fix": f"[[{link_name(self, result.target, source)}]]"}

    def resolved_links(self) -> Iterator[tuple[Page, Link, Resolution]]:
        """Every link of every page with its resolution, in path order."""
        for path in sorted(self.pages):
            page = self.pages[path]
            for link in page.links:
                yield page, link, self.resolver.resolve(link, path)


def iter_markdown_files(root: Path) -> Iterator[Path]:
    """Markdown files under ``root`` in a stable order; hidden/tool folders and symlinked
    folders are skipped (no loops, nothing outside the root)."""
    root = Path(root)
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(MARKDOWN_SUFFIXES) and not name.startswith("."):
                yield Path(folder) / name


def symlinked_folders_outside(root: Path) -> list[tuple[str, str]]:
    """(folder path relative to ``root``, where it points) of each symlinked folder under
    ``root`` that leads out of it: scans skip them (iter_markdown_files), so their pages are
    not in the vault. Dangling links and links within ``root`` are left out."""
    root = Path(root)
    if not root.is_dir():
        return []
    real_root = root.resolve()
    found = []
    for folder, dirs, _ in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in dirs:
            path = Path(folder) / name
            if not path.is_symlink():
                continue
            try:
                target = path.resolve(strict=True)
            except (OSError, RuntimeError):     # dangling, or a loop
                continue
            if target.is_dir() and not target.is_relative_to(real_root):
                found.append((path.relative_to(root).as_posix(), os.readlink(path)))
    return found


def read_page(root: Path, file: Path, limits: PageLimits = PageLimits()) -> Page | PageProblem:
    """Read and parse one file, or say why it cannot be a page."""
    rel = file.relative_to(root).as_posix()
    try:
        if file.is_symlink() and not file.resolve().is_relative_to(root.resolve()):
            return PageProblem(rel, "unreadable", f"{rel}: symlink points outside the vault; "
                               f"skipped. Copy the file into the vault instead.")
        data = read_bytes(file, max_bytes=limits.max_bytes, limit_key="limits.max_page_bytes")
    except UnreadableFile as exc:
        kind = "too-large" if exc.kind == "too-large" else "unreadable"
        return PageProblem(rel, kind, f"{rel}: {exc.strerror}")
    except OSError as exc:
        return PageProblem(rel, "unreadable", f"{rel}: cannot read ({exc.strerror or exc}). "
                           f"Check the file's permissions.")
    if b"\x00" in data[:8192]:
        return PageProblem(rel, "binary", f"{rel}: looks like a binary file, not markdown; "
                           f"skipped. Remove it or give it another extension.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return PageProblem(rel, "not-utf8", f"{rel}:{line}: not valid UTF-8 (byte "
                           f"{exc.start}); re-save the file as UTF-8.", line)
    return parse_page(text.replace("\r\n", "\n"), rel, sha256_bytes(data),
                      max_indexed_chars=limits.max_indexed_chars)


def page_notices(page: Page, limits: PageLimits) -> list[PageProblem]:
    """The defects of a page that did load: bad frontmatter, text past the index limit."""
    found = []
    if page.frontmatter_error:
        found.append(PageProblem(page.path, "bad-frontmatter", page.frontmatter_error))
    for key, length in long_names(page.frontmatter):
        found.append(PageProblem(page.path, "long-name",
                                 f"{page.path}: {long_name_message(key, length)}"))
    if page.unindexed_chars:
        found.append(PageProblem(
            page.path, "partly-indexed",
            f"{page.path}: {page.unindexed_chars:,} characters of section text past the "
            f"{limits.max_indexed_chars:,}-character index limit (limits.max_indexed_chars) "
            f"are not searchable; the page itself is whole. Split the page, or raise "
            f"limits.max_indexed_chars in mindgraph.yml."))
    return found


def load_vault(root: str | Path, limits: PageLimits = PageLimits()) -> Vault:
    """Parse every markdown page under ``root``."""
    root = Path(root)
    pages: dict[str, Page] = {}
    problems: list[PageProblem] = []
    if root.is_dir():
        for file in iter_markdown_files(root):
            result = read_page(root, file, limits)
            if isinstance(result, PageProblem):
                problems.append(result)
                continue
            pages[result.path] = result
            problems.extend(page_notices(result, limits))
    return Vault(root=root, pages=pages, problems=problems)
