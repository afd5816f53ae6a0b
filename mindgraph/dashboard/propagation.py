"""The propagation queue as the dashboard shows it: each queued plan's drafts with the passage
each one changes (the lines the draft removes and adds, against the page as it is now), so a
person can read what they approve.

Only pages inside wiki/ are read (a plan names them; a tampered plan naming another file gets
no passage, and `apply` refuses it anyway).
"""

from __future__ import annotations

import difflib
import hashlib
from pathlib import Path
from typing import Any

from ..propagate.plan import PropagationPlan, Target

CONTEXT_LINES = 2          # unchanged lines shown around each changed passage


def queue_view(pending: list[tuple[Path, PropagationPlan]], wiki_dir: Path) -> dict[str, Any]:
    """The plans (oldest first) with each target's changed passages."""
    root = Path(wiki_dir).resolve()
    return {"plans": [{"plan": path.name, "digest": plan.digest, "created": plan.created,
                       "drafter": plan.drafter,
                       "targets": [_target_view(t, root) for t in plan.targets]}
                      for path, plan in pending]}


def _target_view(target: Target, root: Path) -> dict[str, Any]:
    file = (root / target.path).resolve()
    inside = file.is_relative_to(root) and target.path.endswith(".md")
    try:
        data = file.read_bytes() if inside else None
    except OSError:
        data = None
    current = data is not None and hashlib.sha256(data).hexdigest() == target.sha256
    now = data.decode("utf-8", "replace") if data is not None else ""
    return {"path": target.path, "how": target.how, "changed_page": target.changed_page,
            "old": target.old, "new": target.new, "unchanged_since_plan": current,
            "passages": passages(now, target.text) if inside else []}


def passages(before: str, after: str) -> list[dict[str, Any]]:
    """Each changed passage: its first line in ``before`` (1-based), the lines around it,
    the lines removed and the lines added."""
    a, b = before.split("\n"), after.split("\n")
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        out.append({"line": i1 + 1, "before": a[max(0, i1 - CONTEXT_LINES):i1],
                    "removed": a[i1:i2], "added": b[j1:j2],
                    "after": a[i2:i2 + CONTEXT_LINES]})
    return out
