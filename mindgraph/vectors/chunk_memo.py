"""What each page's chunks were the last time they were planned, so a no-op `embed` need not
chunk (and tokenize) every page again to find that nothing changed.

One JSON file per model in the state folder: page → [content hash of the page file, its
unindexed characters, chunk id → chunk hash]. A page is skipped only when its file hash is the
same and the store holds exactly those chunk hashes; anything else (a new page, a changed one,
chunks missing from the store, a file from another version of mindgraph, an unreadable file)
chunks the page as before. Losing the file costs one slower plan, never a wrong one. A file
written by other chunking or page-language code (``code_fingerprint``) is not read: a page
whose language is now read otherwise goes to another model, which the memo cannot know.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..fsutil import atomic_write_bytes, read_bytes, sha256_text
from ..page.model import Page

MEMO_VERSION = 1


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of the code that cuts pages into chunks and picks each page's model (its
    language): a memo planned by other code is planned again."""
    digest = hashlib.sha256()
    package = Path(__file__).parent.parent
    for path in (package / "vectors" / "chunking.py", package / "page" / "language.py"):
        digest.update(read_bytes(path))
    return digest.hexdigest()[:16]


class ChunkMemo:
    """The chunk ids and hashes of every page as last planned, for one model and chunker."""

    def __init__(self, path: Path | None, key: str,
                 entries: dict[str, list[Any]] | None = None):
        self.path = path
        self.key = key
        self.entries: dict[str, list[Any]] = entries or {}
        self.changed = False

    @classmethod
    def load(cls, state_dir: Path, model_version: str, max_tokens: int | str) -> "ChunkMemo":
        """The memo of ``model_version`` (empty when missing, unreadable or of another kind)."""
        key = f"{model_version}|{max_tokens}"
        path = Path(state_dir) / f"chunks-{sha256_text(key)[:16]}.json"
        try:
            data = json.loads(read_bytes(path).decode("utf-8"))
            if data.get("version") == MEMO_VERSION and data.get("key") == key \
                    and data.get("code") == code_fingerprint() \
                    and isinstance(data.get("pages"), dict):
                return cls(path, key, data["pages"])
        except (OSError, ValueError, AttributeError):
            pass
        return cls(path, key)

    def unchanged(self, page: Page, held: Mapping[str, str]) -> bool:
        """True when ``page`` is as last planned and the store holds exactly its chunks."""
        entry = self.entries.get(page.path)
        return bool(held) and entry is not None and entry[0] == page.content_hash \
            and entry[1] == page.unindexed_chars and entry[2] == held

    def record(self, page: Page, chunks: Sequence[Any]) -> None:
        """Remember the chunks ``page`` gave."""
        entry = [page.content_hash, page.unindexed_chars,
                 {c.chunk_id: c.content_hash for c in chunks}]
        if self.entries.get(page.path) != entry:
            self.entries[page.path] = entry
            self.changed = True

    def keep_only(self, paths: set[str]) -> None:
        """Forget pages that are gone."""
        for path in [p for p in self.entries if p not in paths]:
            del self.entries[path]
            self.changed = True

    def save(self) -> None:
        """Write the memo if it changed (atomically; a failure only costs speed)."""
        if not self.changed or self.path is None:
            return
        data = {"version": MEMO_VERSION, "key": self.key, "code": code_fingerprint(),
                "pages": self.entries}
        try:
            atomic_write_bytes(self.path, json.dumps(data, ensure_ascii=False,
                                                     separators=(",", ":")).encode("utf-8"))
            self.changed = False
        except OSError:
            pass
