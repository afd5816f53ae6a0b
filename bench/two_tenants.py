"""A `mindgraph serve` of one checkout over two tenants (acme's alice, globex's carol), for
the bench scripts that measure what one tenant's hostile or heavy request costs the other
(bench_note_bombs.py, bench_heading_uploads.py): one place for the workspace, the tokens and
the server's start and stop.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import httpx

from programs import python_of
from serving import wait_healthy

CONFIG = """embedding:
  provider: hashing
  dimension: 32
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, token_env: BENCH_TOKEN_ALICE}
    - {name: carol, tenant: globex, agent: carol, token_env: BENCH_TOKEN_CAROL}
"""


def tokens(prefix: str) -> dict[str, str]:
    """alice's and carol's bearer tokens (``prefix`` tells one script's server from another's)."""
    return {"alice": f"{prefix}-alice-" + "a" * 32, "carol": f"{prefix}-carol-" + "c" * 32}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def workspace(base: Path) -> None:
    """Two tenants' shared notes (20 each) and the identities' config."""
    (base / "mindgraph.yml").write_text(CONFIG)
    for tenant in ("acme", "globex"):
        folder = base / "raw" / tenant / "shared"
        folder.mkdir(parents=True)
        for i in range(20):
            (folder / f"Note {i}.md").write_text(f"# Note {i}\n\nThe kettle boils at noon, "
                                                 f"note {i} of {tenant}.\n")


@contextlib.contextmanager
def two_tenant_server(tree: Path, tokens: dict[str, str],
                      timeout_s: float = 600) -> Iterator[tuple[str, httpx.Client]]:
    """``tree``'s code serving a fresh two-tenant workspace, ingested: its base URL and an
    HTTP client holding alice's token; the server is stopped (SIGTERM) on the way out."""
    with tempfile.TemporaryDirectory() as folder:
        workspace(Path(folder))
        env = {**os.environ, "PYTHONPATH": str(tree),
               **{f"BENCH_TOKEN_{n.upper()}": t for n, t in tokens.items()}}
        python = str(python_of(tree))
        subprocess.run([python, "-m", "mindgraph", "-C", folder, "ingest"], cwd=tree, env=env,
                       check=True, capture_output=True)
        port = free_port()
        server = subprocess.Popen([python, "-m", "mindgraph", "-C", folder, "serve", "--port",
                                   str(port)], cwd=tree, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        alice = httpx.Client(base_url=base, timeout=timeout_s,
                             headers={"Authorization": f"Bearer {tokens['alice']}"})
        try:
            wait_healthy(server, base)
            yield base, alice
        finally:
            alice.close()
            server.terminate()
            server.wait(30)
