"""make_llm_provider: compile settings → a backend, with clear errors for what is missing."""

from __future__ import annotations

import pytest

from mindgraph.config import settings_from_dict
from mindgraph.errors import ConfigError
from mindgraph.providers.llm import (AnthropicProvider, GeminiProvider, LLMProvider,
                                     OpenAIProvider, make_llm_provider)

KEY_VAR = "MINDGRAPH_TEST_LLM_KEY"


def settings(**compile_keys):
    return settings_from_dict({"compile": compile_keys}, source="mindgraph.yml")


@pytest.fixture
def key(monkeypatch) -> str:
    monkeypatch.setenv(KEY_VAR, "sk-from-env")
    return KEY_VAR


@pytest.fixture
def no_key(monkeypatch) -> str:
    monkeypatch.delenv(KEY_VAR, raising=False)
    return KEY_VAR


def test_offline_builds_nothing():
    assert make_llm_provider(settings()) is None
    assert make_llm_provider(settings(provider="offline", model="ignored")) is None


@pytest.mark.parametrize("name", ["anthropic", "gemini", "openai"])
def test_missing_key_variable_names_the_variable(name, no_key):
    with pytest.raises(ConfigError) as info:
        make_llm_provider(settings(provider=name, api_key_env=no_key))
    message = str(info.value)
    assert KEY_VAR in message and f"compile.provider={name}" in message
    assert f"export {KEY_VAR}=" in message


def test_anthropic_default_and_chosen_model(key):
    default = make_llm_provider(settings(provider="anthropic", api_key_env=key))
    assert isinstance(default, AnthropicProvider) and isinstance(default, LLMProvider)
    assert default.identity == "anthropic:claude-sonnet-5-5"
    chosen = make_llm_provider(settings(provider="anthropic", api_key_env=key,
                                        model="claude-haiku-5-5"))
    assert chosen.identity == "anthropic:claude-haiku-5-5"


def test_gemini(key):
    provider = make_llm_provider(settings(provider="gemini", api_key_env=key,
                                          model="gemini-3.1-flash-lite"))
    assert isinstance(provider, GeminiProvider)
    assert provider.identity == "gemini:gemini-3.1-flash-lite"


def test_openai_official_needs_a_key_variable():
    with pytest.raises(ConfigError, match="api_key_env: OPENAI_API_KEY"):
        make_llm_provider(settings(provider="openai"))


def test_openai_official(key):
    provider = make_llm_provider(settings(provider="openai", api_key_env=key))
    assert isinstance(provider, OpenAIProvider)
    assert provider.identity == "openai:gpt-4.1-mini"


def test_openai_compatible_server_without_key(no_key):
    provider = make_llm_provider(settings(provider="openai", model="llama3.1:8b",
                                          base_url="http://localhost:11434/v1"))
    assert provider.identity == "openai:llama3.1:8b@localhost:11434"


def test_openai_compatible_server_needs_a_model():
    with pytest.raises(ConfigError, match="compile.model is required"):
        make_llm_provider(settings(provider="openai", base_url="http://gpu-box:8000/v1"))


def test_openai_compatible_server_with_a_named_but_unset_key(no_key):
    with pytest.raises(ConfigError, match=KEY_VAR):
        make_llm_provider(settings(provider="openai", model="m", api_key_env=no_key,
                                   base_url="http://gpu-box:8000/v1"))


def test_base_url_without_scheme_is_rejected():
    with pytest.raises(ConfigError, match="must start with http"):
        make_llm_provider(settings(provider="openai", model="m", base_url="localhost:11434/v1"))
