"""The offline embedding models mindgraph ships, by the names ``embedding.model`` and
``embedding.languages`` accept, and the languages a page or query is told apart by.

Data only, low in the import order: config.py checks mindgraph.yml against it when the file is
loaded (so every command reports a bad name, not only `mindgraph embed`), and the provider
factory (providers/embedding/factory.py) builds the model it names.
"""

from __future__ import annotations

# embedding.model for the local provider: name → (module of providers/embedding, class, model
# name in model_version, fp32 products). "" is the default.
LOCAL_MODELS: dict[str, tuple[str, str, str, bool]] = {
    "all-MiniLM-L6-v2": ("local", "LocalMiniLMProvider", "all-MiniLM-L6-v2-w8a8", False),
    "all-MiniLM-L6-v2-w8a8": ("local", "LocalMiniLMProvider", "all-MiniLM-L6-v2-w8a8", False),
    "all-MiniLM-L6-v2-int8": ("local", "LocalMiniLMProvider", "all-MiniLM-L6-v2-int8", True),
    "multilingual-e5-small": ("e5", "LocalE5Provider", "multilingual-e5-small-w8a8", False),
    "multilingual-e5-small-w8a8": ("e5", "LocalE5Provider", "multilingual-e5-small-w8a8",
                                   False),
    "use-multilingual-v3": ("use", "LocalUSEProvider", "use-multilingual-v3", False),
}
DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_DIMENSION = 384
# Width of each local model's vectors when it is not LOCAL_DIMENSION (by model_version name).
LOCAL_DIMENSIONS = {"use-multilingual-v3": 512}
LANGUAGES = ("en", "ja", "zh", "ko", "other")     # page/language.py's names
# embedding.languages when mindgraph.yml does not set it and the default model embeds: Japanese
# and Chinese sections and questions go to Universal Sentence Encoder multilingual (MiniLM
# knows English only). English questions over Japanese-only / Chinese-only pages reach hybrid
# MRR@10 0.758 / 0.772 (MiniLM alone 0.691 / 0.745), dev the same, held-out 0.918 -> 0.926
# (README, "Offline models"). `languages: {}` embeds every language with MiniLM.
DEFAULT_LANGUAGES = {"ja": "use-multilingual-v3", "zh": "use-multilingual-v3"}


def routed_languages(provider: str, model: str, languages: dict | None) -> dict:
    """language → local model for the embedding settings ``provider``, ``model`` and
    ``languages`` (None: not set): the ones set, else ``DEFAULT_LANGUAGES`` for the default
    model of the local provider (another model named is that model for every language)."""
    if languages is not None:
        return dict(languages)
    if provider != "local" or LOCAL_MODELS.get(model or DEFAULT_LOCAL_MODEL) != \
            LOCAL_MODELS[DEFAULT_LOCAL_MODEL]:
        return {}
    return dict(DEFAULT_LANGUAGES)


def local_dimension(model: str) -> int:
    """The width of the vectors of the local model named ``model`` (a LOCAL_MODELS key)."""
    return LOCAL_DIMENSIONS.get(LOCAL_MODELS[model][2], LOCAL_DIMENSION)


__all__ = ["DEFAULT_LANGUAGES", "DEFAULT_LOCAL_MODEL", "LANGUAGES", "LOCAL_DIMENSION",
           "LOCAL_DIMENSIONS", "LOCAL_MODELS", "local_dimension", "routed_languages"]
