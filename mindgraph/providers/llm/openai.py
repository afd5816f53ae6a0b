"""OpenAI and any OpenAI-compatible server (Ollama, vLLM, llama.cpp server) over plain httpx.

One POST to ``{base_url}/chat/completions``. No SDK: the compatible servers implement only
this endpoint, and a hand-written request keeps the wire format visible. The official API gets
``max_completion_tokens`` (its reasoning models reject ``max_tokens``); other servers get the
long-standing ``max_tokens``, which all of them understand.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit

from ...errors import ProviderError
from ._http import (blanked, checked_answer, error_detail, parse_retry_after, status_error,
                    transport_error)
from .base import before_call, call_with_retries, deadline, httpx_client

if TYPE_CHECKING:     # imported when a provider is built: a search that asks no LLM skips it
    import httpx

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4.1-mini"


def is_official(base_url: str) -> bool:
    """True when ``base_url`` is OpenAI's own API (where a key is always needed)."""
    return urlsplit(base_url).hostname == "api.openai.com"


class OpenAIProvider:
    """Completes prompts through a chat-completions endpoint; safe to call from threads."""

    def __init__(self, *, model: str = DEFAULT_MODEL, api_key: str = "",
                 base_url: str = DEFAULT_BASE_URL, temperature: float = 0.2,
                 timeout_s: float = 120.0, max_retries: int = 4,
                 key_source: str = "the OpenAI API key", http_client: httpx.Client | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self._model = model
        self._base_url = base_url.rstrip("/")
        self._url = f"{self._base_url}/chat/completions"
        self._official = is_official(self._base_url)
        self._temperature = temperature
        self._timeout_s = timeout_s
        import httpx

        self._timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        self._max_retries = max_retries
        self._key_source = key_source
        self._sleep = sleep
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._secret = api_key           # blanked from the errors it raises (_http.blanked)
        # httpx.Client is thread-safe and pools connections across the compile workers.
        self._http = http_client if http_client is not None else httpx_client()

    @property
    def identity(self) -> str:
        """"openai:<model>", plus "@<host[:port]>" for servers other than api.openai.com."""
        if self._official:
            return f"openai:{self._model}"
        return f"openai:{self._model}@{urlsplit(self._base_url).netloc}"

    def complete(self, system: str, prompt: str, *, max_tokens: int = 4096) -> str:
        """Return the model's answer, retrying 429, 5xx, timeouts and refused connections."""
        before_call()      # a quota may refuse it first (quotas/)
        return call_with_retries(lambda: self._once(system, prompt, max_tokens),
                                 max_retries=self._max_retries, sleep=self._sleep)

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._http.close()

    def _once(self, system: str, prompt: str, max_tokens: int) -> str:
        limit_key = "max_completion_tokens" if self._official else "max_tokens"
        body = {
            "model": self._model,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": prompt}],
            "temperature": self._temperature,
            limit_key: max_tokens,
        }
        import httpx

        try:
            with deadline(self._timeout_s):     # in total, not only between two bytes
                response = self._http.post(self._url, json=body, headers=self._headers,
                                           timeout=self._timeout)
        except httpx.TransportError as exc:
            raise transport_error("openai", exc, self._base_url, self._secret) from exc
        if response.status_code != 200:
            raise status_error("openai", response.status_code,
                               error_detail(_json_or_none(response), response.text),
                               model=self._model, key_source=self._key_source,
                               retry_after=parse_retry_after(response.headers),
                               where=self._base_url, secret=self._secret)
        return self._answer(_json_or_none(response), response.text)

    def _answer(self, data: Any, raw: str) -> str:
        try:
            choice = data["choices"][0]
            message = choice["message"]
            if not isinstance(message, dict):
                raise TypeError("the message is not an object")
        except (TypeError, KeyError, IndexError):
            raise ProviderError(
                f"openai-compatible server at {self._base_url} sent an unexpected answer "
                f"({blanked(raw, self._secret)[:200]!r}). Check compile.base_url: it must be "
                f"the API root that serves /chat/completions, usually ending in /v1.") from None
        if message.get("refusal"):
            raise ProviderError(f"openai refused to rewrite this note: {message['refusal']}")
        finish = choice.get("finish_reason")
        return checked_answer("openai", _text(message.get("content")), stop=finish,
                              truncated=finish == "length")


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _text(content: Any) -> str:
    """Message content as text: a string, or (some servers) a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content
                       if isinstance(part, dict) and part.get("type") == "text")
    return ""
