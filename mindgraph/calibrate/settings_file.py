"""Write calibrated settings into mindgraph.yml, changing only the lines of those keys.

The file is the user's: comments, order and every other key stay as they are. A key already
set under ``retrieval:`` has its value replaced on its line; a missing one is added at the top
of that section (which is added at the end when there is none). The result is loaded again
before it replaces the file (atomically); a file that would not load is left untouched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError
from ..fsutil import atomic_write_text

_SECTION = re.compile(r"^([A-Za-z_][\w-]*):\s*(?:#.*)?$")


def set_retrieval_keys(path: Path, values: dict[str, Any],
                       check: Callable[[Path], Any]) -> None:
    """Set ``retrieval.<key>: value`` for each of ``values`` in the YAML file at ``path``;
    ``check(path)`` must load the edited file (it raises ConfigError when it does not)."""
    lines = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    for key, value in values.items():
        lines = _set(lines, key, json.dumps(value, ensure_ascii=False))
    text = "\n".join(lines)
    text = text if text.endswith("\n") else text + "\n"
    trial = path.with_name(f".{path.name}.calibrate-check")
    trial.write_text(text, encoding="utf-8")
    try:
        check(trial)
    except ConfigError as exc:
        raise ConfigError(f"{path}: writing the calibrated settings would break it ({exc}); "
                          f"nothing was written. Set them by hand: {values}.") from None
    finally:
        trial.unlink(missing_ok=True)
    atomic_write_text(path, text)


def _set(lines: list[str], key: str, value: str) -> list[str]:
    start = next((i for i, line in enumerate(lines)
                  if (m := _SECTION.match(line)) and m.group(1) == "retrieval"), None)
    if start is None:
        while lines and not lines[-1].strip():
            lines.pop()
        return lines + ["", "retrieval:", f"  {key}: {value}", ""]
    end = next((i for i in range(start + 1, len(lines)) if _SECTION.match(lines[i])),
               len(lines))
    pattern = re.compile(rf"^(\s+){re.escape(key)}:\s*[^#\n]*?(\s+#.*)?$")
    for i in range(start + 1, end):
        found = pattern.match(lines[i])
        if found:
            lines[i] = f"{found.group(1)}{key}: {value}{found.group(2) or ''}"
            # a block list under the key ("- a" lines below it) is what the value replaces
            below = i + 1
            while below < end and re.match(rf"^{found.group(1)}\s*- ", lines[below]):
                below += 1
            return lines[:i + 1] + lines[below:]
    indent = next((re.match(r"^(\s+)", lines[i]).group(1) for i in range(start + 1, end)
                   if lines[i].strip() and not lines[i].lstrip().startswith("#")
                   and re.match(r"^\s+", lines[i])), "  ")
    return lines[:start + 1] + [f"{indent}{key}: {value}"] + lines[start + 1:]
