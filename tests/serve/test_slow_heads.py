"""Slow request heads (slowloris) against real `mindgraph serve` and `mindgraph mcp --transport
http` processes: a connection whose request line and headers are not complete within
``serve.header_timeout_s`` gets a 408 and is closed, while other clients are answered; a complete
request sent slowly within the bound, an idle keep-alive connection and a slow body are not cut
by it; past ``serve.max_connections`` a new connection gets a 503 at once."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import httpx
import pytest
from live_server import free_port, stop

HEADER_TIMEOUT_S = 2.0
GRACE_S = 2.5             # scheduling slack on a loaded 2-core machine

SERVERS = {"serve": (["serve"], "/health"),
           "mcp": (["mcp", "--transport", "http"], "/mcp")}
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "pytest", "version": "0"}}}).encode()


def complete_request(port: int, path: str) -> bytes:
    """A whole request each server answers 200: GET /health, or MCP's initialize."""
    if path == "/health":
        return f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(INITIALIZE)}\r\n\r\n").encode() + INITIALIZE


def write_config(workspace, **serve) -> None:
    lines = "".join(f"  {key}: {value}\n" for key, value in serve.items())
    (workspace / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 32\nserve:\n" + lines)


def start(workspace, command: list[str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", *command,
                                "-C", str(workspace), "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
            return process, port
        except httpx.HTTPError:
            if process.poll() is not None:
                raise AssertionError(process.stderr.read().decode())
            time.sleep(0.1)
    process.kill()
    raise AssertionError("the server did not start")


@pytest.fixture(params=sorted(SERVERS))
def server(request, workspace):
    """(port, a path the server answers, the workspace) of a running server with a short
    header timeout."""
    command, path = SERVERS[request.param]
    write_config(workspace, header_timeout_s=HEADER_TIMEOUT_S, max_connections=500)
    process, port = start(workspace, command)
    try:
        yield port, path
    finally:
        stop(process)


def read_until_closed(sock: socket.socket, within_s: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and when it closed (monotonic);
    fails if it is still open ``within_s`` from now."""
    sock.settimeout(within_s)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        raise AssertionError(f"still open {within_s} s later; got {data[:200]!r}") from None
    except ConnectionResetError:
        pass
    return data, time.monotonic()


def read_response(sock: socket.socket) -> bytes:
    """One whole response (Content-Length or chunked) from a keep-alive connection."""
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = [int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
              if line.startswith(b"content-length:")]
    while (len(body) < length[0]) if length else not body.endswith(b"0\r\n\r\n"):
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def answers(port: int, path: str) -> int:
    """The status of a whole request to the server (200 when it is serving)."""
    if path == "/health":
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code
    return httpx.post(f"http://127.0.0.1:{port}/mcp", content=INITIALIZE, timeout=5,
                      headers={"Content-Type": "application/json",
                               "Accept": "application/json, text/event-stream"}).status_code


def test_partial_heads_are_cut_with_408_while_others_are_answered(server):
    port, path = server
    partial = [b"", b"GET /hea", b"GET /health HTTP/1.1\r\n",
               f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".encode()]
    sockets = []
    opened = time.monotonic()
    for i in range(60):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(partial[i % len(partial)])
        sockets.append(sock)
    try:
        # while they are held, the server keeps answering others
        assert answers(port, path) == 200
        # one keeps trickling header bytes: activity does not extend its deadline
        trickle = sockets[3]
        for _ in range(3):
            time.sleep(0.3)
            trickle.sendall(b"a")
        for sock in sockets:
            data, closed = read_until_closed(sock, opened + HEADER_TIMEOUT_S + GRACE_S
                                             - time.monotonic())
            assert closed - opened >= HEADER_TIMEOUT_S - 0.1
            head, _, body = data.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408 "), data[:200]
            assert b"connection: close" in head.lower()
            assert "serve.header_timeout_s" in json.loads(body)["detail"]
        assert answers(port, path) == 200
    finally:
        for sock in sockets:
            sock.close()


def test_a_complete_request_sent_slowly_within_the_bound_is_answered(server):
    port, path = server
    request = complete_request(port, path)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        pieces = [request[i:i + 8] for i in range(0, len(request), 8)]
        started = time.monotonic()
        for piece in pieces:                              # about 1 s in all
            sock.sendall(piece)
            time.sleep(1.0 / len(pieces))
        assert time.monotonic() - started > 0.9
        sock.settimeout(10)
        head = sock.recv(65536)
        assert head.startswith(b"HTTP/1.1 200 "), head


def test_an_idle_keep_alive_connection_is_left_to_the_keep_alive_timeout(server):
    """After an answer, the connection waits for its next request under uvicorn's keep-alive
    timeout (5 s), not the head deadline; a request sent after the head deadline has passed
    since the connection opened is answered."""
    port, path = server
    request = complete_request(port, path)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        assert read_response(sock).startswith(b"HTTP/1.1 200 ")
        answered = time.monotonic()
        time.sleep(HEADER_TIMEOUT_S + 0.5)               # idle past the head deadline
        sock.sendall(request)                            # still open: answered
        assert read_response(sock).startswith(b"HTTP/1.1 200 ")
        answered = time.monotonic()
        _, closed = read_until_closed(sock, 5 + GRACE_S + 1)
        assert closed - answered >= 5 - 0.2               # uvicorn's keep-alive timeout closed it


def test_a_slow_body_after_a_prompt_head_is_not_cut_by_the_head_deadline(workspace):
    """An upload whose headers arrive at once may take longer than the head deadline: the body
    has its own budget (serve.request_timeout_s)."""
    write_config(workspace, header_timeout_s=1)
    process, port = start(workspace, ["mcp", "--transport", "http"])
    try:
        body = INITIALIZE
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                         f"Content-Type: application/json\r\n"
                         f"Accept: application/json, text/event-stream\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode())
            started = time.monotonic()
            for i in range(0, len(body), len(body) // 5 + 1):   # 2.5 s, over the 1 s bound
                sock.sendall(body[i:i + len(body) // 5 + 1])
                time.sleep(0.5)
            assert time.monotonic() - started > 2
            sock.settimeout(20)
            answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
        assert b"serverInfo" in answer
    finally:
        process.terminate()
        process.wait(20)


def test_connections_past_max_connections_get_503_and_the_server_recovers(workspace):
    write_config(workspace, header_timeout_s=HEADER_TIMEOUT_S, max_connections=20)
    process, port = start(workspace, ["serve"])
    held = []
    try:
        time.sleep(0.5)          # the probe connections of start() are gone
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /health HTTP/1.1\r\n")
            held.append(sock)
        time.sleep(0.3)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as extra:
            data, _ = read_until_closed(extra, 3)
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 "), data[:200]
        assert "serve.max_connections" in json.loads(body)["detail"]
        for sock in held:                                 # cut by the head deadline...
            read_until_closed(sock, HEADER_TIMEOUT_S + GRACE_S)
        assert answers(port, "/health") == 200             # ...and the server answers again
    finally:
        for sock in held:
            sock.close()
        process.terminate()
        process.wait(20)


def request_from(address: str, port: int, path: str) -> bytes:
    """One whole request from the client address ``address`` (any of 127.0.0.0/8 on Linux);
    the response's head and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10,
                                  source_address=(address, 0)) as sock:
        sock.sendall(complete_request(port, path))
        return read_response(sock)


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_one_client_address_cannot_take_every_connection(workspace, name):
    """Idle sockets are counted before any token is checked: one address holding its share
    (serve.max_connections_per_client) gets a 429 for one more at once, while another
    address is still answered; a closed socket frees its place."""
    command, path = SERVERS[name]
    write_config(workspace, header_timeout_s=60, max_connections=50,
                 max_connections_per_client=10)
    process, port = start(workspace, command)
    held = []
    try:
        time.sleep(0.5)          # the probe connections of start() are gone
        for _ in range(10):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5,
                                                 source_address=("127.0.0.2", 0)))
        time.sleep(0.3)
        with socket.create_connection(("127.0.0.1", port), timeout=5,
                                      source_address=("127.0.0.2", 0)) as extra:
            data, _ = read_until_closed(extra, 3)
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429 "), data[:200]
        assert "serve.max_connections_per_client" in json.loads(body)["detail"]
        # another client address is served while 127.0.0.2 holds its share
        assert request_from("127.0.0.3", port, path).startswith(b"HTTP/1.1 200 ")
        held.pop().close()
        time.sleep(0.3)
        assert request_from("127.0.0.2", port, path).startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in held:
            sock.close()
        process.terminate()
        process.wait(20)


def test_the_share_per_client_is_checked_with_the_config():
    from mindgraph.config import settings_from_dict
    from mindgraph.errors import ConfigError

    assert settings_from_dict({}).serve.max_connections_per_client == 250
    assert settings_from_dict({"serve": {"max_connections_per_client": 0}}) \
        .serve.max_connections_per_client == 0          # 0: no share (behind a proxy)
    with pytest.raises(ConfigError, match="serve.max_connections_per_client"):
        settings_from_dict({"serve": {"max_connections_per_client": -1}})


def test_a_head_over_max_header_bytes_is_431_and_never_read_whole(server):
    """uvicorn kept headers of any size in memory, before any token was checked: 300 MB of
    headers were read and answered 200. Past serve.max_header_bytes (128 KiB) the client gets
    a 431 and the connection closes; a head under it is served."""
    port, path = server
    request = complete_request(port, path)
    head, _, body = request.partition(b"\r\n\r\n")

    def with_header(size: int) -> bytes:
        return head + b"\r\nX-Big: " + b"a" * size + b"\r\n\r\n" + body

    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(with_header(120_000))
        assert read_response(sock).startswith(b"HTTP/1.1 200 ")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(with_header(132_000))
        data, _ = read_until_closed(sock, 10)
        answer, _, detail = data.partition(b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 431 "), data[:200]
        assert "serve.max_header_bytes" in json.loads(detail)["detail"]
    # a flood of header bytes is cut off: the server stops reading, the sender is refused
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sent = 0
        with pytest.raises(OSError):            # reset or broken pipe, long before 64 MB
            sock.sendall(head + b"\r\n")
            while sent < 64 << 20:
                sock.sendall(b"X-Flood: " + b"a" * 65_000 + b"\r\n")
                sent += 65_000
            read_until_closed(sock, 10)
            raise AssertionError("the server read 64 MB of headers")
    assert answers(port, path) == 200


def test_max_header_bytes_is_checked_with_the_config():
    from mindgraph.config import settings_from_dict
    from mindgraph.errors import ConfigError

    assert settings_from_dict({}).serve.max_header_bytes == 131072
    with pytest.raises(ConfigError, match="serve.max_header_bytes"):
        settings_from_dict({"serve": {"max_header_bytes": 10}})


@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_a_body_without_a_token_is_not_read_before_its_401(workspace, monkeypatch, kind):
    """The Guard read a JSON body (up to serve.max_body_bytes, waiting up to
    serve.request_timeout_s) before the token was checked: a client with no token held 1 MiB
    and the connection for 30 s per request, answered 408. Now the 401 comes at once."""
    token = "a-token-of-the-server-" + "t" * 32
    monkeypatch.setenv("MINDGRAPH_API_TOKEN", token)
    write_config(workspace, request_timeout_s=30)
    command, _ = SERVERS[kind]
    process, port = start(workspace, command)
    path = "/links" if kind == "serve" else "/mcp"
    try:
        for authorization in ("", "Authorization: Bearer not-the-token-" + "x" * 32 + "\r\n"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                              f"{authorization}Content-Type: application/json\r\n"
                              f"Accept: application/json, text/event-stream\r\n"
                              f"Content-Length: 1000000\r\n\r\n{{").encode())
                sock.settimeout(10)                 # the body never comes: 408 at 30 s before
                head = sock.recv(65536)
                assert head.startswith(b"HTTP/1.1 401 "), head[:200]
        # with the token, the body is read and checked as before
        answer = httpx.post(f"http://127.0.0.1:{port}{path}", content=b"[1]", timeout=10,
                            headers={"Authorization": f"Bearer {token}",
                                     "Content-Type": "application/json",
                                     "Accept": "application/json, text/event-stream"})
        assert answer.status_code in (400, 422), answer.text[:200]
    finally:
        stop(process)


def chunked_request(port: int, path: str, authorization: str = "") -> bytes:
    """The head of ``complete_request`` sending its body chunked, up to the last chunk's
    size line (the trailers, if any, and the blank line that ends them follow)."""
    head, _, body = complete_request(port, path).partition(b"\r\n\r\n")
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(
        b"content-length:")]
    if not body:                        # GET /health: a JSON body the Guard reads first
        lines.append(b"Content-Type: application/json")
        body = b"{}"
    lines += [b"Transfer-Encoding: chunked"] + ([authorization.encode()] if authorization
                                                 else [])
    return b"\r\n".join(lines) + b"\r\n\r\n" + b"%x\r\n" % len(body) + body + b"\r\n0\r\n"


def test_trailers_count_as_headers_and_join_none(server):
    """A chunked body's trailer fields were appended to the request's headers with no bound,
    after the head's count had stopped: 800 MB of them were read in 3 s from a client with no
    token (answered 401 first) and held by the server. Past serve.max_header_bytes the
    connection is closed; a small trailer is dropped and the request answered."""
    port, path = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(chunked_request(port, path) + b"X-Small: 1\r\n\r\n")
        assert read_response(sock).startswith(b"HTTP/1.1 200 ")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sent = 0
        with pytest.raises(OSError):            # reset or broken pipe, long before 64 MB
            sock.sendall(chunked_request(port, path))
            while sent < 64 << 20:
                sock.sendall(b"X-Flood: " + b"a" * 65_000 + b"\r\n")
                sent += 65_000
            read_until_closed(sock, 10)
            raise AssertionError("the server read 64 MB of trailers")
    assert answers(port, path) == 200


def test_a_request_answered_before_its_body_cannot_hold_the_connection(workspace, monkeypatch):
    """A 401 sent before the body was read left the connection open for the rest of the body
    with no deadline (a byte now and then held it for ever), and once that body had come the
    connection sat idle with no timer at all. Now the rest must come within
    serve.header_timeout_s, and an idle connection is closed by the keep-alive timeout."""
    monkeypatch.setenv("MINDGRAPH_API_TOKEN", "a-token-of-the-server-" + "t" * 32)
    write_config(workspace, header_timeout_s=HEADER_TIMEOUT_S)
    process, port = start(workspace, ["serve"])
    head = (f"POST /links HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: "
            f"application/json\r\nContent-Length: 100000\r\n\r\n").encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as trickle, \
                socket.create_connection(("127.0.0.1", port), timeout=10) as whole:
            trickle.sendall(head)
            whole.sendall(head.replace(b"100000", b"2"))
            assert read_response(trickle).startswith(b"HTTP/1.1 401 ")
            assert read_response(whole).startswith(b"HTTP/1.1 401 ")
            answered = time.monotonic()
            whole.sendall(b"{}")                # the body, whole, after its answer
            with pytest.raises(OSError):
                for _ in range(int((HEADER_TIMEOUT_S + GRACE_S) / 0.25)):
                    trickle.sendall(b"a")           # a byte now and then
                    time.sleep(0.25)
                read_until_closed(trickle, 1)
                raise AssertionError("a body sent a byte at a time held the connection")
            assert time.monotonic() - answered >= HEADER_TIMEOUT_S - 0.1
            read_until_closed(whole, 5 + GRACE_S)   # uvicorn's keep-alive timeout closed it
        assert answers(port, "/health") == 200
    finally:
        stop(process)
