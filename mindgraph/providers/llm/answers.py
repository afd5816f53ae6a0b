"""Reading a model's JSON answer at the boundary."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


def json_list(answer: str, key: str) -> list[Any]:
    """The list under ``key`` of a JSON object answer (a ```json fence around it is fine);
    ValueError saying what was wrong when the answer is not such an object."""
    try:
        data = json.loads(_FENCE.sub("", answer))
        items = data[key]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{type(exc).__name__}: {exc}") from None
    if not isinstance(items, list):
        raise ValueError(f"{key} is not a list")
    return items
