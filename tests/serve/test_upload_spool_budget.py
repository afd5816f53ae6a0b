"""All uploads in progress draw on one budget of spooled bytes (``serve.upload_spool_bytes``):
through a real `mindgraph serve`, an upload that would pass what another one holds is 503
with Retry-After, and once that one ends the budget is free again. Before, every one of up
to ``serve.max_connections`` uploads could spool its whole cap (100 MB) at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
from live_server import free_port, stop, wait_healthy

TOKEN = "u" * 40
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
serve: {upload_spool_bytes: 300000}
"""
BOUNDARY = "mindgraphboundary"


def multipart(name: str, size: int) -> bytes:
    """A multipart body of one markdown file of about ``size`` bytes."""
    text = b"# Big\n\n" + b"trunks " * (size // 7)
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"files\"; "
            f"filename=\"{name}\"\r\nContent-Type: text/markdown\r\n\r\n").encode() + text + \
        f"\r\n--{BOUNDARY}--\r\n".encode()


def post_upload(base: str, body: bytes) -> httpx.Response:
    return httpx.post(f"{base}/upload", content=body, timeout=30,
                      headers={"Authorization": f"Bearer {TOKEN}",
                               "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"})


def test_an_upload_past_what_the_others_hold_is_503_until_they_end(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Home.md").write_text("# Home\n\nTrunks.\n")
    (tmp_path / "mindgraph.yml").write_text(CONFIG)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(tmp_path),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE,
                              env={**os.environ, "MINDGRAPH_API_TOKEN": TOKEN})
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(server, base)
        held = multipart("held.md", 250_000)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
            # an upload that sends 200 kB of its 250 kB, then waits: they are spooled
            slow.sendall(f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                         f"Authorization: Bearer {TOKEN}\r\nContent-Type: multipart/form-data; "
                         f"boundary={BOUNDARY}\r\nContent-Length: {len(held)}\r\n\r\n".encode()
                         + held[:200_000])
            time.sleep(1.0)
            declared = post_upload(base, multipart("second.md", 150_000))
            assert declared.status_code == 503, declared.text
            assert declared.headers["retry-after"] == "1"
            assert "serve.upload_spool_bytes" in declared.json()["detail"]
            small = post_upload(base, multipart("small.md", 50_000))
            assert small.status_code == 200, small.text     # what is left still serves
        deadline = time.monotonic() + 20                     # the held upload's end frees it
        while True:
            again = post_upload(base, multipart("second.md", 150_000))
            if again.status_code != 503 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert again.status_code == 200, again.text
    finally:
        stop(server)


def test_a_chunked_upload_is_refused_once_its_stream_passes_what_is_left():
    """No Content-Length to refuse it at once: counted as it arrives, the app's parser is
    told 503 at the chunk that would pass the budget, and what it held is given back."""
    import asyncio

    from starlette.exceptions import HTTPException

    from mindgraph.config import ServeSettings
    from mindgraph.serve.guard import BodyRule, Guard, Policy, SpoolBudget

    budget = SpoolBudget(1000)
    budget.take(900)                                    # another upload holds most of it
    rule = BodyRule(10_000, ("multipart/form-data",), streamed=True, budget=budget)
    seen: list = []

    async def app(scope, receive, send):
        try:
            while (await receive()).get("more_body"):
                pass
        except HTTPException as exc:
            seen.append(exc)

    chunks = [{"type": "http.request", "body": b"x" * 60, "more_body": True}] * 3 + \
        [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        return chunks.pop(0)

    guard = Guard(app, Policy.for_server(ServeSettings(), "127.0.0.1", (("/upload", rule),)))
    scope = {"type": "http", "method": "POST", "path": "/upload", "scheme": "http",
             "headers": [(b"host", b"127.0.0.1:8765"), (b"transfer-encoding", b"chunked"),
                         (b"content-type", b"multipart/form-data; boundary=b")]}
    asyncio.run(guard(scope, receive, None))
    assert seen and seen[0].status_code == 503
    assert "serve.upload_spool_bytes" in seen[0].detail
    assert seen[0].headers["Retry-After"] == "1"
    assert budget.held == 900                           # its 60 bytes given back
