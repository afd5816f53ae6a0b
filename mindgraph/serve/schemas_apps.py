"""Request and response models of the note-app routes (serve/rest_apps.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

AppName = Annotated[str | None, Field(None, min_length=1, max_length=100, description=(
    "The note app (an adapters: entry) when several are configured"))]
ITEM_ID_PATTERN = r"^[A-Za-z0-9_-]{1,100}$"


class ProjectOut(BaseModel):
    """A project (list) of the app."""

    id: str
    name: str
    kind: Literal["tasks", "notes"]


class ProjectsOut(BaseModel):
    """The app's projects."""

    app: str
    projects: list[ProjectOut]


class ItemOut(BaseModel):
    """An item as the app holds it (times ISO 8601, UTC)."""

    id: str
    title: str
    content: str
    project: str
    project_name: str
    tags: list[str]
    due: str | None
    modified: str | None
    completed: str | None


class ItemResultOut(BaseModel):
    """What create and update answer."""

    app: str
    action: Literal["created", "updated"]
    item: ItemOut
    url: str = Field(description="The deep link that opens the item in the app")
    raw_note: str = Field(description="The raw note `mindgraph pull` files it as (writes go "
                                      "to the app, never to raw/)")
    next: str
    relevance: str | None = Field(None, description=(
        "create, when a Trunk Catalog is kept: what the calling agent does next (pick a "
        "trunk, append 'why: <trunk> — <reason>' with PATCH)"))
    relevance_error: str | None = Field(None, description=(
        "create: why the Trunk Catalog could not be read (the item is created all the same)"))


class ItemIn(BaseModel):
    """A new item."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=500, pattern=r"\S")
    content: str = Field("", max_length=100_000)
    project: str | None = Field(None, min_length=1, max_length=200,
                                description="A project's name or id (default: the inbox)")
    app: AppName = None


class ItemPatch(BaseModel):
    """What to change: the title, the content, or a line appended to the content."""

    model_config = ConfigDict(extra="forbid")
    title: str | None = Field(None, min_length=1, max_length=500, pattern=r"\S")
    content: str | None = Field(None, max_length=100_000)
    append: str | None = Field(None, min_length=1, max_length=2_000, pattern=r"\S",
                               description="A line added at the end of the content")
    app: AppName = None
