"""The LLM provider contract and the call policy shared by every backend (embedding ones too):
retries, and a total deadline per call.

A provider turns (system, prompt) into text. Backends raise TransientProviderError for
failures worth retrying (HTTP 429, 5xx, timeouts, dropped connections) and ProviderError for
the rest (bad key, bad request); ``call_with_retries`` retries only the transient ones, with
exponential backoff and jitter, honouring a server's Retry-After.

``deadline`` makes ``timeout_s`` a total for one call, whatever pace the server keeps. httpx's
timeouts bound each wait between bytes: with a read timeout of 3 s, a server that
sends one byte a second keeps a call alive for minutes. A call made inside
``deadline(seconds)`` on a client from ``httpx_client()`` / ``httpx2_client()`` (or one passed
through ``with_deadlines``) has every connect, TLS handshake, read and write clamped to the
time left, and a timeout once it is spent, so the call ends within ``seconds`` on every
backend, the SDK-driven ones (anthropic on httpx2, google-genai on httpx) included.

The clamp sits in the connection pool's network backend, the one layer every request of
httpx and httpx2 goes through. The deadline itself is thread-local: their synchronous
clients do all I/O in the calling thread. Outside ``deadline`` nothing changes.

``before_call`` is the first thing every backend's ``complete`` does (and, with "embedding",
a cloud embedding provider's query embedding): it runs the guard the caller's context set
with ``guard_calls`` (mindgraph/quotas/: the serving request's identity's quotas), which
raises to refuse the call before anything is sent. Outside a guarded context (the CLI, the
owner) it does nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import random
import threading
import time
from types import ModuleType
from typing import Any, Callable, Iterator, Protocol, TypeVar, runtime_checkable

from ...errors import ProviderError, TransientProviderError

T = TypeVar("T")


@runtime_checkable
class LLMProvider(Protocol):
    """Something that completes a prompt. Implementations must be safe to call from threads."""

    @property
    def identity(self) -> str:
        """Provider and model, e.g. "anthropic:claude-sonnet-4-5"; part of every cache key."""
        ...

    def complete(self, system: str, prompt: str, *, max_tokens: int = 4096) -> str:
        """Return the model's text answer; raise ProviderError / TransientProviderError."""
        ...


def call_with_retries(call: Callable[[], T], *, max_retries: int = 4, base_delay: float = 0.5,
                      max_delay: float = 30.0,
                      sleep: Callable[[float], None] = time.sleep) -> T:
    """Run ``call``; on TransientProviderError wait and retry up to ``max_retries`` times."""
    attempt = 0
    while True:
        try:
            return call()
        except TransientProviderError as exc:
            if attempt >= max_retries:
                raise ProviderError(f"{exc} (gave up after {attempt + 1} attempts)") from exc
            delay = min(max_delay, base_delay * (2 ** attempt))
            delay = delay * (0.5 + random.random() / 2)
            if exc.retry_after is not None:
                delay = min(max_delay, max(delay, exc.retry_after))
            sleep(delay)
            attempt += 1


_GUARD: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "mindgraph_llm_call_guard", default=None)


def guard_calls(guard: Callable[[str], None] | None) -> contextvars.Token:
    """Run ``guard(kind)`` before every provider call made in this context (and in the
    threads that copy it): kind "llm" for a completion, "embedding" for a cloud provider's
    query embedding; it raises to refuse the call. Returns the token that resets it."""
    return _GUARD.set(guard)


def release_guard(token: contextvars.Token) -> None:
    """Undo the ``guard_calls`` that returned ``token``."""
    _GUARD.reset(token)


def before_call(kind: str = "llm") -> None:
    """What every backend's ``complete`` runs first (``kind`` "embedding": a cloud embedding
    provider's query request): this context's guard, if any (it raises to refuse the call:
    no request reaches the provider)."""
    guard = _GUARD.get()
    if guard is not None:
        guard(kind)


_state = threading.local()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Give the HTTP calls made in this block (in this thread) ``seconds`` in total."""
    outer = getattr(_state, "at", None)
    at = time.monotonic() + seconds
    _state.at = at if outer is None else min(outer, at)
    try:
        yield
    finally:
        _state.at = outer


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    at = getattr(_state, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the call took longer than its total time limit (timeout_s)")
    return left if timeout is None else min(timeout, left)


class _Stream:
    """A network stream whose every wait ends at the current deadline."""

    def __init__(self, inner: Any, core: ModuleType):
        self._inner = inner
        self._core = core

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, self._core.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, self._core.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> "_Stream":
        inner = self._inner.start_tls(ssl_context, server_hostname,
                                      _left(timeout, self._core.ConnectTimeout))
        return _Stream(inner, self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    """httpcore's network backend with the deadline applied to connects and streams."""

    def __init__(self, inner: Any, core: ModuleType):
        self._inner = inner
        self._core = core

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None) -> _Stream:
        stream = self._inner.connect_tcp(host, port, _left(timeout, self._core.ConnectTimeout),
                                         local_address=local_address,
                                         socket_options=socket_options)
        return _Stream(stream, self._core)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> _Stream:
        stream = self._inner.connect_unix_socket(
            path, _left(timeout, self._core.ConnectTimeout), socket_options=socket_options)
        return _Stream(stream, self._core)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def with_deadlines(client: Any, core: ModuleType) -> Any:
    """``client`` (an httpx or httpx2 Client; ``core`` is its httpcore module) with the
    deadline applied to its transport and its proxy transports; returned for chaining.

    A transport that is not httpx's own (a MockTransport in tests) is left as it is."""
    transports = [client._transport, *client._mounts.values()]   # noqa: SLF001 - see above
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, _Backend):
            pool._network_backend = _Backend(backend, core)
    return client


def httpx_client(**kwargs: Any) -> Any:
    """An ``httpx.Client(**kwargs)`` whose calls keep to ``deadline``."""
    import httpcore
    import httpx

    return with_deadlines(httpx.Client(**kwargs), httpcore)


def httpx2_client(client: Any = None, **kwargs: Any) -> Any:
    """An ``httpx2.Client(**kwargs)`` (or ``client``, e.g. an SDK's default client) whose
    calls keep to ``deadline``."""
    import httpcore2
    import httpx2

    return with_deadlines(client if client is not None else httpx2.Client(**kwargs), httpcore2)
