"""Resolve link targets to page paths the way Obsidian does, and report what it cannot.

Order, case-insensitive throughout (Obsidian matches file names without regard to case), and
blind to Unicode normalisation (``fold``: a file name macOS wrote decomposed, "Café" as
"Cafe" + U+0301 or "デ" as "テ" + U+3099, answers the composed name a link is typed with):
  1. the exact vault path, then the path + ".md";
  2. relative to the linking page's folder ("./x", "../x", or a folder path under it);
  3. a unique file name (``[[Note]]`` when only one ``Note.md`` exists in the vault);
  4. a unique path suffix (``[[Sub/Note]]`` matching ``Folder/Sub/Note.md``).
Several candidates for a name or suffix: like Obsidian, the one nearest to the linking page wins
(the unique candidate sharing the longest folder prefix with it, rule "nearest": in a vault with
en/ and ja/ trees, a ja page's ``[[Canvas]]`` is ja's Canvas). When no single candidate is
nearest the link is "ambiguous": reported, never guessed.
Aliases are not link targets in Obsidian (it rewrites ``[[Alias]]`` to ``[[Note|Alias]]`` when
you pick one); a missing target that equals a page's alias is reported as "missing" with that
page as a hint in ``candidates``.
A missing target that names a page that moved (``moved``: old path → new path, kept by
ingest) resolves to the moved page with rule "moved": the link is stale, and `check` says
how to write it.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Literal

from .model import Link

Status = Literal["resolved", "missing", "ambiguous", "attachment", "self"]


@dataclass(frozen=True)
class Resolution:
    """Where a link points: a page path (resolved), or why it does not."""

    status: Status
    target: str | None = None
    candidates: tuple[str, ...] = ()
    rule: str = ""   # which rule matched: path, path+md, relative, name, suffix


class LinkResolver:
    """Maps link targets to page paths over a fixed set of pages."""

    def __init__(self, paths: Iterable[str], aliases: dict[str, Iterable[str]] | None = None,
                 moved: dict[str, str] | None = None):
        self._by_path: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        self._by_alias: dict[str, list[str]] = defaultdict(list)
        self.paths: list[str] = sorted(paths)
        for path in self.paths:
            self._by_path[fold(path)] = path
            stem = path[:-3] if path.lower().endswith(".md") else path
            self._by_name[fold(stem.rsplit("/", 1)[-1])].append(path)
        for path, names in (aliases or {}).items():
            for name in names:
                self._by_alias[fold(name)].append(path)
        self._moved: dict[str, str] = {}
        self._folders: dict[str, str] = {}      # source path → its folder, normalised
        self._unique: dict[str, Resolution] = {}    # file name → its only page, resolved
        moved_names: dict[str, set[str]] = defaultdict(set)
        for old, new in (moved or {}).items():
            hit = self._by_path.get(fold(new))
            if hit is None:
                continue
            stem = old[:-3] if old.lower().endswith(".md") else old
            self._moved[fold(stem)] = hit
            moved_names[fold(stem.rsplit("/", 1)[-1])].add(hit)
        for name, targets in moved_names.items():
            if len(targets) == 1:
                self._moved.setdefault(name, next(iter(targets)))

    def named(self, name: str) -> tuple[str, ...]:
        """The paths whose file name (without .md, any case) is ``name`` (lower case)."""
        return tuple(self._by_name.get(fold(name), ()))

    def resolve(self, link: Link, source_path: str) -> Resolution:
        """Resolve one link written in the page at ``source_path``."""
        if link.is_self:
            return Resolution("self", source_path, rule="self")
        if link.is_attachment:
            return Resolution("attachment")
        return self.resolve_target(link.target, source_path)

    def resolve_target(self, target: str, source_path: str = "") -> Resolution:
        """Resolve a bare target string such as "Note", "Folder/Note.md" or "../Note"."""
        raw = target.strip().replace("\\", "/")
        if not raw:
            return Resolution("self", source_path or None, rule="self")
        if "/" not in raw and raw != "." and raw != "..":
            return self._resolve_bare(raw, source_path)
        return self._resolve_path(raw, source_path)

    def _resolve_path(self, raw: str, source_path: str) -> Resolution:
        """resolve_target for a stripped, non-empty target, by every rule in order."""
        absolute = raw.startswith("/")
        key = fold(posixpath.normpath(raw.lstrip("/"))) if raw.strip("/") else ""
        if not key or key == ".":
            return Resolution("missing")
        relative_first = raw.startswith("./") or raw.startswith("../")
        steps = []
        folder = fold(posixpath.dirname(source_path))
        relative_key = fold(posixpath.normpath(posixpath.join(folder, raw))) if folder else key
        if relative_first and not absolute:
            steps.append(("relative", relative_key))
        steps.append(("path", key))
        if not absolute and not relative_first and folder:
            steps.append(("relative", relative_key))
        for rule, candidate in steps:
            found = self._probe(candidate, rule)
            if found is not None:
                return found
        if key.startswith("../"):
            return self._missing(raw)
        stem = key[:-3] if key.endswith(".md") else key
        if "/" not in stem:
            matches = self._by_name.get(stem, [])
            if len(matches) == 1:
                return Resolution("resolved", matches[0], tuple(matches), "name")
            if len(matches) > 1:
                return _nearest(matches, source_path)
            return self._missing(raw)
        suffix = "/" + stem + ".md"
        name = stem.rsplit("/", 1)[-1]
        matches = [p for p in self._by_name.get(name, []) if fold(p).endswith(suffix)]
        if len(matches) == 1:
            return Resolution("resolved", matches[0], tuple(matches), "suffix")
        if len(matches) > 1:
            return _nearest(matches, source_path)
        return self._missing(raw)

    def _resolve_bare(self, raw: str, source_path: str) -> Resolution:
        """resolve_target for a target without a folder (``[[Note]]``, most links): the same
        rules and answers, without normalising paths per link (a third of `stats` at 10,000
        notes)."""
        key = fold(raw)
        found = self._probe(key, "path")
        if found is not None:
            return found
        folder = self._folders.get(source_path)
        if folder is None:
            folder = fold(posixpath.normpath(posixpath.dirname(source_path))) \
                if posixpath.dirname(source_path) else ""
            self._folders[source_path] = folder
        if folder and folder != ".":
            found = self._probe(folder + "/" + key, "relative")
            if found is not None:
                return found
        name = key[:-3] if key.endswith(".md") else key
        found = self._unique.get(name)
        if found is not None:
            return found
        matches = self._by_name.get(name, [])
        if len(matches) == 1:
            # the same answer for every page that links so: made once (a frozen dataclass
            # takes microseconds to make, and the linker asks once per link it writes)
            found = self._unique[name] = Resolution("resolved", matches[0], tuple(matches),
                                                    "name")
            return found
        if len(matches) > 1:
            return _nearest(matches, source_path)
        return self._missing(raw)

    def _probe(self, candidate: str, rule: str) -> Resolution | None:
        """The page at ``candidate`` (rule ``rule``), else at ``candidate`` + ".md"."""
        hit = self._by_path.get(candidate)
        if hit is not None:
            return Resolution("resolved", hit, (hit,), rule)
        hit = self._by_path.get(candidate + ".md")
        if hit is not None:
            return Resolution("resolved", hit, (hit,), rule + "+md")
        return None

    def _missing(self, raw: str) -> Resolution:
        if self._moved:
            key = fold(posixpath.normpath(raw.strip().lstrip("/"))).removesuffix(".md")
            moved = self._moved.get(key)
            if moved is not None:
                return Resolution("resolved", moved, (moved,), "moved")
        hints = self._by_alias.get(fold(raw).removesuffix(".md"), [])
        return Resolution("missing", None, tuple(sorted(hints)), "alias-hint" if hints else "")


def fold(name: str) -> str:
    """``name`` as link resolution compares it: lower case and NFC-composed."""
    return name.lower() if name.isascii() else unicodedata.normalize("NFC", name).lower()


def nearest_path(paths: Iterable[str], source_path: str) -> str | None:
    """The unique path sharing the most leading folders with ``source_path`` (at least one),
    or None when no single path is nearest."""
    source = fold(source_path).split("/")[:-1]

    def shared(path: str) -> int:
        count = 0
        for a, b in zip(source, fold(path).split("/")[:-1]):
            if a != b:
                break
            count += 1
        return count

    scores = sorted(((shared(p), p) for p in paths), reverse=True)
    if not scores:
        return None
    if scores[0][0] > 0 and (len(scores) == 1 or scores[0][0] > scores[1][0]):
        return scores[0][1]
    return None


def _nearest(matches: list[str], source_path: str) -> Resolution:
    """The nearest candidate as "resolved" (rule "nearest"), else "ambiguous"."""
    candidates = tuple(sorted(matches))
    nearest = nearest_path(matches, source_path)
    if nearest is not None:
        return Resolution("resolved", nearest, candidates, "nearest")
    return Resolution("ambiguous", None, candidates, "ambiguous")


def page_key(path: str) -> str:
    """The lower-case file name without ".md": what link resolution matches on."""
    name = fold(path).rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def link_keys(target: str, source_path: str) -> frozenset[str]:
    """The page keys a link target can resolve to, whatever pages exist.

    Mirrors LinkResolver: every rule probes a path (or path + ".md") whose file name is one
    of these, so adding or removing a page can only change links that carry its key.
    """
    raw = target.strip().replace("\\", "/")
    if "/" not in raw and raw and raw != "." and raw != "..":    # [[Note]]: most links
        key = fold(raw)
        return frozenset((key, key[:-3])) if key.endswith(".md") else frozenset((key,))
    return _path_link_keys(raw, source_path)


def _path_link_keys(raw: str, source_path: str) -> frozenset[str]:
    if not raw.strip("/"):
        return frozenset()
    key = fold(posixpath.normpath(raw.lstrip("/")))
    folder = fold(posixpath.dirname(source_path))
    relative = fold(posixpath.normpath(posixpath.join(folder, raw))) if folder else key
    keys = set()
    for probe in (key, relative):
        last = probe.rsplit("/", 1)[-1]
        keys.add(last)
        if last.endswith(".md"):
            keys.add(last[:-3])
    return frozenset(keys)
