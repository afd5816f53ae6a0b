"""The dashboard's static files, read from the package once: the page, its script and style,
the vendored libraries (pinned in ``static/vendor/MANIFEST.json``) and the code-highlighting
stylesheet generated from Pygments."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from .render import pygments_css

STATIC = Path(__file__).resolve().parent / "static"
MANIFEST = STATIC / "vendor" / "MANIFEST.json"
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".json": "application/json",
          ".txt": "text/plain; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}


@functools.cache
def static_files() -> dict[str, tuple[bytes, str]]:
    """Every file the dashboard serves: relative name → (bytes, media type). A fixed map, so a
    request can name nothing else (no path is ever joined from the URL)."""
    files = {file.relative_to(STATIC).as_posix(): (file.read_bytes(), _TYPES[file.suffix])
             for file in sorted(STATIC.rglob("*")) if file.is_file() and file.suffix in _TYPES}
    files["highlight.css"] = (pygments_css().encode(), _TYPES[".css"])
    return files


def vendor_manifest() -> list[dict[str, Any]]:
    """The vendored libraries: file, package, version, npm integrity, sha256, licence."""
    return json.loads(MANIFEST.read_text(encoding="utf-8"))["files"]


def vendor_problems() -> list[str]:
    """What does not match the manifest: a file missing, changed, or without its licence."""
    problems = []
    for entry in vendor_manifest():
        file = STATIC / "vendor" / entry["file"]
        if not file.is_file():
            problems.append(f"{file}: missing (see {MANIFEST})")
        elif hashlib.sha256(file.read_bytes()).hexdigest() != entry["sha256"]:
            problems.append(f"{file}: sha256 differs from {MANIFEST}; copy the file unchanged "
                            f"from {entry['package']}@{entry['version']} or update the manifest")
        if not (STATIC / "vendor" / entry["license_file"]).is_file():
            problems.append(f"{entry['package']}: licence file {entry['license_file']} missing")
    return problems


__all__ = ["MANIFEST", "STATIC", "static_files", "vendor_manifest", "vendor_problems"]
