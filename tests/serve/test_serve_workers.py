"""`mindgraph serve --workers N`: several processes, each with its own warm core, one port."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from live_server import free_port, wait_healthy


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="counts processes through /proc")
def test_two_workers_answer_on_one_port(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry trunks.\n")
    (tmp_path / "wiki" / "Submarines.md").write_text("# Submarines\n\nThey dive deep.\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    port = free_port()
    env = {**os.environ, "MINDGRAPH_API_TOKEN": ""}
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(tmp_path),
                               "--port", str(port), "--workers", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(server, base)
        with httpx.Client(base_url=base, timeout=30) as http:
            answers = [http.get("/smart_search", params={"q": f"airships trunks {i}"})
                       for i in range(12)]
        assert all(a.status_code == 200 for a in answers)
        assert all(a.json()["results"][0]["page"] == "Zeppelins.md" for a in answers)
        assert len(children(server.pid)) >= 2          # the supervisor's worker processes
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_every_connection_has_nagle_off_even_on_a_shared_socket():
    """uvicorn shares one listening socket between worker processes; asyncio leaves Nagle on
    for connections accepted from a socket it did not create (proto 0), so each keep-alive
    answer waited 40 ms for the client's delayed ACK. Our protocol turns it off itself."""
    from mindgraph.serve.tcp import NoDelayHTTPProtocol

    seen: list[int] = []

    class Probe(NoDelayHTTPProtocol):
        def connection_made(self, transport):
            super().connection_made(transport)
            sock = transport.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    # the standard asyncio loop: uvloop (used when installed) turns Nagle off by itself
    with _ping_server(Probe, loop="asyncio") as port:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
            assert [http.get("/ping").json() for _ in range(3)] == [{"ok": True}] * 3
    assert seen and all(value != 0 for value in seen)


@contextlib.contextmanager
def _ping_server(protocol, **config):
    """A uvicorn server of one /ping route on a socket made as uvicorn's (proto 0), serving
    with ``protocol`` on a thread; yields its port."""
    import threading

    import uvicorn
    from fastapi import FastAPI

    app = FastAPI()
    app.get("/ping")(lambda q="": {"ok": True})
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, http=protocol, log_level="error", **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        yield listener.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_request_too_long_to_parse_gets_a_json_400_naming_the_limit():
    """uvicorn refuses a URL over ~64 KB before the app sees it, with a plain-text 400; the
    served protocol answers in the JSON shape of every other error."""
    import json

    from mindgraph.serve.tcp import NoDelayHTTPProtocol

    with _ping_server(NoDelayHTTPProtocol) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            # httpx refuses to send such a URL: a raw request, as any client could send
            raw.sendall(f"GET /ping?q={'a' * 70_000} HTTP/1.1\r\n"
                        f"Host: 127.0.0.1:{port}\r\n\r\n".encode())
            answer = b""
            while chunk := raw.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ") and b"content-type: application/json" in head
        error = json.loads(body)
        assert error["error"] == "BadRequest" and "64 KB" in error["detail"]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
            assert http.get("/ping").json() == {"ok": True}    # still answering


def test_start_up_says_the_per_process_limits_each_worker_multiplies(tmp_path):
    """`--workers 3` ran three processes, each with its own upload spool, connection counts
    and per-identity caps and shares: the server allowed three times each, and neither
    `serve --help` nor the README nor start-up said so. Start-up now says the totals."""
    from click.testing import CliRunner
    from live_server import stop

    from mindgraph.cli import cli

    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry trunks.\n")
    (tmp_path / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 64\nserve:\n"
        "  upload_spool_bytes: 104857600\n  requests_per_identity: 8\n"
        "  share_per_identity: 0\n")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(tmp_path),
                               "--port", str(port), "--workers", "3"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env={**os.environ, "MINDGRAPH_API_TOKEN": ""})
    try:
        wait_healthy(server, f"http://127.0.0.1:{port}")    # start-up has said all by then
    finally:
        stop(server)
    said = server.stderr.read().decode().splitlines(keepends=True)
    assert said[1] == (
        "Warning: each of the 3 workers applies the per-process limits by itself, so the "
        "server allows 3 times each: 300 MiB of uploads spooled to disk at once "
        "(serve.upload_spool_bytes: 100 MiB); 24 requests in flight per identity "
        "(serve.requests_per_identity: 8); 3,000 connections open at once "
        "(serve.max_connections: 1,000); 750 of them per client address "
        "(serve.max_connections_per_client: 250). To hold a total, set the limit to it "
        "divided by 3 in mindgraph.yml.\n"), said      # share 0 (all at once): not a limit
    helped = " ".join(CliRunner().invoke(cli, ["serve", "--help"]).output.split())
    assert "its own per-process limits: N workers allow N times the upload spool" in helped
