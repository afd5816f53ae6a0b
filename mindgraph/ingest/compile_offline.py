"""The offline compiler: a deterministic raw → wiki rewrite with no model and no network.

It writes the common page shape (see render.py): the title (frontmatter, first H1, file name),
a type, tags (the note's own and its folder), keywords (up to three salient terms), aliases,
real dates with their source, the provenance record (origin compiled_offline, generator, raw
sources); a short extractive summary; the sections normalised; and wikilinks where the text
mentions another page. The same input always gives the same bytes.

Salient terms are ``keywords``, not tags: they are words the compiler counted, not a choice a
person made, and as tags they linked every release note that says "fixed" or "no longer" to
every other (shared-tag edges, graph/build.py): 12,000 of the 18,000 such edges on the Obsidian
Help vault (bench/bench_tags.py).
"""

from __future__ import annotations

from .extract import folder_tag, outline, page_type, salient_terms, summary
from .index import TitleIndex
from .linker import add_links
from .normalise import normalise_body
from .render import CompiledPage, NoteInput, dedupe, page_frontmatter, render_page

OFFLINE_VERSION = "5"   # 2: CJK links on word boundaries, CJK tags; 3: the provenance record;
#                          4: salient terms are keywords, not tags; 5: keywords keep non-ASCII
#                          letters (café, Zürich, naïve were caf, rich, na)


class OfflineCompiler:
    """Compiles one note at a time, in the calling thread or, for a large run, in
    ``processes`` forked workers (0: one per core; workers.py)."""

    identity = f"offline:v{OFFLINE_VERSION}"
    concurrency = 1
    # A crash loses at most this much offline work, so the state is saved at most this often.
    commit_interval_s = 0.5
    # Links depend on other pages' titles: a page is recompiled when those change.
    links_in_key = True
    key_identity = identity     # no prompt: what it writes depends on the code version only

    def __init__(self, processes: int = 1):
        self.processes = processes

    def compile(self, note: NoteInput, index: TitleIndex) -> CompiledPage:
        """Compile one note into its wiki page."""
        page = note.page
        title = page.title
        body = normalise_body(page.body, title)
        text = summary(body) or outline(body)
        existing = _linked_pages(page, note.wiki_path, index)
        body, _ = add_links(body, note.wiki_path, index, existing)
        tags = list(page.tags)
        folder = folder_tag(note.path)
        if folder:
            tags.append(folder)
        keywords = _own_keywords(page.frontmatter) + salient_terms(page.body, title)
        meta = page_frontmatter(note, title=title, type_=page_type(page.frontmatter, title,
                                                                    page.body),
                                tags=tags, aliases=list(page.aliases), dates=note.dates(),
                                compiler=self.identity, origin="compiled_offline",
                                extra={"keywords": dedupe(keywords)} if keywords else None)
        return CompiledPage(note.wiki_path, render_page(meta, text, body))


def _own_keywords(frontmatter) -> list[str]:
    """The raw note's own ``keywords:`` (a list or a comma-separated string), kept first."""
    value = (frontmatter or {}).get("keywords")
    if isinstance(value, str):
        return [k.strip() for k in value.split(",") if k.strip()]
    return [str(k) for k in value] if isinstance(value, list) else []


def _linked_pages(page, wiki_path: str, index: TitleIndex) -> set[str]:
    """Pages the note already links to (so no second link to them is added)."""
    out = set()
    for link in page.links:
        if link.is_attachment or link.is_self:
            continue
        target = index.resolver.resolve_target(link.target, wiki_path).target
        if target:
            out.add(target)
    return out
