"""mindgraph: compile markdown notes into a linked wiki and a queryable knowledge graph."""

import os

# onnxruntime (the local embedding model) writes a device id and a telemetry database under
# ~/.cache/Microsoft/DeveloperTools/ as soon as it is imported unless this is set before:
# mindgraph writes nothing outside the workspace.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from .config import Settings, load_settings
from .errors import ConfigError, MindgraphError, NotFoundError, PageError
from .version import __version__

__all__ = ["ConfigError", "MindgraphError", "NotFoundError", "PageError", "Settings",
           "load_settings", "__version__"]
