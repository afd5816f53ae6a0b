"""Settings → an embedding provider. Only entrypoints (CLI, server, core) call this.

Nothing is loaded or asked for here: the local model loads on its first embedding, and API
keys are read from the environment on the first request, so a dry run needs neither.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from ...config import Settings
from ...errors import ConfigError
from .base import EmbeddingProvider, model_version_of
from .hashing import HashingEmbedder

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}


def _key_source(settings: Settings, provider: str) -> Callable[[], str]:
    env = settings.embedding.api_key_env or DEFAULT_KEY_ENV[provider]
    return lambda: settings.secret(env, f"embedding.provider {provider}")


def create_embedding_provider(settings: Settings) -> EmbeddingProvider:
    """The provider named by ``embedding.provider`` (the local model when nothing is set)."""
    cfg = settings.embedding
    if cfg.languages and cfg.provider != "local":
        raise ConfigError(f"{settings.source}: embedding.languages routes languages to local "
                          f"models; it needs embedding.provider local (or remove it).")
    if cfg.provider == "local":
        return local_provider(settings)
    if cfg.provider == "hashing":
        return HashingEmbedder(cfg.dimension or 256)
    if cfg.provider == "openai":
        from .openai import DEFAULT_BASE_URL, DEFAULT_MODEL, OpenAIEmbeddings

        # A custom base_url without a key env is a local server (Ollama, vLLM): no key needed.
        needs_key = bool(cfg.api_key_env) or not cfg.base_url
        return OpenAIEmbeddings(model=cfg.model or DEFAULT_MODEL,
                                api_key=_key_source(settings, "openai") if needs_key else None,
                                base_url=cfg.base_url or DEFAULT_BASE_URL,
                                dimension=cfg.dimension, batch_size=cfg.batch_size,
                                max_retries=cfg.max_retries, timeout_s=cfg.timeout_s)
    if cfg.provider == "gemini":
        from .gemini import DEFAULT_MODEL as GEMINI_MODEL
        from .gemini import GeminiEmbeddings

        return GeminiEmbeddings(model=cfg.model or GEMINI_MODEL,
                                api_key=_key_source(settings, "gemini"),
                                dimension=cfg.dimension, batch_size=cfg.batch_size,
                                max_retries=cfg.max_retries, timeout_s=cfg.timeout_s,
                                base_url=cfg.base_url)
    raise AssertionError(f"unhandled embedding provider {cfg.provider!r}")  # config validates


# embedding.model for the local provider: name → (module, class, model name in model_version,
# fp32 products). "" is the default.
LOCAL_MODELS = {
    "all-MiniLM-L6-v2": ("local", "LocalMiniLMProvider", "all-MiniLM-L6-v2-w8a8", False),
    "all-MiniLM-L6-v2-w8a8": ("local", "LocalMiniLMProvider", "all-MiniLM-L6-v2-w8a8", False),
    "all-MiniLM-L6-v2-int8": ("local", "LocalMiniLMProvider", "all-MiniLM-L6-v2-int8", True),
    "multilingual-e5-small": ("e5", "LocalE5Provider", "multilingual-e5-small-w8a8", False),
    "multilingual-e5-small-w8a8": ("e5", "LocalE5Provider", "multilingual-e5-small-w8a8",
                                   False),
    "use-multilingual-v3": ("use", "LocalUSEProvider", "use-multilingual-v3", False),
}
# Width of each local model's vectors when it is not LOCAL_DIMENSION.
LOCAL_DIMENSIONS = {"use-multilingual-v3": 512}
DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"
LANGUAGES = ("en", "ja", "zh", "ko", "other")     # page/language.py's names
LOCAL_DIMENSION = 384


def _local_model(settings: Settings) -> tuple[str, str, str, bool]:
    cfg = settings.embedding
    entry = LOCAL_MODELS.get(cfg.model or DEFAULT_LOCAL_MODEL)
    if entry is None or cfg.dimension not in (0, LOCAL_DIMENSIONS.get(entry[2], LOCAL_DIMENSION)):
        raise ConfigError(f"{settings.source}: embedding.provider local runs "
                          f"multilingual-e5-small or all-MiniLM-L6-v2 (all-MiniLM-L6-v2-int8: "
                          f"slower, fp32 products), {LOCAL_DIMENSION} dimensions, or "
                          f"use-multilingual-v3 (512, measured, not a default); set "
                          f"embedding.model to one of them (or remove it for the default, "
                          f"{DEFAULT_LOCAL_MODEL}) and remove embedding.dimension, or pick "
                          f"another provider.")
    return entry


def local_provider(settings: Settings) -> EmbeddingProvider:
    """The offline model named by ``embedding.model``, or one per language when
    ``embedding.languages`` names models (routed.py); nothing is loaded yet. Their rewritten
    graphs are kept under the state folder (graph_cache.py)."""
    default = _load_local(_local_model(settings), settings.state_dir)
    routes = _language_models(settings)
    if not routes:
        return default
    from .routed import RoutedEmbeddings

    made = {_local_model(settings)[2]: default}
    for entry in routes.values():
        made.setdefault(entry[2], _load_local(entry, settings.state_dir))
    return RoutedEmbeddings(default, {lang: made[entry[2]] for lang, entry in routes.items()})


def _load_local(entry: tuple[str, str, str, bool], state_dir: Path) -> EmbeddingProvider:
    module, name, _, fp32 = entry
    provider_class = getattr(importlib.import_module(f".{module}", __package__), name)
    # The slower fp32-product variant keeps vectors stored under its older model_version.
    return provider_class(int8_activations=not fp32, state_dir=state_dir)


def _language_models(settings: Settings) -> dict[str, tuple[str, str, str, bool]]:
    """``embedding.languages`` checked: language → LOCAL_MODELS entry."""
    routes = settings.embedding.languages or {}
    if not isinstance(routes, dict):
        raise ConfigError(f"{settings.source}: embedding.languages maps a language to a "
                          f"local model, e.g. {{ja: multilingual-e5-small}}.")
    out = {}
    for lang, model in routes.items():
        entry = LOCAL_MODELS.get(str(model))
        if entry is None or str(lang) not in LANGUAGES:
            raise ConfigError(f"{settings.source}: embedding.languages.{lang}: {model!r} "
                              f"cannot be used; map one of {', '.join(LANGUAGES)} to one of "
                              f"{', '.join(LOCAL_MODELS)} (or remove embedding.languages).")
        out[str(lang)] = entry
    return out


def planned_model_version(settings: Settings) -> str | None:
    """The model_version the configured provider will use, without a call; None if unknown.

    Unknown only for a remote model whose width is neither configured nor well known.
    """
    cfg = settings.embedding
    if cfg.provider == "local":
        if _language_models(settings):
            return local_provider(settings).model_version      # nothing loads
        name = _local_model(settings)[2]
        return model_version_of("local", name, LOCAL_DIMENSIONS.get(name, LOCAL_DIMENSION))
    if cfg.provider == "hashing":
        return HashingEmbedder(cfg.dimension or 256).model_version
    remote = importlib.import_module(f".{cfg.provider}", __package__)
    model = cfg.model or remote.DEFAULT_MODEL
    dimension = cfg.dimension or remote.KNOWN_DIMENSIONS.get(model, 0)
    return model_version_of(cfg.provider, model, dimension) if dimension else None
