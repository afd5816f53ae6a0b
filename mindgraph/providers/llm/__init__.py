"""LLM providers behind one interface: Anthropic, Gemini, OpenAI(-compatible) and a fake.

Backend SDKs are imported when a backend is constructed, so importing this package is cheap.
"""

from .anthropic import AnthropicProvider
from .base import LLMProvider, call_with_retries
from .factory import make_llm_provider
from .fake import FakeLLMProvider
from .gemini import GeminiProvider
from .openai import OpenAIProvider

__all__ = [
    "AnthropicProvider",
    "FakeLLMProvider",
    "GeminiProvider",
    "LLMProvider",
    "OpenAIProvider",
    "call_with_retries",
    "make_llm_provider",
]
