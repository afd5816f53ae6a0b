"""mindgraph: compile markdown notes into a linked wiki and a queryable knowledge graph."""

from .config import Settings, load_settings
from .errors import ConfigError, MindgraphError, NotFoundError, PageError
from .version import __version__

__all__ = ["ConfigError", "MindgraphError", "NotFoundError", "PageError", "Settings",
           "load_settings", "__version__"]
