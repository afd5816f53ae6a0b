"""Query parameters several REST routes share: a page name, a day, the result limit and the
trust filters. Each is bounded by the schema, so a bad value is 422 before any work."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from fastapi import Query
from pydantic import BeforeValidator

MAX_LIMIT = 100
MIN_TRUST = Query(None, pattern="^[Ll]?[0-3]$", description="Only pages verified to at least this "
                  "level: L0..L3 (L2: claims checked against the evidence)")
FRESH = Query(False, alias="fresh", description="Only pages whose verification is current")


def _iso_day(value: Any) -> Any:
    # pydantic would also take "0.0" or "1700000000" as a date (Unix time): only YYYY-MM-DD
    if isinstance(value, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError("use a date as YYYY-MM-DD")
    return value


Day = Annotated[dt.date, BeforeValidator(_iso_day)]


def page_name() -> Any:
    # a fresh Query per parameter: FastAPI binds a Query object to the first name it serves
    return Query(..., min_length=1, max_length=1000, description="Path, title, alias or file name")


__all__ = ["Day", "FRESH", "MAX_LIMIT", "MIN_TRUST", "page_name"]
