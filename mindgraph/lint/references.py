"""References that point nowhere: footnotes without a definition, and recorded sources
(the raw notes a page was compiled from, files it cites as its sources) that are gone.

Broken links and missing attachments are ``check``'s; these are the references a link check
does not see. In a scoped view (``seen``) a file the view does not see "does not exist", in
the words of one that does not: which of the two it is shows nowhere.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterator

from ..page.markdown import mask_code
from ..page.model import Page
from .findings import LintFinding, section_at

_FOOTNOTE_REF = re.compile(r"\[\^([^\]\s]+)\](?!:)")
_FOOTNOTE_DEF = re.compile(r"^\s{0,3}\[\^([^\]\s]+)\]:")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def reference_findings(page: Page, raw_dir: Path, workspace: Path,
                       seen: Callable[[Path], bool] | None = None,
                       raw_label: str = "raw") -> Iterator[LintFinding]:
    """Footnote references without a definition, and source files that do not exist (or,
    with ``seen``, that it does not accept: a view's files only); ``raw_label``: the raw
    folder as configured, as the messages name it."""
    yield from _footnotes(page)
    yield from _sources(page, raw_dir, workspace, seen, raw_label.rstrip("/") or "raw")


def _footnotes(page: Page) -> Iterator[LintFinding]:
    lines = mask_code(page.body.split("\n"))
    defined = {m.group(1) for line in lines if (m := _FOOTNOTE_DEF.match(line))}
    reported: set[str] = set()
    for number, line in enumerate(lines):
        for match in _FOOTNOTE_REF.finditer(line):
            label = match.group(1)
            if label in defined or label in reported:
                continue
            reported.add(label)
            line_no = page.body_line + number
            yield LintFinding(
                "dangling-reference", page.path, section_at(page, line_no), line_no,
                f"Footnote [^{label}] is cited but never defined.",
                f"Add a line '[^{label}]: <the source>' to the page, or remove the citation.")


def _sources(page: Page, raw_dir: Path, workspace: Path, seen: Callable[[Path], bool] | None,
             raw_label: str) -> Iterator[LintFinding]:
    roots = (workspace.resolve(), raw_dir.resolve())
    for key, path in _source_paths(page.frontmatter):
        if _URL.match(path):
            continue
        base = raw_dir if key.endswith("sources") else workspace
        target = (base / path).resolve()
        # raw/ may be configured outside the workspace (paths.raw: ../vault): its notes are
        # the workspace's as much as the folder's own files (verify reads both the same way)
        if not any(target.is_relative_to(root) for root in roots):
            yield LintFinding(
                "dangling-reference", page.path, "lead", 0,
                f"'{key}' names {path!r}, which is outside the workspace and {raw_label}/.",
                f"Name a file inside the workspace or {raw_label}/ in '{key}', or remove the "
                f"entry.")
        elif not target.is_file() or (seen is not None and not seen(target)):
            shown = f"{raw_label}/{path}" if base == raw_dir else path
            yield LintFinding(
                "dangling-reference", page.path, "lead", 0,
                f"'{key}' names {shown}, which does not exist.",
                "Run 'mindgraph ingest' (it drops pages whose raw note was deleted), or "
                f"correct the entry in '{key}'.")


def _source_paths(frontmatter: Any) -> Iterator[tuple[str, str]]:
    """(key, path) of every recorded source: ``sources`` (raw-relative), ``provenance.sources``
    and ``references`` entries that are paths (workspace-relative)."""
    if not isinstance(frontmatter, dict):
        return
    provenance = frontmatter.get("provenance")
    candidates = [("sources", frontmatter.get("sources")), ("references",
                                                            frontmatter.get("references"))]
    if isinstance(provenance, dict):
        candidates.append(("provenance.sources", provenance.get("sources")))
    for key, value in candidates:
        for item in value if isinstance(value, list) else []:
            path = item.get("path") if isinstance(item, dict) else item
            if isinstance(path, str) and path.strip() and not path.startswith("[["):
                yield key, path     # as written: " note.md" is a file name of its own

