"""Request and response models of the documents, links, upload, rescan and status routes
(serve/rest_documents.py), so the OpenAPI document says what each takes and returns."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..documents.service import ID_PATTERN

DocId = Annotated[str, Field(pattern=ID_PATTERN, description="A document id (16 hex digits, "
                                                             "from GET /documents)")]
Kind = Literal["wikilink", "reference", "depends_on", "extends", "related", "supersedes",
               "contradicts"]
ScopeKind = Literal["personal", "team", "shared"]
Name = Annotated[str, Field(min_length=1, max_length=100)]
# explicit characters: the schema's generator reads \s and \w as ECMA's, the server as Unicode
Tag = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^ \t\r\n,]+$",
                           description="A tag, without spaces or commas")]


class ScopeOut(BaseModel):
    """Where a document belongs (null: its scope cannot be determined)."""

    tenant: str
    kind: str
    owner: str | None


class DocumentOut(BaseModel):
    """A document (a wiki page) as listed."""

    id: str
    page: str
    title: str
    type: Any = None
    tags: list[str]
    scope: ScopeOut | None
    source: str | None = Field(description="The raw note it is compiled from (null: a wiki "
                                           "page of its own)")
    created_via_api: bool
    overlay: dict[str, Any] | None = Field(description="Metadata set with PUT, applied when "
                                                       "it is compiled")


class DocumentListOut(BaseModel):
    """One page of the documents the caller sees; ``total`` counts only those."""

    total: int
    offset: int
    limit: int
    documents: list[DocumentOut]


class SectionBrief(BaseModel):
    """A section of a document."""

    id: str
    heading: str
    level: int


class DocumentDetailOut(DocumentOut):
    """A document with its text and sections."""

    text: str
    sections: list[SectionBrief]


class DocumentIn(BaseModel):
    """A new note, written to the caller's scope folder (personal unless told)."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=300)
    text: str = Field("", max_length=900_000, description="The note's markdown body")
    tags: list[Tag] = Field(default_factory=list, max_length=50)
    type: Name | None = None
    scope: ScopeKind | None = Field(None, description="personal (default), team or shared")
    team: Name | None = Field(None, description="With scope team: one of your teams")


class CompileOutcome(BaseModel):
    """What compiling the new note did."""

    status: str
    reason: str


class CreatedOut(BaseModel):
    """A note the API wrote: its document, and whether it is searchable yet."""

    id: str
    page: str
    raw: str
    searchable: bool = Field(description="Compiled and in the keyword index and the graph; "
                                         "a hybrid search embeds it before its next answer")
    searchable_since: str | None
    compile: CompileOutcome


class DocumentPatch(BaseModel):
    """Metadata to set (null clears a value set before; an absent key is left as it is)."""

    model_config = ConfigDict(extra="forbid")

    title: Annotated[str, Field(min_length=1, max_length=300)] | None = None
    tags: Annotated[list[Tag], Field(max_length=50)] | None = None
    type: Name | None = None


class DeletedOut(BaseModel):
    """A deleted document."""

    id: str
    page: str
    deleted: bool
    links_removed: int


class LinkEntry(BaseModel):
    """One link of a document, with its kind and where it comes from."""

    kind: str
    syntax: str
    origin: Literal["extracted", "manual", "inferred"]
    line: int
    section: str | None
    context: str | None
    link_id: str | None = Field(description="Manual links: the id for DELETE /links/{id}")
    page: str | None
    id: str | None = Field(description="The linked document's id (null: unresolved)")
    target: str | None = None
    status: str | None = None
    score: float | None = Field(None, description="Inferred links: the pages' cosine")
    judge: str | None = Field(None, description="Inferred links: the model that typed it, "
                              "or similarity:<embedding model> when none did")


class LinksOut(BaseModel):
    """Outbound links and backlinks of a document (a link to a page the caller cannot see is
    "missing", as one to no page is; backlinks from such pages are left out)."""

    id: str
    page: str
    outbound: list[LinkEntry]
    backlinks: list[LinkEntry]


class LinkIn(BaseModel):
    """A manual typed link between two documents."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: DocId = Field(alias="from")
    target: DocId = Field(alias="to")
    kind: Kind
    context: str = Field("", max_length=1000, description="The sentence that says why")


class LinkOut(BaseModel):
    """A manual link."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    source: str = Field(alias="from", serialization_alias="from")
    target: str = Field(alias="to", serialization_alias="to")
    from_page: str
    to_page: str
    kind: str
    context: str
    origin: Literal["manual"]
    created_at: str
    deleted: bool | None = None


class LinksBatchIn(BaseModel):
    """Documents whose links to read at once."""

    model_config = ConfigDict(extra="forbid")

    ids: list[DocId] = Field(min_length=1, max_length=100)


class LinksBatchOut(BaseModel):
    """Links of each document asked for, by id."""

    documents: dict[str, LinksOut]


class UploadOut(BaseModel):
    """The notes an upload wrote, each compiled."""

    folder: str
    documents: list[CreatedOut]


class RescanIn(BaseModel):
    """Options of a rescan."""

    model_config = ConfigDict(extra="forbid", strict=True)

    embed: bool = Field(True, description="Also embed the changed sections")


class JobOut(BaseModel):
    """One piece of work: its phase and progress."""

    id: str
    kind: str
    tenant: str | None
    phase: str
    done: int
    total: int
    current: str
    started_at: str
    finished_at: str | None
    outcome: dict[str, Any] | None
    error: str | None


class RescanOut(BaseModel):
    """The rescan started (follow it on GET /status)."""

    job: JobOut


class StatusOut(BaseModel):
    """What is being compiled or embedded for the caller's tenant, and what finished."""

    busy: bool
    running: list[JobOut]
    recent: list[JobOut]
    time: float
