"""What a page cites as evidence: its raw notes, the URLs in its body, and local files.

A URL is any ``http(s)://`` address in the body. A local file is the target of a markdown
link (not an image) with a relative path to a text file (``.txt``, ``.html``, ``.csv``, …;
a ``.md`` target is a link to another page, not evidence), written ``file:<path as written>``.
The set of these references is what freshness compares (``references_changed``).
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

from .record import Provenance

URL = re.compile(r"https?://[^\s)\]>\"'`]+")
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
FILE_SUFFIXES = (".txt", ".text", ".html", ".htm", ".xhtml", ".csv", ".tsv", ".rst", ".json",
                 ".yaml", ".yml", ".xml", ".log", ".org", ".adoc")


def cited_urls(body: str) -> list[str]:
    """The URLs in ``body``, in order, each once (trailing punctuation dropped)."""
    return list(dict.fromkeys(url.rstrip(".,;:") for url in URL.findall(body)))


def cited_files(body: str) -> list[str]:
    """The local text files ``body`` links to (relative paths as written, normalised)."""
    out = []
    for target in _LINK.findall(body):
        if _SCHEME.match(target) or target.startswith(("#", "//")):
            continue
        path = unquote(target.split("#", 1)[0].split("?", 1)[0]).replace("\\", "/")
        if path and path.lower().endswith(FILE_SUFFIXES):
            out.append(posixpath.normpath(path) if not path.startswith("/") else path)
    return list(dict.fromkeys(out))


def reference_set(body: str, provenance: Provenance) -> tuple[str, ...]:
    """Every source the page cites, sorted: raw:path, file:path and URLs."""
    refs = {f"raw:{s.path}" for s in provenance.sources}
    refs.update(cited_urls(body))
    refs.update(f"file:{path}" for path in cited_files(body))
    return tuple(sorted(refs))
