"""The LLM's part in search, when ``compile.provider`` names one: query expansion (pass 2).

Search cannot wait like a compile can: the provider used here is the compile provider rebuilt
with the search's time budget (``retrieval.expansion_timeout_s`` per HTTP call, no retries),
and it is built on first use, so a search that never expands never loads an SDK.
``retrieval.expansion_llm: false`` keeps search offline even with an LLM configured.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..config import Settings
from .expand import QueryExpander
from .llm_cache import AnswerCache

if TYPE_CHECKING:
    from ..providers.llm.base import LLMProvider

CACHE_FILE = "llm-search-cache.sqlite"


def search_llm_factory(settings: Settings, timeout_s: float
                       ) -> "Callable[[], LLMProvider | None] | None":
    """A function that builds the search's LLM provider, or None when none is configured."""
    if settings.compile.provider == "offline" or not settings.retrieval.expansion_llm:
        return None
    budget = replace(settings, compile=replace(
        settings.compile, timeout_s=min(settings.compile.timeout_s, timeout_s), max_retries=0))

    def build() -> "LLMProvider | None":
        from ..providers.llm.factory import make_llm_provider   # loads httpx or an SDK

        return make_llm_provider(budget)

    return build


def query_expander(settings: Settings) -> QueryExpander:
    """The splitter, plus the configured LLM with a cache in the state folder."""
    factory = search_llm_factory(settings, settings.retrieval.expansion_timeout_s)
    if factory is None:
        return QueryExpander()
    return QueryExpander(factory, cache=AnswerCache(Path(settings.state_dir) / CACHE_FILE))
