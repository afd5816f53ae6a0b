"""Two processes sharing an app's corpus cache file: one sees the other's write even when the
file keeps the mtime and size it had (the cache compares the file's whole stamp)."""

import os

from mindgraph.adapters.base import Item, Project
from mindgraph.adapters.cache import CorpusCache


def test_a_rewrite_with_the_old_mtime_and_size_is_seen(tmp_path):
    path = tmp_path / "apps" / "tasks.json"
    clock = lambda: 1000.0      # noqa: E731 - every corpus stays fresh
    first, other = CorpusCache(path, 3600, clock), CorpusCache(path, 3600, clock)
    first.get(lambda: ([Project("p1", "Inbox")], [Item("aaaaaaaa1", "Pack the trunks")]))
    before = path.stat()
    assert [i.title for i in other.cached().items] == ["Pack the trunks"]
    first.put(Item("aaaaaaaa1", "Fold the trunks"))         # the same length: the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert [i.title for i in other.cached().items] == ["Fold the trunks"]
