"""Lint a vault: broken and ambiguous links, pages nothing links to, missing frontmatter, duplicate titles
and permalinks.

Errors are defects a reader hits (a link that goes nowhere or could go to several pages, a
link to a heading or block that is not there, a file that cannot be read, two pages of one
language at one permalink);
warnings are structure worth a look (no backlinks, no frontmatter, two pages with one title,
a symlinked folder leading out of the vault, which scans skip) and attachments that are not
there: a missing image, video or PDF leaves its page whole, its text, links and search
unchanged (a vault published without its attachments, as the Obsidian Help vault, has
hundreds; they made `check` report 761 errors there).
A finding about a compiled page also names its raw note and the line there (``raw_path``,
``raw_line``): raw/ is where it is fixed. The same finding twice (two equal links on one
line) is reported once.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Literal

from .anchors import AttachmentFiles, PageAnchors
from .html_images import image_tag
from .links import as_written
from .model import Link, Page
from .permalinks import collisions, permalink_line
from .rawlines import RawLines, raw_source
from .resolve import Resolution
from .vault import Vault, symlinked_folders_outside

Severity = Literal["error", "warning"]
# link findings that are warnings: a stale link still resolves; a missing attachment leaves
# the page whole (see the module docstring)
WARNING_LINKS = frozenset({"stale-link", "missing-attachment"})


@dataclass(frozen=True)
class Finding:
    """One problem at a place: file, line (0 when not about a line), and how to fix it."""

    severity: Severity
    kind: str
    path: str
    line: int
    message: str
    raw_path: str = ""      # the raw note of a compiled page (raw-relative), if readable
    raw_line: int = 0       # the line there (0 when not about a line or not found)

    def location(self, raw_folder: str = "raw") -> str:
        """Where to fix it: "raw/note.md:line" for a compiled page, else "path:line"."""
        if self.raw_path:
            where = f"{raw_folder.rstrip('/')}/{self.raw_path}"
            return f"{where}:{self.raw_line}" if self.raw_line else where
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class CheckReport:
    """Everything `mindgraph check` found."""

    pages: int
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def errors(self) -> list[Finding]:
        """Findings of severity error."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        """Findings of severity warning."""
        return [f for f in self.findings if f.severity == "warning"]

    def counts(self) -> dict[str, int]:
        """Number of findings per kind."""
        counts: dict[str, int] = defaultdict(int)
        for finding in self.findings:
            counts[finding.kind] += 1
        return dict(sorted(counts.items()))

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"pages": self.pages, "errors": len(self.errors), "warnings": len(self.warnings),
                "counts": self.counts(), "findings": [asdict(f) for f in self.findings]}


def check_vault(vault: Vault, raw_dir: Path | None = None,
                visible: Callable[[str], bool] | None = None,
                raw_folder: str = "raw",
                attachments: Callable[[str, str], bool] | None = None,
                unresolved: Severity = "error") -> CheckReport:
    """Run every check over ``vault``; with ``raw_dir``, findings about compiled pages also
    name the raw note and line to fix (``raw_folder``: the raw folder as configured,
    paths.raw, as the messages name it). ``visible`` (a scoped view's: does it see the file at
    this path, relative to the wiki or raw/) limits the attachment files and symlinked
    folders looked at to the view's: a file it does not see is one that is not there.
    ``attachments``: ``exists(target, page path)`` for the files of the wiki and raw/ as
    ``AttachmentFiles`` finds them (a long-lived caller's, kept current without a walk:
    dashboard/attachment_index.py); by default both folders are walked on the first
    attachment link. ``unresolved``: the severity of a link to no page (check.unresolved_links:
    "warning" for a vault that keeps Obsidian's placeholders on purpose)."""
    findings: list[Finding] = []
    raw_folder = raw_folder.rstrip("/") or "raw"
    for problem in vault.problems:
        # still readable, whole: a warning
        severity = "warning" if problem.kind in ("partly-indexed", "long-name") else "error"
        line, message = _unprefixed(problem.path, problem.line, problem.message)
        findings.append(Finding(severity, problem.kind, problem.path, line, message))
    for folder, target in symlinked_folders_outside(vault.root):
        if visible is not None and not visible(f"{folder}/-"):
            continue
        findings.append(Finding("warning", "symlinked-folder", folder, 0,
                                f"a symlink to a folder outside the wiki ({target}); scans "
                                f"do not follow it, so none of its pages are read. Move or "
                                f"copy the folder into the wiki, or its notes into "
                                f"{raw_folder}/."))
    incoming: dict[str, int] = defaultdict(int)
    if attachments is None:
        attachments = AttachmentFiles([vault.root] + ([raw_dir] if raw_dir is not None else []),
                                      visible).exists
    anchors = PageAnchors()
    raw = RawLines(raw_dir) if raw_dir is not None else None
    for page, link, result in vault.resolved_links():
        if result.status == "resolved" and result.target != page.path:
            incoming[result.target] += 1
        for kind, message in _link_problems(vault, page, link, result, anchors, attachments,
                                            raw_folder):
            severity: Severity = ("warning" if kind in WARNING_LINKS else
                                  unresolved if kind == "broken-link" else "error")
            finding = Finding(severity, kind, page.path, link.line, message)
            tag = _html_image(page, link)     # <img src="x.png">: no link of the raw note
            findings.append(_placed_text(finding, page, tag, raw) if tag is not None
                            else _placed(finding, page, link, raw))
    titles: dict[str, list[str]] = defaultdict(list)
    start = len(findings)
    for path in sorted(vault.pages):
        page = vault.pages[path]
        titles[page.title.lower()].append(path)
        if not page.has_frontmatter and page.body.split("\n", 1)[0].rstrip() == "---":
            findings.append(Finding("warning", "unclosed-frontmatter", path, 1,
                                    "the frontmatter's '---' is never closed, so it is read as "
                                    "text; end the block with a '---' line."))
        elif not page.has_frontmatter:
            findings.append(Finding("warning", "no-frontmatter", path, 0,
                                    "page has no frontmatter; add a '---' block with at least "
                                    "a title (mindgraph ingest writes one)."))
        if incoming[path] == 0 and len(vault.pages) > 1:
            # not "orphan": `graph orphans` means no links at all, in or out (Obsidian's sense)
            findings.append(Finding("warning", "no-backlinks", path, 0,
                                    "no other page links here; link it from a related page."))
    for paths in titles.values():
        if len(paths) > 1:
            for path in paths:
                others = ", ".join(p for p in paths if p != path)
                findings.append(Finding("warning", "duplicate-title", path, 0,
                                        f"title '{vault.pages[path].title}' is also used by "
                                        f"{others}; give each page its own title."))
    for link, claimants in collisions(vault.pages.values()):
        for page in claimants:
            others = ", ".join(p.path for p in claimants if p is not page)
            findings.append(Finding("error", "duplicate-permalink", page.path,
                                    permalink_line(vault.root, page),
                                    f"permalink '{link}' is also claimed by {others} (same "
                                    f"language: not a translation); give each page its own "
                                    f"permalink."))
    findings[start:] = [_placed(f, vault.pages[f.path], None, raw) for f in findings[start:]]
    if raw is not None:     # the raw note's own permalink line, where it is fixed
        findings[start:] = [replace(f, raw_line=raw.frontmatter_line(f.raw_path, "permalink"))
                            if f.kind == "duplicate-permalink" and f.raw_path else f
                            for f in findings[start:]]
    findings.sort(key=lambda f: (f.severity != "error", f.path, f.line, f.kind))
    return CheckReport(pages=len(vault.pages), findings=tuple(dict.fromkeys(findings)))


def unresolved_links(vault: Vault, raw_dir: Path | None = None, severity: Severity = "error"
                     ) -> Iterator[tuple[Finding, str]]:
    """The links that resolve to no page, each as `check`'s broken-link finding (placed at
    the raw note and line of a compiled page, of ``severity``: check.unresolved_links) with
    the fix alone: what `lint`'s unresolved-link rule reports (the same resolution as
    `check` and `graph broken`)."""
    raw = RawLines(raw_dir) if raw_dir is not None else None
    seen: set[Finding] = set()
    for page, link, result in vault.resolved_links():
        if result.status != "missing":
            continue
        fix = _missing_hint(vault, page, link, result).strip()
        finding = _placed(Finding(severity, "broken-link", page.path, link.line,
                                  f"{_shown(link, page)} points to no page. {fix}"),
                          page, link, raw)
        if finding not in seen:
            seen.add(finding)
            yield finding, fix


def _unprefixed(path: str, line: int, message: str) -> tuple[int, str]:
    """A page problem's message without the "path:" or "path:line:" it starts with (the
    finding's location says where), and the line that prefix gave."""
    if not message.startswith(f"{path}:"):
        return line, message
    rest = message[len(path) + 1:]
    number, sep, after = rest.partition(": ")
    if sep and number.isdigit():
        return line or int(number), after
    return line, rest.lstrip()


def _link_problems(vault: Vault, page: Page, link: Link, result: Resolution,
                   anchors: PageAnchors, attachments: Callable[[str, str], bool],
                   raw_folder: str = "raw") -> Iterator[tuple[str, str]]:
    """(kind, message) for each way ``link`` misses: no page, several pages, no such heading,
    block or attachment."""

    def shown() -> str:         # read from the page only for a link with a problem
        return _shown(link, page)

    if result.rule == "moved" and result.target:
        yield "stale-link", (f"{shown()} names a page that moved to {result.target}; it still "
                             f"resolves there, but write [[{link_name(vault, result.target, page.path)}"
                             f"]] instead (links people wrote are never rewritten).")
    if result.status == "missing":
        hint = _missing_hint(vault, page, link, result)
        yield "broken-link", f"{shown()} points to no page.{hint}"
    elif result.status == "ambiguous":
        yield "ambiguous-link", f"{shown()} {ambiguous_link(result.candidates)}"
    elif result.status == "attachment":
        if not attachments(link.target, page.path):
            part = "src" if _html_image(page, link) is not None else "name"
            yield "missing-attachment", (f"{shown()} names no file in the wiki or "
                                         f"{raw_folder}/; add the file or fix its {part}.")
    elif result.status in ("resolved", "self") and result.target in vault.pages:
        target = vault.pages[result.target]
        where = "this page" if result.target == page.path else result.target
        if link.heading and (part := anchors.missing_heading(target, link.heading)):
            yield "missing-heading", (f"{shown()}: {where} has no heading '{part}'; fix the "
                                      f"link or the heading.")
        if link.block and not anchors.has_block(target, link.block):
            yield "missing-block", (f"{shown()}: {where} has no block ^{link.block}; mark the "
                                    f"block (end its line with ' ^{link.block}') or fix the "
                                    f"link.")


def _missing_hint(vault: Vault, page: Page, link: Link, result: Resolution) -> str:
    """The fix of a link to no page. A note whose file name holds '#' ("C# notes.md", from an
    app that allows it) cannot be linked by that name: '#' starts a heading, so [[C# notes]]
    asks for page "C" — say so rather than "fix the link's spelling" of a page that exists."""
    if result.candidates:       # the link's heading and shown text kept in the fix
        anchor = f"#^{link.block}" if link.block else f"#{link.heading}" if link.heading else ""
        return (f" A page has it as an alias: link [[{_stem(result.candidates[0])}{anchor}|"
                f"{link.alias or link.target}]] instead.")
    if link.heading and not link.block:
        for name in (f"{link.target}#{link.heading}", f"{link.target}# {link.heading}",
                     f"{link.target} #{link.heading}", f"{link.target} # {link.heading}"):
            whole = vault.resolver.resolve_target(name, page.path)
            if whole.status == "resolved" and whole.target:
                return (f" '#' starts a heading in a link, so it asks for page "
                        f"'{link.target}': {whole.target} has '#' in its file name and cannot "
                        f"be linked by it. Rename that note without '#' (Obsidian allows none "
                        f"in a file name) and link the new name.")
    return " Create the page or fix the link's spelling."


def ambiguous_link(candidates: tuple[str, ...] | list[str]) -> str:
    """What `check` (and the dashboard's title of the link) says of a link that matches
    each of ``candidates``, with the fix."""
    return (f"matches {len(candidates)} pages ({', '.join(candidates)}); write the folder "
            f"path, e.g. [[{candidates[0][:-3]}]].")


def _shown(link: Link, page: Page | None = None) -> str:
    """The link as ``page`` writes it (``![pic](img/x.jpg)`` stays so, not ``![[img/x.jpg]]``),
    else as a person would write it."""
    if page is not None and link.line >= page.body_line:
        lines = _body_lines(page.body)
        at = link.line - page.body_line
        written = as_written(lines[at], link) if at < len(lines) else None
        if written is not None:
            return written
        if (tag := _html_image(page, link)) is not None:
            return tag
    anchor = f"#^{link.block}" if link.block else f"#{link.heading}" if link.heading else ""
    if link.syntax == "markdown":
        return f"({link.target}{anchor})"
    return f"{'!' if link.syntax == 'embed' else ''}[[{link.target}{anchor}]]"


def _html_image(page: Page, link: Link) -> str | None:
    """The ``<img src>`` tag ``link`` was read from (html_images.py), or None."""
    if link.syntax != "embed" or not link.is_attachment or link.line < page.body_line:
        return None
    lines = _body_lines(page.body)
    at = link.line - page.body_line
    if at >= len(lines) or as_written(lines[at], link) is not None:
        return None
    return image_tag(lines[at], link.target)


@functools.lru_cache(maxsize=4)
def _body_lines(body: str) -> list[str]:
    """A page body's lines (the findings of one page come together: split once)."""
    return body.split("\n")


def _placed(finding: Finding, page: Page, link: Link | None, raw: RawLines | None) -> Finding:
    """``finding`` with the raw note (and line of ``link``) of a compiled ``page``."""
    source = raw_source(page) if raw is not None else ""
    if not source or raw is None or raw.note(source) is None:
        return finding
    line = raw.line(page, source, link) if link is not None else 0
    return replace(finding, raw_path=source, raw_line=line)


def _placed_text(finding: Finding, page: Page, written: str, raw: RawLines | None
                 ) -> Finding:
    """``finding`` with the raw note of a compiled ``page`` and the line there that has
    ``written`` (a note's HTML, which no link names)."""
    placed = _placed(finding, page, None, raw)
    if not placed.raw_path or raw is None:
        return placed
    return replace(placed, raw_line=raw.text_line(placed.raw_path, written))


def link_name(vault: Vault, target: str, source_path: str) -> str:
    """The shortest name a link from ``source_path`` can use for ``target``: its file name
    when that resolves there, else its path without ``.md``."""
    stem = _stem(target)
    if vault.resolver.resolve_target(stem, source_path).target == target:
        return stem
    return target[:-3] if target.endswith(".md") else target


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name
