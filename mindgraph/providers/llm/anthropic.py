"""Claude through the Messages API, using the official ``anthropic`` SDK.

The SDK's own retries are off (``max_retries=0``): ``call_with_retries`` owns the policy so
every backend backs off the same way. No temperature is sent: the API version the SDK speaks
since anthropic 2.0 (``anthropic-version: 2026-10-21``) removed the sampling parameters and
answers HTTP 400 when one is present, so ``compile.temperature`` applies to the other backends.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ...errors import ConfigError, ProviderError
from ._http import checked_answer, error_detail, parse_retry_after, status_error, transport_error
from .base import before_call, call_with_retries, deadline, httpx2_client

DEFAULT_MODEL = "claude-sonnet-5-5"


class AnthropicProvider:
    """Completes prompts with a Claude model; safe to call from several threads at once."""

    def __init__(self, api_key: str, *, model: str = DEFAULT_MODEL, base_url: str = "",
                 timeout_s: float = 120.0, max_retries: int = 4,
                 key_source: str = "the Anthropic API key", http_client: Any = None,
                 sleep: Callable[[float], None] = time.sleep):
        try:
            import anthropic
        except ImportError as exc:  # a core dependency, but say what to do if it is missing
            raise ConfigError("compile.provider=anthropic needs the anthropic package: "
                              "pip install anthropic") from exc
        self._sdk = anthropic
        self._model = model
        self._max_retries = max_retries
        self._key_source = key_source
        self._sleep = sleep
        # ``http_client`` must be the SDK's own client type (httpx2.Client in anthropic>=2).
        if http_client is None:
            http_client = httpx2_client(anthropic.DefaultHttpxClient())
        self._timeout_s = timeout_s
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url or None,
                                           max_retries=0, timeout=timeout_s,
                                           http_client=http_client)
        self._where = base_url or "api.anthropic.com"
        self._secret = api_key           # blanked from the errors it raises

    @property
    def identity(self) -> str:
        """"anthropic:<model>"."""
        return f"anthropic:{self._model}"

    def complete(self, system: str, prompt: str, *, max_tokens: int = 4096) -> str:
        """Return Claude's answer, retrying rate limits, overloads, 5xx and timeouts."""
        before_call()      # a quota may refuse it first (quotas/)
        return call_with_retries(lambda: self._once(system, prompt, max_tokens),
                                 max_retries=self._max_retries, sleep=self._sleep)

    def _once(self, system: str, prompt: str, max_tokens: int) -> str:
        sdk = self._sdk
        try:
            with deadline(self._timeout_s):     # in total, not only between two bytes
                message = self._client.messages.create(
                    model=self._model, max_tokens=max_tokens, system=system,
                    messages=[{"role": "user", "content": prompt}])
        except sdk.APIStatusError as exc:
            raise status_error("anthropic", exc.status_code, error_detail(exc.body, str(exc)),
                               model=self._model, key_source=self._key_source,
                               retry_after=parse_retry_after(exc.response.headers),
                               secret=self._secret) from exc
        except sdk.APIConnectionError as exc:  # APITimeoutError is a subclass
            raise transport_error("anthropic", exc, self._where, self._secret) from exc
        except sdk.APIResponseValidationError as exc:
            raise ProviderError(f"anthropic returned a response mindgraph cannot read: {exc}. "
                                f"Check compile.base_url points at the Anthropic API.") from exc
        text = "".join(block.text for block in message.content
                       if getattr(block, "type", "") == "text")
        stop = message.stop_reason
        if stop == "refusal":
            raise ProviderError("anthropic refused to rewrite this note (stop reason refusal); "
                                "compile it offline or edit the note.")
        return checked_answer("anthropic", text, stop=stop,
                              truncated=stop in ("max_tokens", "model_context_window_exceeded"))
