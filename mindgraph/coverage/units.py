"""The units of a codebase that coverage counts: source modules, or top-level folders.

For Python modules the public top-level classes and functions are read with ``ast`` (never
imported), with their docstrings, so that the wiki can cover a module by naming its symbols.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..fsutil import read_text

SOURCE_SUFFIXES = frozenset({
    ".py", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".go", ".rs", ".java", ".kt", ".rb", ".php",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".scala", ".sh", ".sql", ".lua",
})
DEFAULT_EXCLUDES = (
    "tests/*", "test/*", "*/tests/*", "*/test/*", "test_*.py", "*/test_*.py", "*_test.py",
    "*_test.go", "*.spec.ts", "*.test.ts", "*.test.js", "*/migrations/*", "migrations/*",
    "__init__.py", "*/__init__.py", "__main__.py", "*/__main__.py", "conftest.py",
    "*/conftest.py", "setup.py",
)
MAX_SOURCE_BYTES = 5_000_000    # a generated or minified file this big holds no docs to cover
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "env", ".tox", "__pycache__",
                       "site-packages", "build", "dist", ".mypy_cache", ".pytest_cache",
                       ".eggs", "target", "vendor"})


@dataclass(frozen=True)
class Symbol:
    """A public top-level class or function of a Python module."""

    name: str
    kind: str          # class | function
    line: int
    docstring: str = ""


@dataclass(frozen=True)
class Unit:
    """One thing coverage counts: a module (file) or a service (top-level folder)."""

    id: str                      # relative POSIX path: "pkg/api.py" or "billing"
    kind: str                    # module | service
    path: str
    symbols: tuple[Symbol, ...] = ()
    docstring: str = ""
    members: tuple[str, ...] = field(default=())   # services: their module paths


def discover_units(codebase: Path, excludes: tuple[str, ...] = DEFAULT_EXCLUDES,
                   service_level: bool = False, skipped: list[str] | None = None) -> list[Unit]:
    """Every source module under ``codebase`` not excluded, or its top-level folders (a
    source file at the top level is its own unit there too, counted as the module it is).

    Files that are not regular (a FIFO would block the read forever) are no units; each is
    named in ``skipped`` with the reason."""
    codebase = Path(codebase)
    skipped = [] if skipped is None else skipped
    modules = sorted((_module_unit(codebase, file, skipped)
                      for file in _source_files(codebase, excludes, skipped)),
                     key=lambda unit: unit.id)
    if not service_level:
        return modules
    services: dict[str, list[Unit]] = {}
    top_files = []
    for module in modules:
        if "/" in module.path:
            services.setdefault(module.path.split("/", 1)[0], []).append(module)
        else:
            top_files.append(module)
    folders = [Unit(id=name, kind="service", path=name,
                    symbols=tuple(s for m in members for s in m.symbols),
                    docstring="\n".join(m.docstring for m in members if m.docstring),
                    members=tuple(m.path for m in members))
               for name, members in services.items()]
    return sorted(folders + top_files, key=lambda unit: unit.id)


def _source_files(codebase: Path, excludes: tuple[str, ...], skipped: list[str]) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(codebase, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                         and not d.endswith(".egg-info"))
        for name in sorted(files):
            file = Path(folder) / name
            if file.suffix not in SOURCE_SUFFIXES or file.is_symlink():
                continue
            rel = file.relative_to(codebase).as_posix()
            if any(fnmatch.fnmatch(rel, pattern) for pattern in excludes):
                continue
            try:
                mode = file.stat(follow_symlinks=False).st_mode
            except OSError:         # vanished while we walked
                continue
            if not stat.S_ISREG(mode):
                skipped.append(f"{rel}: not a regular file (a FIFO, socket or device); "
                               f"skipped. Remove it from the codebase folder.")
                continue
            found.append(file)
    return found


def _module_unit(codebase: Path, file: Path, skipped: list[str]) -> Unit:
    rel = file.relative_to(codebase).as_posix()
    if file.suffix != ".py":
        return Unit(id=rel, kind="module", path=rel)
    try:
        symbols, docstring = python_symbols(file)
    except OSError as exc:      # changed under us, unreadable or over MAX_SOURCE_BYTES
        skipped.append(f"{rel}: symbols not read ({exc.strerror or exc}).")
        symbols, docstring = (), ""
    return Unit(id=rel, kind="module", path=rel, symbols=symbols, docstring=docstring)


def python_symbols(file: Path) -> tuple[tuple[Symbol, ...], str]:
    """Public top-level classes and functions of a Python file, and the module docstring.

    A file that does not parse yields no symbols (it is still a unit); one that is not a
    regular file or is over MAX_SOURCE_BYTES raises OSError (fsutil.UnreadableFile)."""
    text = read_text(file, errors="replace", max_bytes=MAX_SOURCE_BYTES)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return (), ""
    symbols = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and not node.name.startswith("_"):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            symbols.append(Symbol(node.name, kind, node.lineno, ast.get_docstring(node) or ""))
    return tuple(symbols), ast.get_docstring(tree) or ""
