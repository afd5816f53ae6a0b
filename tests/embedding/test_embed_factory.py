"""Settings → embedding provider, without loading models or reading keys early."""

from __future__ import annotations

import pytest

from mindgraph.config import settings_from_dict
from mindgraph.errors import ConfigError
from mindgraph.providers.embedding import (HashingEmbedder, create_embedding_provider,
                                           planned_model_version)
from mindgraph.providers.embedding.gemini import GeminiEmbeddings
from mindgraph.providers.embedding.local import LocalMiniLMProvider
from mindgraph.providers.embedding.openai import OpenAIEmbeddings

ROUTED = "local:routed(*=local:all-MiniLM-L6-v2-w8a8:384,ja+zh=local:use-multilingual-v3:512):896"


def settings(**embedding):
    return settings_from_dict({"embedding": embedding} if embedding else {})


def test_default_is_the_offline_model_created_lazily():
    from mindgraph.providers.embedding.routed import RoutedEmbeddings
    from mindgraph.providers.embedding.use import LocalUSEProvider

    # MiniLM, and USE for Japanese and Chinese (local_models.DEFAULT_LANGUAGES)
    provider = create_embedding_provider(settings())
    assert isinstance(provider, RoutedEmbeddings)
    minilm, use = provider.members
    assert isinstance(minilm, LocalMiniLMProvider) and isinstance(use, LocalUSEProvider)
    assert minilm._session is None and minilm._tokenizer is None and use._backend is None
    assert planned_model_version(settings()) == provider.model_version
    alone = create_embedding_provider(settings(languages={}))
    assert isinstance(alone, LocalMiniLMProvider) and alone._session is None


@pytest.mark.parametrize("embedding, cls, version", [
    ({"provider": "hashing", "dimension": 48}, HashingEmbedder, "hashing:v1:48"),
    ({"provider": "openai"}, OpenAIEmbeddings, "openai:text-embedding-3-small:1536"),
    ({"provider": "openai", "model": "text-embedding-3-large", "dimension": 256},
     OpenAIEmbeddings, "openai:text-embedding-3-large:256"),
    ({"provider": "gemini"}, GeminiEmbeddings, "gemini:gemini-embedding-001:3072"),
    ({"provider": "gemini", "dimension": 768}, GeminiEmbeddings,
     "gemini:gemini-embedding-001:768"),
])
def test_each_provider_and_its_model_version(embedding, cls, version, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    cfg = settings(**embedding)
    provider = create_embedding_provider(cfg)      # no key needed to build it
    assert isinstance(provider, cls)
    assert planned_model_version(cfg) == version == provider.model_version


def test_unknown_width_of_a_compatible_server_is_not_guessed():
    cfg = settings(provider="openai", model="my-model", base_url="http://localhost:8000/v1")
    assert planned_model_version(cfg) is None


def test_missing_key_is_reported_when_first_needed(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    provider = create_embedding_provider(settings(provider="gemini"))
    with pytest.raises(ConfigError, match="GEMINI_API_KEY is not set"):
        provider.embed_documents(["x"])


def test_local_model_cannot_be_swapped_by_name():
    with pytest.raises(ConfigError, match="'embedding.model' is 'bge-small', which "
                                          "embedding.provider local does not run"):
        settings(model="bge-small")
    # settings made another way than from a file: the factory checks them the same way
    import dataclasses

    made = dataclasses.replace(settings(), embedding=dataclasses.replace(
        settings().embedding, model="bge-small"))
    with pytest.raises(ConfigError, match="'embedding.model' is 'bge-small'"):
        create_embedding_provider(made)


def test_local_fp32_variant_keeps_its_own_model_version():
    from mindgraph.config import settings_from_dict
    from mindgraph.providers.embedding.factory import (create_embedding_provider,
                                                       planned_model_version)

    old = settings_from_dict({"embedding": {"model": "all-MiniLM-L6-v2-int8"}})
    new = settings_from_dict({})
    assert create_embedding_provider(old).model_version == "local:all-MiniLM-L6-v2-int8:384"
    assert planned_model_version(old) == "local:all-MiniLM-L6-v2-int8:384"
    minilm = settings_from_dict({"embedding": {"languages": {}}})
    assert create_embedding_provider(minilm).model_version == planned_model_version(minilm) \
        == "local:all-MiniLM-L6-v2-w8a8:384"
    assert create_embedding_provider(new).model_version == planned_model_version(new) == ROUTED


def test_the_default_routes_japanese_and_chinese_to_use_and_can_be_turned_off():
    """Not set, embedding.languages is {ja: use-multilingual-v3, zh: use-multilingual-v3}
    for the default model (README, Offline models); {} embeds every language with MiniLM; a
    model named, or another provider, is that model for every language (no error either)."""
    from mindgraph.config import settings_from_dict
    from mindgraph.local_models import DEFAULT_LANGUAGES
    from mindgraph.providers.embedding.factory import planned_model_version

    assert DEFAULT_LANGUAGES == {"ja": "use-multilingual-v3", "zh": "use-multilingual-v3"}
    assert settings_from_dict({}).embedding.languages is None
    for default in ({}, {"embedding": {"model": "all-MiniLM-L6-v2"}},
                    {"embedding": {"languages": None}}):
        assert planned_model_version(settings_from_dict(default)) == ROUTED
    assert planned_model_version(settings_from_dict({"embedding": {"languages": {}}})) \
        == "local:all-MiniLM-L6-v2-w8a8:384"
    assert planned_model_version(settings_from_dict(
        {"embedding": {"model": "multilingual-e5-small"}})) \
        == "local:multilingual-e5-small-w8a8:384"
    assert planned_model_version(settings_from_dict(
        {"embedding": {"provider": "hashing", "dimension": 64}})) == "hashing:v1:64"
    assert planned_model_version(settings_from_dict(
        {"embedding": {"languages": {"zh": "use-multilingual-v3"}}})).endswith(
        ",zh=local:use-multilingual-v3:512):896")
