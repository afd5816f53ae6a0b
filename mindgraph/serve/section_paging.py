"""A page's sections listed a page at a time, the same way by REST ``GET /page`` and the MCP
tools ``get_page`` and ``list_sections``: at most ``sections_limit`` (1,000 by default, at
most 10,000) from ``sections_offset``, and ``sections_total`` only when that is not all of
them, so a page of fewer sections is answered exactly as it was before sections were paged.

A page of 85,000 headings (compiled before ``compile.max_note_headings``) answered REST 8.8 MB
in 5.4 s, and an MCP tool megabytes an agent pays for in tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, TypeVar

from pydantic import Field

SECTIONS_LIMIT = 1_000
MAX_SECTIONS_LIMIT = 10_000
MAX_SECTIONS_OFFSET = 1_000_000

# the parameters' descriptions, said alike in the OpenAPI document and the tools' schemas
OFFSET_HELP = "The first section listed (0: the first)"
LIMIT_HELP = ("At most this many sections listed (1,000 by default, at most 10,000); "
              "'sections_total' says when there are more: list the rest with sections_offset")

# the MCP tools' parameters (REST declares them with FastAPI's Query, from the same bounds)
SectionsOffset = Annotated[int, Field(ge=0, le=MAX_SECTIONS_OFFSET, description=OFFSET_HELP)]
SectionsLimit = Annotated[int, Field(ge=1, le=MAX_SECTIONS_LIMIT, description=LIMIT_HELP)]

T = TypeVar("T")


def sections_page(sections: Sequence[T], offset: int, limit: int
                  ) -> tuple[Sequence[T], dict[str, int]]:
    """The sections listed from ``offset`` (at most ``limit``), and ``{"sections_total": n}``
    to add to the answer when they are not all ``n`` of them (else ``{}``)."""
    listed = sections[offset:offset + limit]
    return listed, ({"sections_total": len(sections)} if len(listed) < len(sections) else {})
