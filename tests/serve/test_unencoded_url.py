"""A URL with characters that are not percent-encoded (`curl "…/search?q=ワークスペース"` sends
the UTF-8 as it is) is refused by the HTTP parser before the app sees it: the 400 says why and
how to encode it, instead of "not well-formed HTTP/1.1"."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import httpx
from live_server import free_port, stop, wait_healthy


def _raw_get(port: int, target: bytes) -> tuple[bytes, dict]:
    """Send ``GET target`` as the bytes given (curl sends a URL's UTF-8 unencoded); return the
    status line and the JSON body (whose text must be UTF-8 as written, not backslash-u escapes
    that curl shows as they are)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1:"
                    + str(port).encode() + b"\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"\\u" not in body, body
    return head.split(b"\r\n", 1)[0], json.loads(body)


def test_a_url_with_unencoded_japanese_gets_a_400_saying_to_percent_encode_it(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "ワークスペース.md").write_text(
        "# ワークスペース\n\nワークスペースを保存して、あとで開きます。\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    port = free_port()
    env = {**os.environ, "MINDGRAPH_API_TOKEN": ""}
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(tmp_path),
                               "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(server, base)
        status, error = _raw_get(port, "/search?q=ワークスペース&limit=1".encode())
        assert status.startswith(b"HTTP/1.1 400 ")
        assert error["error"] == "BadRequest"
        assert "not percent-encoded ('/search?q=ワークスペース&limit=1')" in error["detail"]
        assert "--data-urlencode" in error["detail"] and "64 KB" not in error["detail"]
        # the same query encoded, as the error says, is answered
        found = httpx.get(f"{base}/search", params={"q": "ワークスペース", "limit": 1}).json()
        assert found["results"][0]["page"] == "ワークスペース.md"
        # a request that is broken for another reason keeps the general reason
        status, error = _raw_get(port, b"/search?q=" + b"a" * 70_000)
        assert status.startswith(b"HTTP/1.1 400 ") and "64 KB" in error["detail"]
    finally:
        stop(server)
