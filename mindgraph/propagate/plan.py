"""A propagation plan: the drafts to write, each page's hash when planned, and the digest a
person approves (SHA-256 over the sorted targets, their hashes and the new texts)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..fsutil import atomic_write_text

PLAN_VERSION = 1


@dataclass(frozen=True)
class Target:
    """One page to update."""

    path: str
    sha256: str          # of the page's bytes when planned
    how: str             # substituted | marked | rewritten
    changed_page: str    # the page whose change this follows ("" for a stated correction)
    old: str
    new: str
    text: str            # the page text to write

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"path": self.path, "sha256": self.sha256, "how": self.how,
                "changed_page": self.changed_page, "old": self.old, "new": self.new,
                "text": self.text}


@dataclass(frozen=True)
class PropagationPlan:
    """The targets, when they were planned and who drafted them."""

    targets: tuple[Target, ...]
    created: str
    drafter: str

    @property
    def digest(self) -> str:
        """SHA-256 over the sorted targets, their hashes and the texts to write."""
        body = [[t.path, t.sha256, t.text] for t in sorted(self.targets, key=lambda t: t.path)]
        canonical = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def to_dict(self, texts: bool = True) -> dict[str, Any]:
        """JSON form (``texts=False``: without the page texts, for listings)."""
        targets = [t.to_dict() if texts else {k: v for k, v in t.to_dict().items() if k != "text"}
                   for t in self.targets]
        return {"version": PLAN_VERSION, "digest": self.digest, "created": self.created,
                "drafter": self.drafter, "targets": targets}


def plans_dir(state_dir: Path) -> Path:
    """Where propagation plans wait for approval: the queue."""
    return Path(state_dir) / "propagate" / "plans"


def save_plan(plan: PropagationPlan, state_dir: Path) -> Path:
    """Write the plan into the queue and return its path."""
    path = plans_dir(state_dir) / f"{plan.digest[:16]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(plan.to_dict(), indent=1, ensure_ascii=False) + "\n")
    return path


def load_plan(path: Path) -> PropagationPlan:
    """Read a plan file (InputError naming the file when it is not one)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("version") != PLAN_VERSION:
            raise ValueError(f"plan version {data.get('version')!r}, expected {PLAN_VERSION}")
        targets = tuple(Target(str(t["path"]), str(t["sha256"]), str(t["how"]),
                               str(t["changed_page"]), str(t["old"]), str(t["new"]),
                               str(t["text"])) for t in data["targets"])
        return PropagationPlan(targets, str(data["created"]), str(data.get("drafter", "")))
    except FileNotFoundError:
        raise InputError(f"{path}: no such plan. Run `mindgraph propagate --plan` to make one; "
                         f"it prints the plan's path.") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path}: not a propagation plan ({exc}). Give the path that "
                         f"`mindgraph propagate --plan` printed.") from None


def queued(state_dir: Path) -> list[tuple[Path, PropagationPlan]]:
    """Every plan in the queue, oldest first (unreadable files left out)."""
    out = []
    folder = plans_dir(state_dir)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.append((path, load_plan(path)))
        except InputError:
            continue
    return sorted(out, key=lambda item: item[1].created)
