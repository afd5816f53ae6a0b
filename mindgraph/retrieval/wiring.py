"""What a hybrid retriever takes from the whole settings, beyond ``retrieval``: the LLM's part
in search when ``compile.provider`` names one (query expansion in pass 2 and, with
``retrieval.rerank: llm``, reranking of the first results) and its files in the state folder.

Search cannot wait like a compile can: the provider used here is the compile provider rebuilt
with the search's time budget (``retrieval.expansion_timeout_s`` per HTTP call, no retries),
and it is built on first use, so a search that never expands never loads an SDK.
``retrieval.expansion_llm: false`` keeps pass 2 to the offline splitter.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..adapters.loader import adapter_class, load_adapter
from ..adapters.mirror import load_manifest, manifest_path
from ..config import Settings
from ..errors import AdapterError
from .expand import QueryExpander
from .llm_cache import AnswerCache
from .native import NativeSearch
from .rerank import LLMReranker

if TYPE_CHECKING:
    from ..providers.llm.base import LLMProvider

CACHE_FILE = "llm-search-cache.sqlite"
_ADAPTERS: dict[str, Any] = {}      # native search's adapters, per entry (native_search)
CALIBRATION_FILE = "calibration.json"


def search_llm_factory(settings: Settings, timeout_s: float
                       ) -> "Callable[[], LLMProvider | None] | None":
    """A function that builds the search's LLM provider, or None when none is configured."""
    if settings.compile.provider == "offline":
        return None
    budget = replace(settings, compile=replace(
        settings.compile, timeout_s=min(settings.compile.timeout_s, timeout_s), max_retries=0))

    def build() -> "LLMProvider | None":
        from ..providers.llm.factory import make_llm_provider   # loads httpx or an SDK

        return make_llm_provider(budget)

    return build


def search_helpers(settings: Settings, cache_file: Path | None = None) -> dict[str, Any]:
    """HybridRetriever's ``expander`` (the splitter, plus the configured LLM), ``reranker``
    (None unless ``retrieval.rerank`` is "llm" and an LLM is configured),
    ``calibration_file`` and ``native`` (the adapters' own search, None without one).

    ``cache_file`` keeps the LLM's answers (the workspace's CACHE_FILE by default); an
    identity's view passes its own, as its query vectors are cached apart: from one file for
    every view, a question another tenant had asked came back an LLM call faster, telling the
    asker that someone had asked exactly that."""
    r = settings.retrieval
    cache = AnswerCache(cache_file or Path(settings.state_dir) / CACHE_FILE)
    expand = search_llm_factory(settings, r.expansion_timeout_s) if r.expansion_llm else None
    rerank = search_llm_factory(settings, r.rerank_timeout_s) if r.rerank == "llm" else None
    return {"expander": QueryExpander(expand, cache=cache) if expand else QueryExpander(),
            "reranker": LLMReranker(rerank, cache=cache) if rerank else None,
            "calibration_file": Path(settings.state_dir) / CALIBRATION_FILE,
            "native": native_search(settings)}


def native_search(settings: Settings) -> NativeSearch | None:
    """The configured adapters that offer ``search_by_query``, as one retriever (an adapter
    that cannot be loaded is left out: `pull` reports why). Each adapter is built once per
    process and entry: a retriever is rebuilt at every wiki change, its app's connection pool
    and in-memory corpus need not be."""
    apps = []
    for entry in settings.adapters:
        key = repr((entry, str(settings.base_dir), str(settings.state_dir),
                    settings.limits.max_pull_bytes))
        try:
            adapter = _ADAPTERS.get(key)
            if adapter is None and callable(getattr(adapter_class(entry.type),
                                                    "search_by_query", None)):
                adapter = _ADAPTERS[key] = load_adapter(
                    entry, settings.base_dir, settings.state_dir,
                    listing_bytes=settings.limits.max_pull_bytes).adapter
        except AdapterError:
            continue
        if adapter is not None:
            apps.append((entry.name, adapter))
    r = settings.retrieval

    def filed(app: str) -> set[str]:     # the raw notes `pull` wrote for the app
        return set(load_manifest(manifest_path(settings.state_dir, app)))

    return NativeSearch(apps, r.native_weight, r.native_timeout_s, filed) if apps else None
