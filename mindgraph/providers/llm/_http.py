"""What every LLM backend does with an HTTP failure: retry it, or explain how to fix it.

Kept in one place so the three backends classify errors identically: 408/409/425/429 and
every 5xx (Anthropic's 529 "overloaded" included) are transient; any other 4xx is final and
its message names the setting to change.
"""

from __future__ import annotations

from typing import Any, Mapping

from ...errors import ProviderError, TransientProviderError
from ...httputil import retry_after_seconds

_TRANSIENT_4XX = frozenset({408, 409, 425, 429})


def is_transient_status(status: int) -> bool:
    """True for statuses worth retrying: timeouts, conflicts, rate limits and server errors."""
    return status in _TRANSIENT_4XX or status >= 500


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    return retry_after_seconds(headers.get("retry-after"))


def error_detail(body: Any, fallback: str = "") -> str:
    """The human message inside an error body ({"error": {"message"}} and its variants)."""
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
        for key in ("message", "detail"):
            if isinstance(body.get(key), str):
                return body[key]
    return fallback[:300]


def blanked(text: str, secret: str = "") -> str:
    """``text`` with ``secret`` (the API key) blanked out. A provider's error message may
    echo the request (a gateway quoting the Authorization header it refused), and these
    messages travel: into the server's log and the operator's terminal (search's
    ``degradation`` says them to agents in general terms: errors.failure_note)."""
    return text.replace(secret, "<api key>") if secret else text


def status_error(name: str, status: int, detail: str, *, model: str, key_source: str,
                 retry_after: float | None = None, where: str = "",
                 secret: str = "") -> ProviderError:
    """The error to raise for an HTTP error status: transient ones are retried by the caller
    (``secret``, the API key, is blanked from the provider's ``detail``)."""
    detail = blanked(detail, secret).strip().rstrip(".")
    said = f"{name} answered HTTP {status}" + (f": {detail}" if detail else "")
    if is_transient_status(status):
        hint = ("rate limited; lower compile.concurrency if this persists" if status == 429
                else "the provider is busy or failing; try again later")
        return TransientProviderError(f"{said} ({hint})", retry_after=retry_after)
    fixes = {
        400: "the request was rejected; check compile.model and the note size "
             "(compile.max_note_bytes)",
        401: f"check the key in {key_source}",
        402: "the account has no credit left; check billing with the provider",
        403: f"check that the key in {key_source} may use model {model!r}",
        404: f"check compile.model ({model!r})" + (f" and compile.base_url ({where})"
                                                     if where else ""),
        413: "the note is too large for one request; lower compile.max_note_bytes",
    }
    fix = fixes.get(status, "check compile.model and compile.base_url in mindgraph.yml")
    return ProviderError(f"{said}. Fix: {fix}.")


def transport_error(name: str, exc: BaseException, where: str,
                    secret: str = "") -> TransientProviderError:
    """A timeout or dropped connection: always worth a retry (``secret`` blanked from it)."""
    kind = "timed out" if "timeout" in type(exc).__name__.lower() else "could not be reached"
    hint = ("raise compile.timeout_s if answers are long" if kind == "timed out"
            else "check the network, or that the server at this address is running")
    return TransientProviderError(blanked(f"{name} at {where} {kind} ({type(exc).__name__}: "
                                          f"{exc}); {hint}", secret))


def checked_answer(name: str, text: str | None, *, stop: str | None, truncated: bool) -> str:
    """Return the answer, or raise ProviderError when it is empty or was cut short."""
    if truncated:
        # A page cut off mid-sentence would pass for a real page; fail the note instead.
        raise ProviderError(f"{name} stopped at the output token limit (stop reason {stop}); "
                            f"the answer is incomplete. Shorten the note or use a model with "
                            f"a larger output limit.")
    if not text or not text.strip():
        reason = f" (stop reason {stop})" if stop else ""
        raise ProviderError(f"{name} returned an empty answer{reason}. Retry the note; if it "
                            f"keeps happening the model may be refusing this content.")
    return text


def transport_error_types() -> tuple[type[BaseException], ...]:
    """httpx's and httpx2's transport errors (SDKs use either, depending on their version)."""
    import httpx

    types: list[type[BaseException]] = [httpx.TransportError]
    try:
        import httpx2  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        types.append(httpx2.TransportError)
    return tuple(types)
