"""``compile.provider`` in mindgraph.yml → an LLM backend (or None for the offline compiler)."""

from __future__ import annotations

from urllib.parse import urlsplit

from ...config import Settings
from ...errors import ConfigError
from .base import LLMProvider

# compile.api_key_env when it is not set (the providers' own SDKs read the same names); an
# OpenAI-compatible server has none: a local one (Ollama, vLLM) needs no key.
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}


def make_llm_provider(settings: Settings, temperature: float | None = None
                      ) -> LLMProvider | None:
    """Build the configured backend; None when compile.provider is "offline". ``temperature``
    replaces compile.temperature (a task that wants less variation: enrich's link typing).

    Raises ConfigError naming the key or environment variable to fix. Backend modules are
    imported here, not at the top, so the offline path never loads an SDK.
    """
    c = settings.compile
    if c.provider == "offline":
        return None
    heat = c.temperature if temperature is None else temperature
    what = f"compile.provider={c.provider}"
    if c.base_url and urlsplit(c.base_url).scheme not in ("http", "https"):
        raise ConfigError(f"{settings.origin('compile.base_url')}: compile.base_url "
                          f"{c.base_url!r} must start with "
                          f"http:// or https:// (e.g. http://localhost:11434/v1 for Ollama).")
    key_env = c.api_key_env or DEFAULT_KEY_ENV.get(c.provider, "")
    key_source = f"${key_env}" if key_env else "the API key"
    common = dict(timeout_s=c.timeout_s, max_retries=c.max_retries, key_source=key_source)
    if c.provider == "anthropic":
        from .anthropic import DEFAULT_MODEL, AnthropicProvider

        return AnthropicProvider(settings.secret(key_env, what),
                                 model=c.model or DEFAULT_MODEL, base_url=c.base_url, **common)
    if c.provider == "gemini":
        from .gemini import DEFAULT_MODEL, GeminiProvider

        return GeminiProvider(settings.secret(key_env, what),
                              model=c.model or DEFAULT_MODEL, base_url=c.base_url,
                              temperature=heat, **common)
    if c.provider == "openai":
        from .openai import DEFAULT_BASE_URL, DEFAULT_MODEL, OpenAIProvider, is_official

        base_url = c.base_url or DEFAULT_BASE_URL
        official = is_official(base_url)
        if official and not c.api_key_env:
            raise ConfigError(f"{settings.origin('compile.provider')}: compile.provider is "
                              f"openai but compile.api_key_env is empty. Name the environment "
                              f"variable that holds the key (api_key_env: OPENAI_API_KEY), or "
                              f"set compile.base_url to a local OpenAI-compatible server.")
        if not official and not c.model:
            raise ConfigError(f"{settings.origin('compile.base_url')}: compile.model is "
                              f"required with "
                              f"compile.base_url {base_url}. Set it to a model that server "
                              f"serves (for Ollama, a name from `ollama list`).")
        # A local server usually needs no key; when a variable is named it must be set.
        api_key = settings.secret(c.api_key_env, what) if c.api_key_env else ""
        return OpenAIProvider(model=c.model or DEFAULT_MODEL, api_key=api_key,
                              base_url=base_url, temperature=heat, **common)
    raise ConfigError(f"{settings.origin('compile.provider')}: compile.provider "
                      f"{c.provider!r} is unknown; use "
                      f"offline, anthropic, gemini or openai.")
