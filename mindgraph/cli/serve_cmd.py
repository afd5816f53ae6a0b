"""`mindgraph serve`: the REST API under uvicorn, on 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import errno
import json
import os
import socket

import click

from ..core import Mindgraph
from ..errors import ConfigError
from ..scopes import Authenticator, load_scopes
from ..serve.guard import TOKEN_RECIPE, check_token, is_loopback
from ..serve.worker_limits import multiplied_limits
from .common import ConfigClickError, echo, workspace_options
from .watch_cmd import served, watch_flag, watch_options
from .whole_number import WholeNumber


def bind_token(settings, host: str) -> str | None:
    """The bearer token for a server on ``host``: optional on loopback, required elsewhere
    (unless identities are configured: they bring their own), and long enough to resist
    guessing wherever it is given. Identities' tokens are checked here too."""
    token = os.environ.get(settings.serve.token_env) or None
    try:
        check_token(token, settings.serve.token_env)
        scopes = load_scopes(settings)
        # every identity's token, checked now (unset, short, reused: the fix, before binding)
        Authenticator(scopes, (settings.serve.token_env, token) if token else None)
    except ConfigError as exc:
        raise ConfigClickError(str(exc)) from exc
    if not is_loopback(host):
        echo(f"Warning: binding {host} exposes your notes beyond this machine.",
             err=True)
        if token is None and not scopes.enabled:   # identities bring their own tokens
            raise ConfigClickError(
                f"Binding {host} needs a bearer token: export {settings.serve.token_env}="
                f"$({TOKEN_RECIPE}) (clients send 'Authorization: Bearer <token>'), or bind "
                f"127.0.0.1.")
    return token


def ensure_port_free(host: str, port: int) -> None:
    """Exit 2 with the fix when ``host:port`` cannot be bound (uvicorn would log an error
    after the start banner and exit 3)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigClickError(f"Cannot bind {host}: {exc.strerror}. Pass an address of this "
                               f"machine with --host.") from exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            why = "is already in use (another server?)" if exc.errno == errno.EADDRINUSE \
                else f"cannot be bound ({exc.strerror})"
            raise ConfigClickError(f"Port {port} on {host} {why}. Pick another with --port N "
                                   f"(or serve.port in mindgraph.yml), or stop the other "
                                   f"server.") from exc


def ensure_workspace(settings) -> None:
    """A server outside any workspace would answer 503 to everything: refuse to start. (A
    workspace whose wiki is not compiled yet is fine: POST /reindex compiles it.)"""
    error = settings.not_a_workspace(settings.wiki_dir)
    if error is not None:
        raise ConfigClickError(str(error))


@click.command("serve")
@workspace_options
@click.option("--host", default=None, help="Address to bind (default: serve.host, 127.0.0.1).")
@click.option("--port", type=WholeNumber(1, 65535), default=None,
              help="Port (default: serve.port, 8765).")
@click.option("--workers", type=WholeNumber(1, 64), default=1, show_default=True,
              help="Processes answering requests, each with its own warm index (one per core "
                   "for the most answers per second; each holds the model and the indexes) "
                   "and its own per-process limits: N workers allow N times the upload spool, "
                   "the connections and each identity's requests in flight and share "
                   "(serve.upload_spool_bytes, max_connections, max_connections_per_client, "
                   "requests_per_identity, share_per_identity); start-up says the totals.")
@watch_flag
@watch_options
def serve_command(settings, host: str | None, port: int | None, workers: int, watch_on: bool,
                  watch: dict) -> None:
    """Serve the REST API (OpenAPI document at /docs and /openapi.json) and the dashboard
    (open / in a browser: http://127.0.0.1:8765/ by default); --watch also keeps the wiki,
    indexes and vectors current as raw/ and wiki/ change (GET /sync/status)."""
    import uvicorn

    from ..serve.rest import WORKER_ENV, create_app
    from ..serve.tcp import http_protocol

    host = host or settings.serve.host
    port = port or settings.serve.port
    ensure_workspace(settings)
    token = bind_token(settings, host)
    ensure_port_free(host, port)
    if watch_on and workers > 1:
        raise ConfigClickError("--watch runs in one process: serve with --workers 1, or run "
                               "`mindgraph watch` beside the server (each worker follows the "
                               "wiki by itself).")
    protocol = http_protocol(settings.serve.header_timeout_s, settings.serve.max_connections,
                             settings.serve.max_connections_per_client,
                             settings.serve.max_header_bytes)
    address = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    echo(f"mindgraph REST on {address} (wiki: {settings.wiki_dir}"
         f"{f', {workers} workers' if workers > 1 else ''}); dashboard: {address}/", err=True)
    if (multiplied := multiplied_limits(settings.serve, workers)) is not None:
        echo(multiplied, err=True)    # not divided: serve/worker_limits.py says why
    from .no_pages import has_pages, why_no_pages

    if not watch_on and not has_pages(settings.wiki_dir):
        # the dashboard's empty list and every agent's empty answer said nothing of why
        echo(f"{why_no_pages(settings)} (`serve --watch` compiles them too.)", err=True)
    if token is not None:
        # a token exported long ago (a shell profile) made every curl a 401 and the dashboard
        # a sign-in field, with nothing here saying a token was in force
        echo(f"Requests need 'Authorization: Bearer <token>', the token being the value of "
             f"{settings.serve.token_env} here (the dashboard asks for it; /health does not).",
             err=True)
    if workers == 1:
        mg = Mindgraph(settings)
        with served(mg, watch_on, watch) as watcher:
            uvicorn.run(create_app(mg, token, host, watcher.status.to_dict if watcher else None),
                        host=host, port=port,
                        http=protocol, log_level="warning",
                        timeout_graceful_shutdown=settings.serve.shutdown_timeout_s)
        return
    config = None if settings.source == "(defaults)" else settings.source
    os.environ[WORKER_ENV] = json.dumps({"base": str(settings.base_dir), "config": config,
                                         "host": host})
    uvicorn.run("mindgraph.serve.rest:app_for_worker", factory=True, host=host, port=port,
                workers=workers, http=protocol, log_level="warning",
                timeout_graceful_shutdown=settings.serve.shutdown_timeout_s)


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(serve_command)
