"""A verification plan: what would be written, to which pages, as they are now.

The plan lists each target page, the SHA-256 of its bytes when planned and the two records
to write. Its digest is a SHA-256 over the sorted targets, their hashes and the planned
metadata (canonical JSON), so a person approving the digest approves exactly that content.
Plans are JSON files under <state>/trust/plans/, named by the digest's first 16 characters.
"""

from __future__ import annotations

import datetime as dt
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
    """One page to update: its path, its hash when planned, the records to write."""

    path: str
    sha256: str
    verification: dict[str, Any]
    evidence: dict[str, Any]
    verdict: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"path": self.path, "sha256": self.sha256, "verdict": self.verdict,
                "verification": self.verification, "evidence": self.evidence}


@dataclass(frozen=True)
class Plan:
    """The targets and when they were planned."""

    targets: tuple[Target, ...]
    created: str
    validator: str

    @property
    def digest(self) -> str:
        """SHA-256 over the sorted targets, their hashes and the metadata to write."""
        body = [[t.path, t.sha256, t.verification, t.evidence]
                for t in sorted(self.targets, key=lambda t: t.path)]
        canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """JSON form (with the digest, checked again when loaded)."""
        return {"version": PLAN_VERSION, "digest": self.digest, "created": self.created,
                "validator": self.validator, "targets": [t.to_dict() for t in self.targets]}


def plans_dir(state_dir: Path) -> Path:
    """Where plans are kept."""
    return Path(state_dir) / "trust" / "plans"


def save_plan(plan: Plan, state_dir: Path) -> Path:
    """Write the plan under the state folder and return its path."""
    path = plans_dir(state_dir) / f"{plan.digest[:16]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(plan.to_dict(), indent=1, ensure_ascii=False) + "\n")
    return path


def load_plan(path: Path) -> Plan:
    """Read a plan file (InputError naming the file when it is not one)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("version") != PLAN_VERSION:
            raise ValueError(f"plan version {data.get('version')!r}, expected {PLAN_VERSION}")
        targets = tuple(Target(str(t["path"]), str(t["sha256"]), dict(t["verification"]),
                               dict(t["evidence"]), str(t.get("verdict", "")))
                        for t in data["targets"])
        return Plan(targets, str(data["created"]), str(data.get("validator", "")))
    except FileNotFoundError:
        raise InputError(f"{path}: no such plan. Run `mindgraph verify` to make one; it "
                         f"prints the plan's path.") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path}: not a verification plan ({exc}). Give the path that "
                         f"`mindgraph verify` printed.") from None


def now_iso() -> str:
    """The current UTC time, to the second."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
