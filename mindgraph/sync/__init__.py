"""Live sync: watch raw/ and wiki/ and keep the wiki, the indexes and the vectors current.

``Watcher`` (watcher.py) is the service: native file-system events through watchfiles, or
periodic stat scans (``polling``), debounced into batches (pending.py); each batch that holds a
real change (by SHA-256, digests.py) becomes one run (run.py) through the ordinary crash-safe
``Mindgraph.ingest`` and the vector sync; ``SyncStatus`` (status.py) says what is pending or
running, for the CLI, REST and MCP.
"""

from .status import RunRecord, SyncStatus
from .watcher import Watcher

__all__ = ["RunRecord", "SyncStatus", "Watcher"]
