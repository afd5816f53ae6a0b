"""Gemini through ``google-genai`` (``client.models.generate_content``), Gemini API only.

The SDK does not retry unless given ``retry_options``; we leave them unset so that
``call_with_retries`` is the only retry loop. Google reports a rate limit's wait in the error
body (``google.rpc.RetryInfo.retryDelay``) rather than in a Retry-After header; both are read.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ...errors import ConfigError, ProviderError
from ._http import (checked_answer, parse_retry_after, status_error, transport_error,
                    transport_error_types)
from .base import before_call, call_with_retries, deadline, httpx_client

DEFAULT_MODEL = "gemini-3.8-flash"


class GeminiProvider:
    """Completes prompts with a Gemini model; safe to call from several threads at once."""

    def __init__(self, api_key: str, *, model: str = DEFAULT_MODEL, base_url: str = "",
                 temperature: float = 0.2, timeout_s: float = 120.0, max_retries: int = 4,
                 key_source: str = "the Gemini API key", http_client: Any = None,
                 sleep: Callable[[float], None] = time.sleep):
        try:
            from google import genai
            from google.genai import types
        except ImportError as exc:  # a core dependency, but say what to do if it is missing
            raise ConfigError("compile.provider=gemini needs the google-genai package: "
                              "pip install google-genai") from exc
        self._errors = genai.errors
        self._types = types
        self._model = model
        self._temperature = temperature
        self._max_retries = max_retries
        self._key_source = key_source
        self._sleep = sleep
        self._where = base_url or "generativelanguage.googleapis.com"
        self._secret = api_key           # blanked from the errors it raises
        # http_client may be an httpx.Client or httpx2.Client (tests pass a MockTransport).
        self._timeout_s = timeout_s
        if http_client is None:
            http_client = httpx_client(follow_redirects=True)
        options = types.HttpOptions(base_url=base_url or None, timeout=int(timeout_s * 1000),
                                    httpx_client=http_client)
        # vertexai=False: an ambient GOOGLE_GENAI_USE_VERTEXAI must not switch the backend.
        self._client = genai.Client(api_key=api_key, vertexai=False, http_options=options)
        self._transport_errors = transport_error_types()

    @property
    def identity(self) -> str:
        """"gemini:<model>"."""
        return f"gemini:{self._model}"

    def complete(self, system: str, prompt: str, *, max_tokens: int = 4096) -> str:
        """Return Gemini's answer, retrying 429, 5xx and timeouts."""
        before_call()      # a quota may refuse it first (quotas/)
        return call_with_retries(lambda: self._once(system, prompt, max_tokens),
                                 max_retries=self._max_retries, sleep=self._sleep)

    def _once(self, system: str, prompt: str, max_tokens: int) -> str:
        config = self._types.GenerateContentConfig(
            system_instruction=system, temperature=self._temperature,
            max_output_tokens=max_tokens)
        try:
            with deadline(self._timeout_s):     # in total, not only between two bytes
                response = self._client.models.generate_content(
                    model=self._model, contents=prompt, config=config)
        except self._errors.APIError as exc:
            raise self._status_error(exc) from exc
        except self._transport_errors as exc:
            raise transport_error("gemini", exc, self._where, self._secret) from exc
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            raise ProviderError(f"gemini blocked the prompt ({_name(feedback.block_reason)}); "
                                f"compile this note offline or edit it.")
        finish = None
        if response.candidates:
            finish = _name(response.candidates[0].finish_reason)
        return checked_answer("gemini", response.text, stop=finish,
                              truncated=finish == "MAX_TOKENS")

    def _status_error(self, exc: Any) -> ProviderError:
        code = int(exc.code or 0)
        detail = exc.message or str(exc)
        if code in (400, 403) and _is_key_problem(exc.details):
            code = 401  # Gemini reports a bad key as 400 INVALID_ARGUMENT / API_KEY_INVALID
        headers = getattr(exc.response, "headers", None)
        wait = parse_retry_after(headers) or _retry_delay(exc.details)
        return status_error("gemini", code, detail, model=self._model,
                            key_source=self._key_source, retry_after=wait,
                            secret=self._secret)


def _name(value: Any) -> str | None:
    """Enum member or plain string → its name ("STOP", "MAX_TOKENS", "SAFETY")."""
    if value is None:
        return None
    return str(getattr(value, "name", value))


def _details(body: Any) -> list[dict]:
    error = body.get("error", body) if isinstance(body, dict) else {}
    details = error.get("details") if isinstance(error, dict) else None
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def _is_key_problem(body: Any) -> bool:
    return any(d.get("reason") in ("API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED")
               for d in _details(body))


def _retry_delay(body: Any) -> float | None:
    """Seconds from a google.rpc.RetryInfo detail ("17s", "0.5s"), if present."""
    for detail in _details(body):
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = str(detail.get("retryDelay", "")).rstrip("s")
            try:
                return max(0.0, float(delay))
            except ValueError:
                return None
    return None
