"""Parameter and result types the MCP tool modules share (mcp.py, mcp_pages.py): the Field
bounds become each tool's JSON schema, so bad arguments are refused before any work is done."""

from typing import Annotated, Any

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

# Parameter types shared by the tools; the Field bounds become the JSON schema.
PageName = Annotated[str, Field(min_length=1, max_length=1000,
                                description="Page path (e.g. 'Folder/Note.md'), title, alias "
                                            "or file name")]
SectionId = Annotated[str, Field(min_length=1, max_length=1000,
                                 description="Section id from get_page or list_sections "
                                             "('lead' is the text before the first heading)")]
MaxChars = Annotated[int, Field(ge=0, le=200_000,
                                description="Return at most this many characters of text "
                                            "(0: none, only the outline)")]
DateText = Annotated[str | None, Field(pattern=r"^\d{4}-\d{2}-\d{2}$",
                                       description="YYYY-MM-DD")]
# The structured result is a JSON object; the text block is the same object, compact.
JsonResult = Annotated[CallToolResult, dict[str, Any]]

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
# The one kind of write an agent may make: applying a plan a person approved by its digest
# (wiki/ only; a second apply of the same plan is refused, so it is idempotent).
APPROVED_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                 idempotent_hint=True, open_world_hint=False)
