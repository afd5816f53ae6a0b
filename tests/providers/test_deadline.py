"""timeout_s is a total deadline per call, not the longest gap between two bytes.

A real local server (a thread with a socket) answers one byte every 0.2 s: before the fix a
call with timeout_s=1 lived as long as the server kept dripping (every read got a byte well
within the read timeout). Every provider must now give up near timeout_s.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from mindgraph.errors import ProviderError

TIMEOUT_S = 1.0
SLACK_S = 1.5          # scheduling on a busy 2-core machine, not the drip
# Connection: close, as the server closes after each answer (a kept-alive connection to it
# would be reset on reuse).
DRIP = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: 400\r\n\r\n"
        + b"{" + b" " * 398 + b"}")


class DripServer:
    """Accepts connections and answers each with one byte every ``interval`` seconds."""

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.connections += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)                     # the request (small enough for one read)
                for i in range(len(DRIP)):
                    if self.stop.is_set():
                        return
                    conn.sendall(DRIP[i:i + 1])
                    time.sleep(self.interval)
            except OSError:
                return                               # the client gave up and closed

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def drip_server():
    """A local server answering one byte every 0.2 s (80 s for the whole answer)."""
    server = DripServer()
    yield server
    server.close()


def _openai_llm(url):
    from mindgraph.providers.llm.openai import OpenAIProvider

    provider = OpenAIProvider(model="m", base_url=f"{url}/v1", timeout_s=TIMEOUT_S,
                              max_retries=0)
    return lambda: provider.complete("system", "prompt")


def _anthropic_llm(url):
    from mindgraph.providers.llm.anthropic import AnthropicProvider

    provider = AnthropicProvider("k", base_url=url, timeout_s=TIMEOUT_S, max_retries=0)
    return lambda: provider.complete("system", "prompt")


def _gemini_llm(url):
    from mindgraph.providers.llm.gemini import GeminiProvider

    provider = GeminiProvider("k", base_url=url, timeout_s=TIMEOUT_S, max_retries=0)
    return lambda: provider.complete("system", "prompt")


def _openai_embeddings(url):
    from mindgraph.providers.embedding.openai import OpenAIEmbeddings

    provider = OpenAIEmbeddings(model="m", base_url=f"{url}/v1", dimension=3,
                                timeout_s=TIMEOUT_S, max_retries=0)
    return lambda: provider.embed_documents(["a text"])


def _gemini_embeddings(url):
    from mindgraph.providers.embedding.gemini import GeminiEmbeddings

    provider = GeminiEmbeddings(api_key=lambda: "k", base_url=url, dimension=3,
                                timeout_s=TIMEOUT_S, max_retries=0)
    return lambda: provider.embed_documents(["a text"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("make_call", [_openai_llm, _anthropic_llm, _gemini_llm,
                                       _openai_embeddings, _gemini_embeddings],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_dripping_server_is_given_up_near_timeout_s(drip_server, make_call):
    call = make_call(drip_server.url)
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        call()
    elapsed = time.monotonic() - started
    assert drip_server.connections == 1
    assert elapsed < TIMEOUT_S + SLACK_S, f"gave up after {elapsed:.1f} s"
    assert "timed out" in str(caught.value) or "timeout" in str(caught.value).lower()


@pytest.mark.timeout(60)
def test_the_deadline_is_per_attempt_and_a_retry_gets_a_fresh_one(drip_server):
    from mindgraph.providers.llm.openai import OpenAIProvider

    provider = OpenAIProvider(model="m", base_url=f"{drip_server.url}/v1", timeout_s=TIMEOUT_S,
                              max_retries=1, sleep=lambda s: None)
    started = time.monotonic()
    with pytest.raises(ProviderError, match="gave up after 2 attempts"):
        provider.complete("system", "prompt")
    elapsed = time.monotonic() - started
    assert drip_server.connections == 2
    assert 2 * TIMEOUT_S - 0.2 < elapsed < 2 * TIMEOUT_S + SLACK_S


def test_outside_a_deadline_nothing_changes(drip_server):
    """A client with deadlines but no deadline block keeps httpx's own (per-read) timeouts."""
    import httpx

    from mindgraph.providers.llm.base import deadline, httpx_client

    fast = DripServer(interval=0.0)
    try:
        with httpx_client() as client:
            assert client.get(fast.url).status_code == 200
            with deadline(5):
                assert client.get(fast.url).status_code == 200
            with deadline(0.3), pytest.raises(httpx.TimeoutException):
                client.get(drip_server.url)
    finally:
        fast.close()
