"""OpenAI embeddings and every server that speaks the same API (Ollama, vLLM, llama.cpp, LM Studio).

One POST to ``{base_url}/embeddings`` per batch: ``{"model", "input": [...]}``, plus
``dimensions`` for models that can shorten their vectors (text-embedding-3-*). HTTP 408/409/429
and 5xx, timeouts and dropped connections are transient and retried by ``call_with_retries``
(honouring Retry-After); other errors fail at once with the server's message and the fix.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Sequence

import httpx
import numpy as np

from ...errors import ProviderError, TransientProviderError
from ..llm.base import before_call, call_with_retries, deadline, httpx_client
from .base import (EstimatedTokens, KeySource, batched, check_matrix, empty_matrix,
                   model_version_of)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
# Native widths of well-known models, so model_version is known without a call.
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "bge-m3": 1024,
}
# Chunk size for remote models, in estimated tokens: well under their limits (8191 for
# OpenAI, 512-8192 for common local servers) because focused sections retrieve better.
_TRANSIENT_STATUS = {408, 409, 429}


def retry_after_seconds(response: httpx.Response) -> float | None:
    """Seconds from a Retry-After header (numeric form), or None."""
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def error_detail(response: httpx.Response) -> str:
    """The server's error message, from a JSON body when there is one."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return response.text[:300]


def _key_blanked(exc: ProviderError, key: str) -> ProviderError:
    """``exc`` with the API key blanked from its message: a server's error page may echo the
    request, and the message reaches the server's log and the operator's terminal (agents
    read it in general terms: errors.for_agents, errors.failure_note)."""
    if key and exc.args and key in str(exc.args[0]):
        exc.args = (str(exc.args[0]).replace(key, "<api key>"), *exc.args[1:])
    return exc


class OpenAIEmbeddings(EstimatedTokens):
    """Embeddings from /v1/embeddings of OpenAI or a compatible server."""

    remote = True

    def __init__(self, *, model: str = DEFAULT_MODEL, api_key: KeySource | None = None,
                 base_url: str = DEFAULT_BASE_URL, dimension: int = 0, batch_size: int = 64,
                 max_retries: int = 4, timeout_s: float = 60.0,
                 client: httpx.Client | None = None, provider_name: str = "openai",
                 sleep: Callable[[float], None] = time.sleep):
        self._model = model
        self._api_key = api_key
        self._base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._requested_dimension = dimension
        self._dimension = dimension or KNOWN_DIMENSIONS.get(model, 0)
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._timeout = timeout_s
        self._client = client
        self._provider_name = provider_name
        self._sleep = sleep           # injectable so tests do not wait out backoff
        self._lock = threading.Lock()
        self.calls = 0

    @property
    def model_version(self) -> str:
        """"openai:<model>:<dimension>" (one probe call if the width is not known)."""
        return model_version_of(self._provider_name, self._model, self.dimension)

    @property
    def dimension(self) -> int:
        """Configured or known width; otherwise learnt from one short request."""
        if not self._dimension:
            self._dimension = int(self._request(["dimension probe"]).shape[1])
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages, one request per batch."""
        return self._embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed queries (this API has no task type); each request is counted against the
        serving caller's ``limits.embedding_calls_per_hour`` first (quotas/)."""
        return self._embed(texts, query=True)

    def _embed(self, texts: Sequence[str], query: bool = False) -> np.ndarray:
        if not texts:
            return empty_matrix(self.dimension)
        parts = []
        for batch in batched(list(texts), self._batch_size):
            if query:
                before_call("embedding")    # a quota may refuse it first (quotas/)
            parts.append(self._request(list(batch)))
        matrix = np.vstack(parts)
        return check_matrix(matrix, len(texts), self.dimension, self._where())

    def _where(self) -> str:
        return f"{self._provider_name} embeddings at {self._base_url} (model {self._model})"

    def _http(self) -> httpx.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = httpx_client(timeout=self._timeout)
        return self._client

    def _request(self, texts: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self._model, "input": texts,
                                   "encoding_format": "float"}
        if self._requested_dimension and self._model.startswith("text-embedding-3"):
            payload["dimensions"] = self._requested_dimension
        headers = {}
        key = self._api_key() if self._api_key is not None else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self._base_url}/embeddings"

        def once() -> np.ndarray:
            self.calls += 1
            try:
                try:
                    with deadline(self._timeout):   # in total, not only between two bytes
                        response = self._http().post(url, json=payload, headers=headers)
                except httpx.TimeoutException as exc:
                    raise TransientProviderError(f"{self._where()}: timed out ({exc}).") from exc
                except httpx.TransportError as exc:
                    raise TransientProviderError(f"{self._where()}: connection failed ({exc}). "
                                                 f"Check that the server is running.") from exc
                return self._parse(response, len(texts))
            except ProviderError as exc:
                raise _key_blanked(exc, key)

        return call_with_retries(once, max_retries=self._max_retries, sleep=self._sleep)

    def _parse(self, response: httpx.Response, count: int) -> np.ndarray:
        status = response.status_code
        if status in _TRANSIENT_STATUS or status >= 500:
            raise TransientProviderError(f"{self._where()}: HTTP {status}: "
                                         f"{error_detail(response)}",
                                         retry_after=retry_after_seconds(response))
        if status in (401, 403):
            raise ProviderError(f"{self._where()}: HTTP {status}, the API key was refused "
                                f"({error_detail(response)}). Check the key in the variable "
                                f"named by embedding.api_key_env.")
        if status == 404:
            raise ProviderError(f"{self._where()}: HTTP 404 ({error_detail(response)}). Check "
                                f"embedding.model and embedding.base_url (it should end in /v1).")
        if status >= 400:
            raise ProviderError(f"{self._where()}: HTTP {status}: {error_detail(response)}")
        try:
            body = response.json()
        except ValueError:
            body = None
        rows = self._rows(body, response.text)
        if len(rows) != count:
            raise ProviderError(f"{self._where()}: got {len(rows)} vectors for {count} texts.")
        try:
            matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (ValueError, TypeError) as exc:   # ragged rows, text where numbers belong
            raise ProviderError(f"{self._where()}: unexpected response: the embeddings are "
                                f"not lists of numbers of one length "
                                f"({response.text[:200]!r}).") from exc
        if matrix.ndim != 2:
            raise ProviderError(f"{self._where()}: unexpected response: each embedding must "
                                f"be a list of numbers ({response.text[:200]!r}).")
        return matrix

    def _rows(self, body: Any, raw: str) -> list[dict]:
        """The ``data`` items in index order; ProviderError names what is malformed."""
        data = body.get("data") if isinstance(body, dict) else None
        problem = ""
        if not isinstance(data, list):
            problem = "no 'data' list"
        elif not all(isinstance(item, dict) and isinstance(item.get("embedding"), list)
                     for item in data):
            problem = "'data' must be a list of objects with an 'embedding' list"
        elif not all(isinstance(item.get("index", 0), int) for item in data):
            problem = "an 'index' is not a number"
        if problem:
            raise ProviderError(f"{self._where()}: unexpected response ({problem}): "
                                f"{raw[:200]!r}. Check embedding.base_url: it must be the API "
                                f"root that serves /embeddings, usually ending in /v1.")
        return sorted(data, key=lambda item: item.get("index", 0))
