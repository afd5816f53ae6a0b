"""The page model: frozen values that every other layer reads.

A Page is one markdown file of the wiki, identified by its vault-relative POSIX path
(``Plugins/Note composer.md``), never by its bare file stem. It has sections (lead text and
H2/H3/H4), links as written (unresolved), tags and aliases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

# How a link was written.
# "manual": a typed link made through the links API (mindgraph/documents/), which the
# compiler writes into the page's frontmatter as ``manual_links``.
LinkSyntax = Literal["wikilink", "embed", "markdown", "frontmatter", "manual", "inferred"]
# What kind of relation the link expresses (typed links come from frontmatter keys).
Relation = Literal["wikilink", "reference", "depends_on", "extends", "related",
                   "supersedes", "contradicts"]
TYPED_RELATIONS: tuple[str, ...] = ("reference", "depends_on", "extends", "related",
                                    "supersedes", "contradicts")

ATTACHMENT_EXTENSIONS = frozenset({
    # images
    "png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "ico", "tif", "tiff", "heic",
    # audio
    "mp3", "wav", "m4a", "ogg", "3gp", "flac", "webm", "aac", "opus",
    # video
    "mp4", "mov", "mkv", "ogv", "avi",
    # documents and other files Obsidian treats as attachments
    "pdf", "zip", "docx", "xlsx", "pptx", "csv", "txt", "json", "canvas", "base", "epub",
})


@dataclass(frozen=True)
class Section:
    """A piece of a page: the lead text before the first heading, or one H2/H3/H4 section.

    ``text`` is the section's own text only: a parent section does not contain the text of
    its child sections. ``id`` is stable for a given heading path (slug of the path, with a
    numeric suffix when the same path occurs twice in one page); the lead section is "lead".
    """

    id: str
    heading: str          # "" for the lead section
    level: int            # 0 for lead, else 2, 3 or 4
    path: tuple[str, ...]  # heading path from the H2 down to this heading; () for lead
    text: str
    start_line: int       # 1-based line of the heading (or of the first body line for lead)
    end_line: int         # 1-based last line, inclusive


@dataclass(frozen=True)
class Link:
    """One link as written in a page, before resolution."""

    target: str                 # the path part: "Note", "folder/Note.md", "" for [[#Heading]]
    syntax: LinkSyntax
    relation: Relation = "wikilink"
    heading: str | None = None  # [[T#Heading]] → "Heading" (nested headings joined by "#")
    block: str | None = None    # [[T#^block]] → "block"
    alias: str | None = None    # display text
    line: int = 0               # 1-based line in the file; 0 for frontmatter links
    section_id: str = "lead"    # the section the link sits in
    is_attachment: bool = False  # target has a non-markdown extension (image, pdf, ...)
    context: str | None = None  # manual links: the sentence saying why the pages are linked
    link_id: str | None = None  # manual links: the id to delete it by (DELETE /links/{id})
    score: float | None = None  # inferred links: the pages' cosine similarity
    judge: str | None = None    # inferred links: the model that typed it, or "similarity:<model>"

    @property
    def is_self(self) -> bool:
        """True for a same-page link such as [[#Heading]]."""
        return self.target == ""


@dataclass(frozen=True)
class Page:
    """A parsed markdown page."""

    path: str                          # vault-relative POSIX path, with ".md"
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]              # normalised: no '#', original case kept, deduplicated
    sections: tuple[Section, ...]
    links: tuple[Link, ...]
    frontmatter: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    has_frontmatter: bool = False
    body: str = ""                     # text after the frontmatter
    body_line: int = 1                 # 1-based file line where the body starts
    content_hash: str = ""             # SHA-256 of the file's bytes
    frontmatter_error: str | None = None  # why the frontmatter could not be read, if so
    # body lines [start, end) of a leading summary callout that only repeats the body
    copied_summary: tuple[int, int] = (0, 0)
    unindexed_chars: int = 0           # section text past the index limit (not searchable)

    @property
    def indexed_body(self) -> str:
        """The body as indexed and quoted: without a summary callout that repeats it."""
        start, end = self.copied_summary
        if start == end:
            return self.body
        lines = self.body.split("\n")
        return "\n".join(lines[:start] + lines[end:])

    @property
    def stem(self) -> str:
        """File name without folder and without ".md"."""
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name

    @property
    def page_links(self) -> tuple[Link, ...]:
        """Links that point at pages (not attachments, not same-page anchors)."""
        return tuple(link for link in self.links if not link.is_attachment and not link.is_self)

    def section(self, section_id: str) -> Section | None:
        """The section with this id, or None."""
        for section in self.sections:
            if section.id == section_id:
                return section
        return None
