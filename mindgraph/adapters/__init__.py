"""Data-source adapters: fetch documents from a source into raw/ (`mindgraph pull`)."""

from .base import DataSourceAdapter, RawDocument, safe_relative_path
from .filesystem import FilesystemAdapter
from .loader import BUILTIN_ADAPTERS, ConfiguredAdapter, adapter_class, load_adapter
from .pull import PulledFile, PullReport, pull

__all__ = ["BUILTIN_ADAPTERS", "ConfiguredAdapter", "DataSourceAdapter", "FilesystemAdapter",
           "PullReport", "PulledFile", "RawDocument", "adapter_class", "load_adapter", "pull",
           "safe_relative_path"]
