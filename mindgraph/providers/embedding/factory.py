"""Settings → an embedding provider. Only entrypoints (CLI, server, core) call this.

Nothing is loaded or asked for here: the local model loads on its first embedding, and API
keys are read from the environment on the first request, so a dry run needs neither.
"""

from __future__ import annotations

import importlib
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
    """The provider named by ``embedding.provider`` (local MiniLM when nothing is set)."""
    cfg = settings.embedding
    if cfg.provider == "local":
        from .local import DIMENSION, FP32_ACTIVATIONS_MODEL_NAME, MODEL_NAME, LocalMiniLMProvider

        if cfg.model not in ("", MODEL_NAME, FP32_ACTIVATIONS_MODEL_NAME, "all-MiniLM-L6-v2") \
                or cfg.dimension not in (0, DIMENSION):
            raise ConfigError(f"{settings.source}: embedding.provider local runs {MODEL_NAME} "
                              f"(or {FP32_ACTIVATIONS_MODEL_NAME}, slower, fp32 products; "
                              f"{DIMENSION} dimensions) only; remove embedding.model and "
                              f"embedding.dimension, or pick another provider.")
        # The slower fp32-product variant keeps vectors stored under its older model_version.
        return LocalMiniLMProvider(int8_activations=cfg.model != FP32_ACTIVATIONS_MODEL_NAME)
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


def planned_model_version(settings: Settings) -> str | None:
    """The model_version the configured provider will use, without a call; None if unknown.

    Unknown only for a remote model whose width is neither configured nor well known.
    """
    cfg = settings.embedding
    if cfg.provider == "local":
        from .local import DIMENSION, FP32_ACTIVATIONS_MODEL_NAME, MODEL_NAME

        name = FP32_ACTIVATIONS_MODEL_NAME if cfg.model == FP32_ACTIVATIONS_MODEL_NAME \
            else MODEL_NAME
        return model_version_of("local", name, DIMENSION)
    if cfg.provider == "hashing":
        return HashingEmbedder(cfg.dimension or 256).model_version
    remote = importlib.import_module(f".{cfg.provider}", __package__)
    model = cfg.model or remote.DEFAULT_MODEL
    dimension = cfg.dimension or remote.KNOWN_DIMENSIONS.get(model, 0)
    return model_version_of(cfg.provider, model, dimension) if dimension else None
