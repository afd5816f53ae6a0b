"""JSON over HTTP for note-app adapters: a bearer token from the environment, bounded retries.

- The token is read from the environment variable the adapter's options name (never from
  mindgraph.yml), when the first request is made; a missing one is an error naming it.
- 429 and 503 are retried after the server's ``Retry-After`` (seconds or an HTTP date), other
  5xx after 1, 2, 4 … s; at most ``max_retries`` times, and never waiting longer than
  ``max_wait_s`` at once (a longer ``Retry-After`` fails at once, saying how long to wait).
- 401 is an error naming the variable and the fix (the token expired or was revoked); 404 is
  ``ItemNotFound``; any other failure an ``AdapterError`` with the status and the path (and
  the start of the answer, the token blanked out: an error page may echo the request).
- The app is a server on the network, so its answers are bounded: ``timeout_s`` is a deadline
  for the whole answer, not only between two reads (a server dripping a byte at a time held
  `pull`, and the serving process's native-search threads, for ever), and an answer of more
  than ``max_response_bytes`` (64 MiB; an account listing is a few MB) fails the adapter when
  it gets there instead of being read whole into memory. A listing (many answers) may also be
  given a ``ListingBudget``: every answer's bytes count against it as they arrive, and the
  read stops as soon as they pass it (`pull`'s ``limits.max_pull_bytes``; without it a hostile
  app could make one pull hold many answers of 64 MiB each).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Mapping

import httpx

from ..errors import AdapterError
from ..httputil import retry_after_seconds
from .base import ItemNotFound, ListingBudget

RETRIED = frozenset({429, 500, 502, 503, 504})
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class _Answer:
    """What the app answered, read within the deadline and the size cap."""

    def __init__(self, response: httpx.Response, content: bytes):
        self.status_code = response.status_code
        self.headers = response.headers
        self.content = content
        self.text = content.decode(response.encoding or "utf-8", errors="replace")


class AppHTTP:
    """A JSON client of one app's API (its connection pool opened at the first request)."""

    def __init__(self, app: str, base_url: str, token_env: str, *, token_help: str = "",
                 transport: httpx.BaseTransport | None = None,
                 environ: Mapping[str, str] | None = None, timeout_s: float = 10.0,
                 max_retries: int = 3, max_wait_s: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep,
                 max_response_bytes: int = MAX_RESPONSE_BYTES):
        self.app = app
        self.base_url = base_url.rstrip("/")
        self.token_env = token_env
        self.token_help = token_help
        self.environ = os.environ if environ is None else environ
        self.max_retries = max_retries
        self.max_wait_s = max_wait_s
        self.sleep = sleep
        self._transport = transport
        self._timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self._client: httpx.Client | None = None

    def request(self, method: str, path: str, body: Any = None,
                budget: ListingBudget | None = None) -> Any:
        """The parsed JSON answer (None for an empty one) of ``method path``; its bytes (and
        those of retried answers) count against ``budget`` as they are read."""
        headers = {"Authorization": f"Bearer {self._token()}", "Accept": "application/json"}
        if self._client is None:
            self._client = httpx.Client(transport=self._transport, timeout=self._timeout_s)
        for attempt in range(self.max_retries + 1):
            try:
                response = self._read(method, path, body, headers, budget)
            except httpx.TransportError as exc:
                raise AdapterError(f"{self.app}: cannot reach {self.base_url} "
                                   f"({type(exc).__name__}: {exc}). Check the network and "
                                   f"retry.") from exc
            if response.status_code in RETRIED and attempt < self.max_retries:
                self.sleep(self._wait(response, attempt, path))
                continue
            return self._answer(response, method, path)
        raise AssertionError("unreachable")   # the last attempt returns or raises

    def _read(self, method: str, path: str, body: Any, headers: dict[str, str],
              budget: ListingBudget | None = None) -> _Answer:
        """One request, its answer read whole within ``timeout_s``, the size cap and the
        listing's ``budget``."""
        assert self._client is not None
        deadline = time.monotonic() + self._timeout_s
        with self._client.stream(method, self.base_url + path, json=body,
                                 headers=headers) as response:
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:
                    raise AdapterError(
                        f"{self.app}: {method} {path} answered more than "
                        f"{self.max_response_bytes:,} bytes (max_response_bytes); not read "
                        f"further. Check base_url, or raise max_response_bytes in the "
                        f"adapter's options.")
                if time.monotonic() > deadline:
                    raise AdapterError(
                        f"{self.app}: {method} {path} did not answer within timeout_s "
                        f"({self._timeout_s:g} s) for the whole answer ({size:,} bytes so "
                        f"far). Check the network, or raise timeout_s in the adapter's "
                        f"options.")
                if budget is not None:
                    budget.spend(len(chunk))
                chunks.append(chunk)
            return _Answer(response, b"".join(chunks))

    def close(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            self._client.close()

    def _token(self) -> str:
        token = (self.environ.get(self.token_env) or "").strip()
        if not token:
            raise AdapterError(f"{self.app}: no access token: the environment variable "
                               f"{self.token_env} is not set. {self.token_help}".rstrip())
        return token

    def _wait(self, response: _Answer, attempt: int, path: str) -> float:
        wait = retry_after_seconds(response.headers.get("retry-after"))
        if wait is None:
            wait = float(2 ** attempt)
        if wait > self.max_wait_s:
            raise AdapterError(f"{self.app}: {path} answered {response.status_code} and asks "
                               f"to wait {wait:.0f} s before retrying (more than the "
                               f"{self.max_wait_s:g} s the adapter waits); retry later.")
        return wait

    def _answer(self, response: _Answer, method: str, path: str) -> Any:
        status = response.status_code
        if status == 401:
            raise AdapterError(f"{self.app}: the API refused the access token in "
                               f"{self.token_env} (401 Unauthorized: it expired or was "
                               f"revoked). Get a new token and export {self.token_env}=<token>. "
                               f"{self.token_help}".rstrip())
        if status == 404:
            raise ItemNotFound(f"{self.app}: {method} {path} found nothing (404): the item or "
                               f"project was deleted in the app, or the id is wrong.")
        if status == 429:
            raise AdapterError(f"{self.app}: still rate limited (429) after "
                               f"{self.max_retries} retries; retry in a minute.")
        if status >= 400:
            raise AdapterError(f"{self.app}: {method} {path} failed with HTTP {status}: "
                               f"{self._blanked(response.text)[:200]}")
        if not response.content.strip():
            return None
        try:
            return json.loads(response.content)
        except ValueError as exc:
            raise AdapterError(f"{self.app}: {method} {path} answered something that is not "
                               f"JSON ({self._blanked(response.text)[:80]!r}).") from exc

    def _blanked(self, text: str) -> str:
        """``text`` with the access token (an error page may echo the request) blanked."""
        token = (self.environ.get(self.token_env) or "").strip()
        return text.replace(token, "<token>") if token else text

