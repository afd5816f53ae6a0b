"""Real `mindgraph serve` processes for the tests: a free port, waiting until GET /health
answers, flooding one with requests, and stopping one (importable from any test folder:
tests/ is on sys.path through its conftest)."""

from __future__ import annotations

import asyncio
import collections
import socket
import subprocess
import time
from urllib.parse import urlsplit

import httpx


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(process: subprocess.Popen, base: str, within_s: float = 90) -> None:
    """Return once GET /health answers 200; fail with the server's stderr if it exits."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "server not ready"
        time.sleep(0.2)


def stop(process: subprocess.Popen, within_s: float = 20) -> None:
    """SIGTERM, then SIGKILL if it has not ended ``within_s`` later."""
    process.terminate()
    try:
        process.wait(within_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def flood(base: str, target: str, headers: dict[str, str], connections: int,
                until: "asyncio.Event") -> tuple[collections.Counter, list[bytes]]:
    """Keep ``connections`` keep-alive requests for ``target`` in flight until ``until`` is
    set, each sent again as soon as it is answered (no back-off: an attacker's flood); raw
    HTTP/1.1 on asyncio streams, so the flooder costs the test little CPU. Returns the
    statuses and the first answer (head and body) of each status."""
    statuses: collections.Counter = collections.Counter()
    samples: dict[str, bytes] = {}
    url = urlsplit(base)
    request = (f"GET {target} HTTP/1.1\r\nHost: {url.netloc}\r\n"
               + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()

    async def one() -> None:
        reader, writer = await asyncio.open_connection(url.hostname, url.port)
        try:
            while not until.is_set():
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").lower().split("\r\n")
                length = next(int(line.split(":", 1)[1]) for line in lines
                              if line.startswith("content-length:"))
                body = await reader.readexactly(length)
                status = lines[0].split()[1]
                statuses[status] += 1
                samples.setdefault(status, head + body)
                if "connection: close" in lines:
                    writer.close()
                    reader, writer = await asyncio.open_connection(url.hostname, url.port)
        finally:
            writer.close()

    tasks = [asyncio.create_task(one()) for _ in range(connections)]
    await until.wait()
    _, late = await asyncio.wait(tasks, timeout=30)
    for task in late:
        task.cancel()
    return statuses, list(samples.values())
