"""Commands about one page: `get` (text or its data block), `url`, `links`."""

from __future__ import annotations

import re
import time

import click
import yaml

from ..core import Mindgraph
from .common import echo, emit_json, json_option, open_core, workspace_options
from .whole_number import WholeNumber

_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_H1 = re.compile(r"[ ]{0,3}#[ \t]+\S")      # "#tag" opens no heading


def _open(settings) -> Mindgraph:
    settings.require_wiki()
    return open_core(settings)


@click.command("get")
@click.argument("page")
@workspace_options
@click.option("--extract", type=click.Choice(["json", "yaml"]), default=None,
              help="Print the page's fenced data block as clean JSON or YAML.")
@click.option("--block", type=WholeNumber(min=1), default=1, show_default=True,
              help="Which data block (1 = first) with --extract.")
@click.option("--section", "section_id", default=None, help="Print only this section (id).")
@json_option
def get_command(settings, page: str, extract: str | None, block: int, section_id: str | None,
                as_json: bool) -> None:
    """Print PAGE (path, file name, title or alias), one section, or its agent-data block."""
    if block != 1 and not extract:
        raise click.UsageError("--block picks a data block for --extract; add --extract json "
                               "(or yaml).")
    mg = _open(settings)
    started = time.perf_counter()
    found = mg.page(page)
    # a page read is a lookup: what calibrate learns a query was answered by (usage_signals)
    mg.usage_log.record("cli", page, intent="get", kind="lookup", results=[found.path],
                        result_count=1, latency_ms=(time.perf_counter() - started) * 1e3)
    if extract:
        data = mg.extract(page, block)
        if extract == "json":
            emit_json(data)
        else:
            echo(yaml.safe_dump(data, allow_unicode=True, sort_keys=False).rstrip())
        return
    if section_id is not None:
        _, section = mg.section(page, section_id)
        if as_json:
            emit_json({"page": found.path, "section": section.id, "heading": section.heading,
                       "path": list(section.path), "text": section.text,
                       "lines": [section.start_line, section.end_line]})
        else:
            echo(section.text)
        return
    if as_json:
        emit_json({"path": found.path, "title": found.title, "aliases": list(found.aliases),
                   "tags": list(found.tags), "frontmatter": dict(found.frontmatter),
                   "sections": [{"id": s.id, "heading": s.heading, "level": s.level,
                                 "path": list(s.path)} for s in found.sections],
                   "body": found.body})
        return
    echo(_with_title(found.title, found.body))


def _with_title(title: str, body: str) -> str:
    """The page as a reader meets it: ``# title`` first, unless the body opens with its own
    H1 (a compiled page keeps its title in the frontmatter: `get` began with a blank line)."""
    body = _LEADING_BLANK_LINES.sub("", body).rstrip()
    return body if _H1.match(body) else f"# {title}\n\n{body}".rstrip()


@click.command("url")
@click.argument("page")
@workspace_options
@json_option
def url_command(settings, page: str, as_json: bool) -> None:
    """Print a stable address for PAGE: obsidian:// when wiki/ (or a folder above it) holds
    a .obsidian folder, i.e. wiki/ is opened as a vault in Obsidian (raw/ being a vault does
    not count: the page is in wiki/), else file://."""
    mg = _open(settings)
    url = mg.url(page)
    if as_json:
        emit_json({"page": mg.page(page).path, "url": url})
    else:
        echo(url)


@click.command("links")
@click.argument("page")
@workspace_options
@json_option
def links_command(settings, page: str, as_json: bool) -> None:
    """Print PAGE's outgoing links (with where they resolve) and its backlinks."""
    data = _open(settings).links(page)
    outgoing, backlinks = data["outgoing"], data["backlinks"]
    if as_json:
        emit_json(data)
        return
    echo(data["page"])
    echo(f"  outgoing ({len(outgoing)}):")
    for item in outgoing:
        where = item["page"] or f"{item['status'].upper()} {item['target']}"
        if item["status"] in ("attachment", "self"):
            where = f"{item['status']}: {item['target'] or '#' + (item['heading'] or '')}"
        if item.get("stale"):
            where += f"  (stale: [[{item['target']}]] moved there)"
        if item["syntax"] == "inferred":
            where += f"  (inferred {item['relation']}, cosine {item['score']:.2f}, " \
                     f"{item['judge']})"
        else:
            where += _typed(item)
        echo(f"    line {item['line']:>4}  -> {where}")
    echo(f"  backlinks ({len(backlinks)}):")
    for item in backlinks:
        echo(f"    {item['page']}:{item['line']}{_typed(item)}")


def _typed(link: dict) -> str:
    """"  (depends_on)" for a typed link (frontmatter, manual): a plain wikilink says nothing."""
    relation = link.get("relation")
    return f"  ({relation})" if relation and relation != "wikilink" else ""


def register(group: click.Group) -> None:
    """Add these commands to the CLI group."""
    for command in (get_command, url_command, links_command):
        group.add_command(command)
