"""The Dockerfile and docker-compose.yml as the deployment tests read them."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def instructions(path: Path = REPO / "Dockerfile") -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction, continuation lines joined, comments dropped."""
    logical, pending = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    found = []
    for text in logical:
        word, _, rest = text.strip().partition(" ")
        found.append((word.upper(), rest.strip()))
    return found


def arguments(instruction_args: str) -> list[str]:
    """An instruction's exec-form (JSON array) or shell-form arguments as a list."""
    if instruction_args.startswith("["):
        return json.loads(instruction_args)
    return shlex.split(instruction_args)


def env(path: Path = REPO / "Dockerfile") -> dict[str, str]:
    """Every ENV of the image, as the container sees it (PATH left out)."""
    values: dict[str, str] = {}
    for word, rest in instructions(path):
        if word == "ENV":
            for key, value in re.findall(r"(\w+)=(\S+)", rest):
                if key != "PATH":
                    values[key] = value
    return values


def compose(path: Path = REPO / "docker-compose.yml") -> dict:
    """docker-compose.yml parsed (no interpolation)."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))
