"""`mindgraph mcp`: the MCP server, over stdio (for agents that spawn it) or streamable HTTP."""

from __future__ import annotations

import click

from ..core import Mindgraph
from .common import echo, workspace_options
from .serve_cmd import bind_token, ensure_port_free
from .watch_cmd import served, watch_flag, watch_options
from .whole_number import WholeNumber


@click.command("mcp")
@workspace_options
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True,
              help="stdio: the agent spawns this command; http: streamable HTTP at /mcp.")
@click.option("--host", default=None,
              help="Address to bind with --transport http (default: serve.host, 127.0.0.1).")
@click.option("--port", type=WholeNumber(1, 65535), default=None,
              help="Port with --transport http (default: serve.port + 1, 8766).")
@watch_flag
@watch_options
def mcp_command(settings, transport: str, host: str | None, port: int | None, watch_on: bool,
                watch: dict) -> None:
    """Serve the wiki as MCP tools (get_page, get_section, backlinks, timeline, ...); --watch
    also keeps it current as raw/ and wiki/ change (tool sync_status)."""
    from ..serve.mcp import create_http_app, create_mcp_server

    if not watch_on:
        settings.require_wiki()     # a watcher compiles it
    if transport == "http":         # refused before anything starts
        host = host or settings.serve.host
        port = port or settings.serve.port + 1
        token = bind_token(settings, host)
        ensure_port_free(host, port)
    from .no_pages import has_pages, why_no_pages

    if not watch_on and not has_pages(settings.wiki_dir):
        # every tool's empty answer said nothing of why (stderr: stdout carries the protocol)
        echo(f"mindgraph: {why_no_pages(settings)} (`mcp --watch` compiles them too.)",
             err=True)
    mg = Mindgraph(settings)
    # stdout may carry the protocol: the watcher logs to stderr
    with served(mg, watch_on, watch) as watcher:
        status = watcher.status.to_dict if watcher else None
        if transport == "stdio":
            # stdout carries the protocol: nothing else may be printed there.
            from ..serve.mcp_stdio import run_stdio, stdin_is_terminal

            if stdin_is_terminal():
                echo("mindgraph: speaking MCP over stdio; connect a client, Ctrl-C to stop "
                     "(the README's 'Connect an MCP client' shows the configuration).",
                     err=True)
            code = run_stdio(create_mcp_server(mg, status), lambda m: echo(m, err=True))
            if code:
                raise SystemExit(code)
            return

        import uvicorn

        from ..serve.tcp import http_protocol

        app = create_http_app(create_mcp_server(mg, status), token, host, settings.serve,
                              mg.scopes)
        echo(f"mindgraph MCP on http://{host}:{port}/mcp (wiki: {settings.wiki_dir})",
             err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning",
                    http=http_protocol(settings.serve.header_timeout_s,
                                       settings.serve.max_connections,
                                       settings.serve.max_connections_per_client,
                                       settings.serve.max_header_bytes),
                    timeout_graceful_shutdown=settings.serve.shutdown_timeout_s)


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(mcp_command)
