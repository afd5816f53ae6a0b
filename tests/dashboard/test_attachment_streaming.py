"""GET /dashboard/attachment against a real `mindgraph serve` process: a big file is streamed
(past the request's 30 s budget if need be), but the whole response must be sent within
``serve.attachment_timeout_s``: a client reading slowly is cut off and its connection
closed, instead of holding it (and an open file) for as long as it likes. Range requests are
answered, so a client can fetch a big file in parts, each within the budget."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from live_server import free_port, stop
from mindgraph.serve.tcp import CLOSE_GRACE_S

TIMEOUT_S = 2.0
GRACE_S = 3.0             # scheduling slack on a loaded 2-core machine
BIG = 3 * 1024 ** 3       # a sparse file: no disk is used
PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 100_000


@pytest.fixture
def server(tmp_path):
    """(process, port, stderr file) of `mindgraph serve` over a workspace whose raw/ holds a 3 GB video
    and a small picture, with serve.attachment_timeout_s = 2."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Film.md").write_text("# Film\n\n![[film.mp4]]\n\n![[still.png]]\n")
    (tmp_path / "raw").mkdir()
    with open(tmp_path / "raw" / "film.mp4", "wb") as film:
        film.truncate(BIG)
    (tmp_path / "raw" / "still.png").write_bytes(PNG)
    (tmp_path / "mindgraph.yml").write_text(
        f"embedding:\n  provider: hashing\n  dimension: 32\n"
        f"serve:\n  attachment_timeout_s: {TIMEOUT_S}\n")
    port = free_port()
    log = open(tmp_path / "serve.log", "w+b")
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C",
                                str(tmp_path), "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except httpx.HTTPError:
                assert process.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.1)
        yield process, port, log
    finally:
        stop(process)
        log.close()


def _holds(pid: int, name: str) -> bool:
    """Whether process ``pid`` has a file named ``name`` open (Linux /proc)."""
    folder = f"/proc/{pid}/fd"
    for fd in os.listdir(folder):
        try:
            if os.readlink(f"{folder}/{fd}").endswith("/" + name):
                return True
        except OSError:
            continue
    return False


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads /proc (Linux)")
def test_a_slow_reader_is_cut_off_at_the_deadline(server):
    """The client reads 4 kB every 50 ms: the server lets the file go at the deadline (the
    kernel's socket buffers still hold a few MB for it, so the client reads on a while), then
    the client reads what is left as fast as it can: the connection ends, short of the 3 GB
    Content-Length promised. Before, the file stayed open and the stream went on."""
    process, port, log = server
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET /dashboard/attachment?target=film.mp4 HTTP/1.1\r\n"
                 f"Host: 127.0.0.1:{port}\r\n\r\n".encode())
    sock.settimeout(10)
    first, read = sock.recv(4096), 0
    assert first.startswith(b"HTTP/1.1 200") and f"content-length: {BIG}".encode() in first
    opened = time.monotonic() + 5      # the head goes out before the file is opened
    while not _holds(process.pid, "film.mp4") and time.monotonic() < opened:
        time.sleep(0.05)
    assert _holds(process.pid, "film.mp4"), "the stream should hold the file while it runs"
    started = time.monotonic()
    while time.monotonic() - started < TIMEOUT_S + GRACE_S:
        read += len(sock.recv(4096))
        time.sleep(0.05)
    assert not _holds(process.pid, "film.mp4"), "the file is still streaming"
    assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200  # others served
    draining = time.monotonic()
    while time.monotonic() - draining < 20 and read < 500_000_000:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        read += len(chunk)
    sock.close()
    assert 0 < read < 500_000_000 and not chunk, f"{read} bytes and still streaming"
    log.flush()
    log.seek(0)
    logged = log.read().decode()
    assert "(serve.attachment_timeout_s)" in logged
    # the cut ends the response on purpose: only our warning, not uvicorn's error (it said
    # "ASGI callable returned without completing response")
    assert "ASGI callable" not in logged and "ERROR" not in logged, logged


def _settled_sockets(pid: int) -> int:
    """The sockets of ``pid`` once the count has held still for a second (at most 10 s): the
    fixture's health checks leave connections closing for a moment, and counting those as
    the server's own made the five stalled clients look like fewer than five."""
    count, since, ends = _sockets(pid), time.monotonic(), time.monotonic() + 10
    while time.monotonic() - since < 1.0 and time.monotonic() < ends:
        time.sleep(0.05)
        now = _sockets(pid)
        if now != count:
            count, since = now, time.monotonic()
    return count


def _sockets(pid: int) -> int:
    """How many sockets process ``pid`` has open (Linux /proc)."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            continue
    return count


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads /proc (Linux)")
def test_clients_that_stop_reading_lose_their_connections_after_the_deadline(server):
    """Five clients ask for the big file and never read: at the deadline the server lets the
    file go, and CLOSE_GRACE_S later their sockets (and places in serve.max_connections).
    Before, asyncio's close waited for the unsent bytes to drain: the sockets stayed open for
    as long as the clients stayed connected."""
    process, port, _ = server
    before = _settled_sockets(process.pid)
    stalled = []
    for _ in range(5):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET /dashboard/attachment?target=film.mp4 HTTP/1.1\r\n"
                     f"Host: 127.0.0.1:{port}\r\n\r\n".encode())
        stalled.append(sock)
    try:
        opened, most = time.monotonic() + 10, 0
        while most < before + 5 and time.monotonic() < opened:
            most = max(most, _sockets(process.pid))
            time.sleep(0.05)
        assert most >= before + 5
        ends = time.monotonic() + TIMEOUT_S + CLOSE_GRACE_S + GRACE_S + 5
        while _sockets(process.pid) > before and time.monotonic() < ends:
            time.sleep(0.2)
        assert _sockets(process.pid) <= before, "the stalled clients' sockets are still open"
        assert not _holds(process.pid, "film.mp4")
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
    finally:
        for sock in stalled:
            sock.close()


def test_a_part_of_a_big_file_and_a_small_file_are_served_whole(server):
    _, port, _ = server
    url = f"http://127.0.0.1:{port}/dashboard/attachment"
    part = httpx.get(url, params={"target": "film.mp4"},
                     headers={"Range": "bytes=2000000000-2000999999"}, timeout=30)
    assert part.status_code == 206 and len(part.content) == 1_000_000
    assert part.headers["content-range"] == f"bytes 2000000000-2000999999/{BIG}"
    still = httpx.get(url, params={"target": "still.png", "page": "Film"}, timeout=30)
    assert still.status_code == 200 and still.content == PNG
    assert still.headers["content-type"] == "image/png"
