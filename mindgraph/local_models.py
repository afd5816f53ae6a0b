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


def local_dimension(model: str) -> int:
    """The width of the vectors of the local model named ``model`` (a LOCAL_MODELS key)."""
    return LOCAL_DIMENSIONS.get(LOCAL_MODELS[model][2], LOCAL_DIMENSION)


__all__ = ["DEFAULT_LOCAL_MODEL", "LANGUAGES", "LOCAL_DIMENSION", "LOCAL_DIMENSIONS",
           "LOCAL_MODELS", "local_dimension"]
