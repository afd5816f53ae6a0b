"""`mindgraph graph ...`: neighbours, backlinks, paths, hubs, communities, orphans, broken links
and export of the knowledge graph."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from ..config import Settings
from ..errors import NotFoundError
from ..fsutil import writable
from ..graph.build import EXTRACTED, INFERRED, KnowledgeGraph, open_graph
from ..graph.communities import MIN_COMMUNITY_SIZE, detect_communities
from ..graph.export import graphml_text, to_json
from ..graph.query import (backlinks, hubs, neighbors, orphans, shortest_path,
                           step_directions)
from ..page.cache import open_pages
from ..page.vault import PageLimits
from ..page.lookup import find_page
from ..page.rawlines import RawLines, raw_source
from .common import (SubcommandGroup, echo, emit_json, group_workspace_options, json_option,
                     open_core, workspace_options)
from .no_pages import why_no_pages
from .whole_number import WholeNumber

GRAPH_FILE = "graph.pickle"
# `graph path`: how each step is joined (graph.query.step_directions)
ARROWS = {"out": "->", "in": "<-", "both": "<>", "tag": "~"}
PATH_LEGEND = ("(-> links to the next page, <- is linked from it, <> both, ~ shares a tag; "
               "--directed follows links only forwards)")


def open_workspace_graph(settings: Settings, save: bool = True) -> tuple[Any, KnowledgeGraph]:
    """The pages (``.pages``) and the knowledge graph of the workspace, both up to date; of
    the CLI's identity's view when ``scopes.local`` names one. ``save``: see open_graph."""
    settings.require_wiki()
    if settings.scopes.local:
        core = open_core(settings)
        return core.vault(), core.graph()
    can_write = writable(settings.state_dir)        # a read-only state folder: in memory
    cache, _ = open_pages(settings.wiki_dir, settings.state_dir,
                          limits=PageLimits.of(settings.limits), save=can_write)
    return cache, open_graph(cache.pages, settings.state_dir / GRAPH_FILE, settings.graph,
                             save and can_write)


def _page(cache: Any, name: str, settings: Settings) -> str:
    if not cache.pages:         # why there is none: never compiled, or no notes in raw/
        raise NotFoundError(f"No page named '{name.strip()}'. {why_no_pages(settings)}")
    return find_page(cache.pages, name).path


@click.group("graph", cls=SubcommandGroup)
@group_workspace_options
def graph_group() -> None:
    """Ask the knowledge graph: links, backlinks, paths, hubs, communities, orphans."""


@graph_group.command("neighbors")
@click.argument("page")
@click.option("--depth", "-d", type=WholeNumber(1, 10), default=1, show_default=True,
              help="How many links away to go.")
@click.option("--direction", type=click.Choice(["both", "out", "in"]), default="both",
              show_default=True, help="Follow links out of the page, into it, or both.")
@click.option("--links-only", is_flag=True, help="Ignore shared-tag (inferred) edges.")
@json_option
@workspace_options
def neighbors_command(settings: Settings, page: str, depth: int, direction: str,
                      links_only: bool, as_json: bool) -> None:
    """Pages within --depth links of PAGE (path, file name, title or alias)."""
    cache, kg = open_workspace_graph(settings)
    path = _page(cache, page, settings)
    kinds = (EXTRACTED,) if links_only else (EXTRACTED, INFERRED)
    found = neighbors(kg, path, depth, direction, kinds)  # type: ignore[arg-type]
    if as_json:
        emit_json({"page": path, "depth": depth, "direction": direction,
                   "neighbors": [asdict(n) for n in found]})
        return
    echo(f"{len(found)} page(s) within {depth} of {path}:")
    for n in found:
        arrow = {"out": "->", "in": "<-", "both": "<>"}[n.direction]
        also = f"; also {', '.join(n.also)}" if n.also else ""
        echo(f"  {n.distance}  {n.path}  ({arrow} {n.relation} via {n.via}{also})")


@graph_group.command("backlinks")
@click.argument("page")
@json_option
@workspace_options
def backlinks_command(settings: Settings, page: str, as_json: bool) -> None:
    """Pages that link to PAGE."""
    cache, kg = open_workspace_graph(settings)
    path = _page(cache, page, settings)
    found = backlinks(kg, path)
    if as_json:
        emit_json({"page": path, "backlinks": [asdict(b) for b in found]})
        return
    echo(f"{len(found)} backlink(s) to {path}:")
    for b in found:
        lines = ", ".join(map(str, b.lines))
        echo(f"  {b.source}  ({b.relation}, line {lines})")


@graph_group.command("path")
@click.argument("source")
@click.argument("target")
@click.option("--directed", is_flag=True, help="Follow links only in their direction.")
@click.option("--via-tags", is_flag=True, help="Also step between pages that share a tag.")
@json_option
@workspace_options
def path_command(settings: Settings, source: str, target: str, directed: bool,
                 via_tags: bool, as_json: bool) -> None:
    """A shortest chain of links between SOURCE and TARGET, followed either way unless
    --directed; each arrow shows which way its link goes (-> <- <>, ~ a shared tag)."""
    cache, kg = open_workspace_graph(settings)
    a, b = _page(cache, source, settings), _page(cache, target, settings)
    kinds = (EXTRACTED, INFERRED) if via_tags else (EXTRACTED,)
    found = shortest_path(kg, a, b, directed=directed, kinds=kinds)
    ways = step_directions(kg, found, kinds)
    if as_json:
        emit_json({"source": a, "target": b, "length": len(found) - 1, "path": found,
                   "steps": [{"from": here, "to": there, "direction": way}
                             for here, there, way in zip(found, found[1:], ways)]})
        return
    # each step drawn the way its link goes: an undirected path may walk one backwards
    echo(found[0] + "".join(f" {ARROWS[way]} {page}" for way, page in zip(ways, found[1:])))
    if set(ways) - {"out"}:
        echo(PATH_LEGEND)


@graph_group.command("hubs")
@click.option("--limit", "-n", type=WholeNumber(1, 10_000), default=10, show_default=True,
              help="How many pages to list, the most connected first.")
@json_option
@workspace_options
def hubs_command(settings: Settings, limit: int, as_json: bool) -> None:
    """The most connected pages."""
    _, kg = open_workspace_graph(settings)
    found = hubs(kg, limit)
    if as_json:
        emit_json({"hubs": [asdict(h) for h in found]})
        return
    if found:
        echo("neighbours  page  (pages it links with either way or shares tags with)")
    for h in found:
        echo(f"{h.degree:10}  {h.path}  (backlinks {h.backlinks}, links {h.outlinks}, "
             f"shared tags only {h.inferred})")
    if not found:
        echo(f"0 hubs. {why_no_pages(settings)}")


@graph_group.command("communities")
@click.option("--limit", "-n", type=WholeNumber(1, 100_000), default=20, show_default=True,
              help="How many communities to list, the largest first.")
@click.option("--min-size", type=WholeNumber(1), default=MIN_COMMUNITY_SIZE, show_default=True,
              help="Hide smaller communities (a page with no links is a community of one).")
@json_option
@workspace_options
def communities_command(settings: Settings, limit: int, min_size: int, as_json: bool) -> None:
    """Communities (Leiden), largest first, each named after its most central page."""
    cache, kg = open_workspace_graph(settings, save=False)
    cached = kg._communities is not None     # false too when the graph was built or changed
    found = [c for c in detect_communities(kg) if c.size >= min_size]
    if not cached and writable(settings.state_dir):
        kg.save(settings.state_dir / GRAPH_FILE)  # the graph with its communities, once
    shown = found[:limit]
    if as_json:
        emit_json({"seed": settings.graph.seed, "count": len(found),
                   "communities": [{"id": c.id, "name": c.name, "center": c.center,
                                    "size": c.size, "members": list(c.members)}
                                   for c in shown]})
        return
    for c in shown:
        echo(f"#{c.id} {c.name} ({c.size} pages): " + ", ".join(c.members[:5])
             + (" ..." if c.size > 5 else ""))
    if not shown:
        echo(f"0 communities of {min_size} or more pages." + (
            " A page with no links is a community of one: --min-size 1 lists those."
            if min_size > 1 and cache.pages else "")
            + ("" if cache.pages else f" {why_no_pages(settings)}"))


@graph_group.command("orphans")
@click.option("--no-backlinks", is_flag=True,
              help="List pages nothing links to (Obsidian's sense), even if they link out.")
@json_option
@workspace_options
def orphans_command(settings: Settings, no_backlinks: bool, as_json: bool) -> None:
    """Pages with no links in or out."""
    cache, kg = open_workspace_graph(settings)
    found = orphans(kg, no_backlinks=no_backlinks)
    if as_json:
        emit_json({"orphans": found, "count": len(found)})
        return
    for path in found:
        echo(path)
    if not found:
        echo("0 orphans." + ("" if cache.pages else f" {why_no_pages(settings)}"))


@graph_group.command("broken")
@json_option
@workspace_options
def broken_command(settings: Settings, as_json: bool) -> None:
    """Links that resolve to no page (missing) or to several (ambiguous), at the raw note
    and line to fix for a compiled page (as `check` says), with `check`'s severity: a
    missing one is a warning with check.unresolved_links: warning."""
    cache, kg = open_workspace_graph(settings)
    found = kg.broken_links()
    raw = RawLines(settings.raw_dir)
    rows = []
    for b in found:
        row = {**asdict(b), **_raw_place(cache.pages.get(b.source), b, raw),
               "severity": (settings.check.unresolved_links if b.status == "missing"
                            else "error")}
        if b.status == "missing":
            row["alias_of"] = list(kg.missing_hints(b))
        rows.append(row)
    if as_json:
        emit_json({"broken_links": rows, "count": len(rows)})
        return
    if not rows:
        echo("0 broken links.")
    for row in rows:
        extra = ""
        if row.get("candidates"):
            extra = " (could be: " + ", ".join(row["candidates"]) + ")"
        elif row.get("alias_of"):
            extra = " (an alias of: " + ", ".join(row["alias_of"]) + ")"
        where = (f"{settings.paths.raw.rstrip('/')}/{row['raw_path']}:{row['raw_line']}"
                 if row.get("raw_line") else f"{row['source']}:{row['line']}")
        if row["severity"] == "warning":
            extra += " (a warning: check.unresolved_links)"
        echo(f"{where}: {row['status']} [[{row['target']}]]{extra}")


def _raw_place(page: Any, broken: Any, raw: RawLines) -> dict[str, Any]:
    """Where a broken link of a compiled page is fixed: its raw note and line there
    (``raw_path``, ``raw_line``, as `check` says); nothing for a page written by hand."""
    source = raw_source(page) if page is not None else ""
    if not source or raw.note(source) is None:
        return {}
    link = next((link for link in page.links if link.line == broken.line
                 and link.target == broken.target), None)
    line = raw.line(page, source, link) if link is not None else 0
    return {"raw_path": source, "raw_line": line} if line else {}


@graph_group.command("export")
@click.option("--format", "fmt", type=click.Choice(["json", "graphml"]), default="json",
              show_default=True,
              help="json, or graphml for Gephi, yEd and Cytoscape (both with communities).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@workspace_options
def export_command(settings: Settings, fmt: str, output: Path | None) -> None:
    """Export nodes, edges and communities as JSON or GraphML."""
    _, kg = open_workspace_graph(settings)
    text = (json.dumps(to_json(kg), indent=1, ensure_ascii=False) + "\n" if fmt == "json"
            else graphml_text(kg))
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    echo(f"Wrote {len(kg)} pages and {kg.number_of_edges()} "
         f"edges to {output}.", err=True)


def register(group: click.Group) -> None:
    """Add this command group to the CLI."""
    group.add_command(graph_group)
