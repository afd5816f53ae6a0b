"""`mindgraph search QUERY`: keyword (BM25) search over the wiki's sections and pages."""

from __future__ import annotations

import time
from typing import Any

import click

from ..config import Settings
from ..errors import NotFoundError
from ..page.cache import ChangeSet, PageCache, open_pages
from ..retrieval.explain import explain
from ..retrieval.keyword import KeywordIndex, open_keyword_index
from .common import emit_json, json_option, workspace_options


def open_search(settings: Settings) -> tuple[PageCache, KeywordIndex, ChangeSet]:
    """The page cache and keyword index of the workspace, both brought up to date."""
    if not settings.wiki_dir.is_dir():
        raise NotFoundError(f"Wiki folder {settings.wiki_dir} does not exist. "
                            f"Run `mindgraph ingest` first or set paths.wiki.")
    cache, changes = open_pages(settings.wiki_dir, settings.state_dir)
    index = open_keyword_index(cache.pages, settings.state_dir / "keyword.pickle")
    return cache, index, changes


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="How many pages to return.")
@json_option
@workspace_options
def search_command(settings: Settings, query: tuple[str, ...], limit: int,
                   as_json: bool) -> None:
    """Find pages matching QUERY (keyword search; English, Japanese, Chinese, code tokens)."""
    text = " ".join(query).strip()
    started = time.perf_counter()
    cache, index, changes = open_search(settings)
    hits = index.search(text, limit)
    results = [explain(hit, cache.pages[hit.path], text) for hit in hits]
    elapsed = time.perf_counter() - started
    if as_json:
        payload: dict[str, Any] = {
            "query": text, "retriever": "keyword", "count": len(results),
            "results": [r.to_dict() for r in results],
            "index": {"pages": len(index), "updated": changes.to_dict()},
            "seconds": round(elapsed, 4),
        }
        if not index.query_terms(text):
            payload["note"] = "the query has no searchable terms (only stop words or symbols)"
        emit_json(payload)
        return
    if not results:
        click.echo(f"No page matches '{text}'.")
        return
    for r in results:
        where = f"  § {r.heading}" if r.heading else ""
        click.echo(f"{r.rank:2}. {r.path}  ({r.score:.3f}){where}")
        click.echo(f"    {r.snippet}")
        click.echo(f"    {r.why}")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(search_command)
