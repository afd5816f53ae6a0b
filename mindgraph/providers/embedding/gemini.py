"""Gemini embeddings through the google-genai SDK.

Documents are embedded with task type RETRIEVAL_DOCUMENT and queries with RETRIEVAL_QUERY, as
Google recommends for search. Vectors shortened with ``output_dimensionality`` are not unit
length, so every answer is normalised here. The SDK's own retries are left off: transient
failures (429, 5xx, timeouts) go through ``call_with_retries`` like every other provider.
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

DEFAULT_MODEL = "gemini-embedding-001"
KNOWN_DIMENSIONS = {"gemini-embedding-001": 3072, "text-embedding-004": 768,
                    "embedding-001": 768}
MAX_BATCH = 100               # batchEmbedContents accepts at most 100 requests
_TRANSIENT_CODES = {408, 409, 429}


class GeminiEmbeddings(EstimatedTokens):
    """Embeddings from the Gemini API (google-genai ``models.embed_content``)."""

    remote = True

    def __init__(self, *, model: str = DEFAULT_MODEL, api_key: KeySource | None = None,
                 dimension: int = 0, batch_size: int = 64, max_retries: int = 4,
                 timeout_s: float = 60.0, base_url: str = "",
                 http_client: httpx.Client | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self._model = model
        self._api_key = api_key
        self._requested_dimension = dimension
        self._dimension = dimension or KNOWN_DIMENSIONS.get(model, 0)
        self._batch_size = max(1, min(batch_size, MAX_BATCH))
        self._max_retries = max_retries
        self._timeout_s = timeout_s
        self._base_url = base_url
        self._http_client = http_client
        self._client: Any = None
        self._sleep = sleep           # injectable so tests do not wait out backoff
        self._lock = threading.Lock()
        self.calls = 0

    @property
    def model_version(self) -> str:
        """"gemini:<model>:<dimension>"."""
        return model_version_of("gemini", self._model, self.dimension)

    @property
    def dimension(self) -> int:
        """Configured or known width; otherwise learnt from one short request."""
        if not self._dimension:
            self._dimension = int(self._request(["dimension probe"],
                                                "RETRIEVAL_QUERY").shape[1])
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages with task type RETRIEVAL_DOCUMENT."""
        return self._embed(texts, "RETRIEVAL_DOCUMENT")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed queries with task type RETRIEVAL_QUERY; each request is counted against the
        serving caller's ``limits.embedding_calls_per_hour`` first (quotas/)."""
        return self._embed(texts, "RETRIEVAL_QUERY")

    def _embed(self, texts: Sequence[str], task_type: str) -> np.ndarray:
        if not texts:
            return empty_matrix(self.dimension)
        parts = []
        for batch in batched(list(texts), self._batch_size):
            if task_type == "RETRIEVAL_QUERY":
                before_call("embedding")    # a quota may refuse it first (quotas/)
            parts.append(self._request(list(batch), task_type))
        return check_matrix(np.vstack(parts), len(texts), self.dimension, self._where())

    def _where(self) -> str:
        return f"Gemini embeddings (model {self._model})"

    def _genai(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    from google import genai
                    from google.genai import types

                    options: dict[str, Any] = {"timeout": int(self._timeout_s * 1000)}
                    if self._base_url:
                        options["base_url"] = self._base_url
                    options["httpx_client"] = (self._http_client if self._http_client
                                               is not None else
                                               httpx_client(follow_redirects=True))
                    key = self._api_key() if self._api_key is not None else None
                    self._client = genai.Client(api_key=key,
                                                http_options=types.HttpOptions(**options))
        return self._client

    def _request(self, texts: list[str], task_type: str) -> np.ndarray:
        from google.genai import errors as genai_errors
        from google.genai import types

        config: dict[str, Any] = {"task_type": task_type}
        if self._requested_dimension:
            config["output_dimensionality"] = self._requested_dimension

        def once() -> np.ndarray:
            self.calls += 1
            try:
                with deadline(self._timeout_s):     # in total, not only between two bytes
                    response = self._genai().models.embed_content(
                        model=self._model, contents=texts,
                        config=types.EmbedContentConfig(**config))
            except genai_errors.APIError as exc:
                raise self._classify(exc) from exc
            except httpx.TimeoutException as exc:
                raise TransientProviderError(f"{self._where()}: timed out ({exc}).") from exc
            except httpx.TransportError as exc:
                raise TransientProviderError(f"{self._where()}: connection failed "
                                             f"({exc}).") from exc
            embeddings = response.embeddings or []
            if len(embeddings) != len(texts) or any(e.values is None for e in embeddings):
                raise ProviderError(f"{self._where()}: got {len(embeddings)} vectors for "
                                    f"{len(texts)} texts.")
            return np.asarray([e.values for e in embeddings], dtype=np.float32)

        return call_with_retries(once, max_retries=self._max_retries, sleep=self._sleep)

    def _classify(self, exc: Any) -> ProviderError:
        code = int(getattr(exc, "code", 0) or 0)
        message = getattr(exc, "message", None) or str(exc)
        if code in _TRANSIENT_CODES or code >= 500:
            return TransientProviderError(f"{self._where()}: HTTP {code}: {message}")
        if code in (400, 401, 403) and "key" in str(message).lower():
            return ProviderError(f"{self._where()}: HTTP {code}, the API key was refused "
                                 f"({message}). Check the key in the variable named by "
                                 f"embedding.api_key_env.")
        if code == 404:
            return ProviderError(f"{self._where()}: HTTP 404 ({message}). Check "
                                 f"embedding.model.")
        return ProviderError(f"{self._where()}: HTTP {code}: {message}")
