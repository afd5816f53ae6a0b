"""Settings → an embedding provider. Only entrypoints (CLI, server, core) call this.

Nothing is loaded or asked for here: the local model loads on its first embedding, and API
keys are read from the environment on the first request, so a dry run needs neither.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from ...config import Settings, check_embedding
from ...errors import ConfigError
from ...local_models import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, local_dimension, routed_languages
from .base import EmbeddingProvider, model_version_of
from .hashing import HashingEmbedder

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}


def _key_source(settings: Settings, provider: str) -> Callable[[], str]:
    env = settings.embedding.api_key_env or DEFAULT_KEY_ENV[provider]
    return lambda: settings.secret(env, f"embedding.provider {provider}")


def create_embedding_provider(settings: Settings) -> EmbeddingProvider:
    """The provider named by ``embedding.provider`` (the local model when nothing is set)."""
    cfg = settings.embedding
    check_embedding(settings)
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


def _local_model(settings: Settings) -> tuple[str, str, str, bool]:
    check_embedding(settings)      # loaded settings passed it; settings made another way too
    return LOCAL_MODELS[settings.embedding.model or DEFAULT_LOCAL_MODEL]


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
    return RoutedEmbeddings(default, {lang: made[entry[2]] for lang, entry in routes.items()},
                            every_page=settings.embedding.cross_lingual_vectors)


def _load_local(entry: tuple[str, str, str, bool], state_dir: Path) -> EmbeddingProvider:
    module, name, _, fp32 = entry
    provider_class = getattr(importlib.import_module(f".{module}", __package__), name)
    # The slower fp32-product variant keeps vectors stored under its older model_version.
    return provider_class(int8_activations=not fp32, state_dir=state_dir)


def _language_models(settings: Settings) -> dict[str, tuple[str, str, str, bool]]:
    """``embedding.languages`` (checked by config.py; not set: the default routing,
    local_models.routed_languages): language → LOCAL_MODELS entry."""
    check_embedding(settings)
    cfg = settings.embedding
    return {str(lang): LOCAL_MODELS[str(model)]
            for lang, model in routed_languages(cfg.provider, cfg.model, cfg.languages).items()}


def planned_model_version(settings: Settings) -> str | None:
    """The model_version the configured provider will use, without a call; None if unknown.

    Unknown only for a remote model whose width is neither configured nor well known.
    """
    cfg = settings.embedding
    if cfg.provider == "local":
        if _language_models(settings):
            return local_provider(settings).model_version      # nothing loads
        name = _local_model(settings)[2]
        return model_version_of("local", name, local_dimension(cfg.model or DEFAULT_LOCAL_MODEL))
    if cfg.provider == "hashing":
        return HashingEmbedder(cfg.dimension or 256).model_version
    remote = importlib.import_module(f".{cfg.provider}", __package__)
    model = cfg.model or remote.DEFAULT_MODEL
    dimension = cfg.dimension or remote.KNOWN_DIMENSIONS.get(model, 0)
    return model_version_of(cfg.provider, model, dimension) if dimension else None
