"""`mindgraph serve`: the REST API under uvicorn, on 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import ipaddress
import os

import click

from ..core import Mindgraph
from .common import ConfigClickError, workspace_options


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_token(settings, host: str) -> str | None:
    """The bearer token for a server on ``host``: optional on loopback, required elsewhere."""
    token = os.environ.get(settings.serve.token_env) or None
    if not is_loopback(host):
        click.echo(f"Warning: binding {host} exposes your notes beyond this machine.",
                   err=True)
        if token is None:
            raise ConfigClickError(
                f"Binding {host} needs a bearer token: export {settings.serve.token_env}=<a long "
                f"random string> (clients send 'Authorization: Bearer <token>'), or bind "
                f"127.0.0.1.")
    return token


@click.command("serve")
@workspace_options
@click.option("--host", default=None, help="Address to bind (default: serve.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), default=None,
              help="Port (default: serve.port, 8765).")
def serve_command(settings, host: str | None, port: int | None) -> None:
    """Serve the REST API (OpenAPI document at /docs and /openapi.json)."""
    import uvicorn

    from ..serve.rest import create_app

    host = host or settings.serve.host
    port = port or settings.serve.port
    token = bind_token(settings, host)
    mg = Mindgraph(settings)
    click.echo(f"mindgraph REST on http://{host}:{port} (wiki: {settings.wiki_dir})", err=True)
    uvicorn.run(create_app(mg, token), host=host, port=port, log_level="warning")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(serve_command)
