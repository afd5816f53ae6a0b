"""A page rewritten at the same size with its mtime set back is not served stale: the cache's
stamp holds the change time and the inode too (through the CLI, cache state file included)."""

import os

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page import cache as cache_module


def _get(workspace, page):
    result = CliRunner().invoke(cli, ["get", "-C", str(workspace), page],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _rewrite_keeping_times(path, text):
    """Write ``text`` (the same size as before) and set atime and mtime back, as `touch -r`, an
    editor that keeps times or a sync tool does."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_same_size_rewrite_with_its_mtime_restored_is_seen(tmp_path, monkeypatch):
    # No "racy" re-read to hide behind: only the stamp decides (the rule re-reads a file
    # changed within 2 s of a scan, which would cover a test that runs this fast).
    monkeypatch.setattr(cache_module, "RACY_NS", -10**18)
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    page = tmp_path / "wiki" / "Airships.md"
    page.write_text(_body("zeppelin"))
    old = 1_600_000_000 * 10**9
    os.utime(page, ns=(old, old))
    assert "zeppelin" in _get(tmp_path, "Airships")
    _rewrite_keeping_times(page, _body("balloons"))
    assert page.stat().st_mtime_ns == old
    shown = _get(tmp_path, "Airships")
    assert "balloons" in shown and "zeppelin" not in shown
    # replaced by another file (a new inode) of the same size and times: seen too
    other = tmp_path / "Airships.new"
    other.write_text(_body("gondolas"))
    os.utime(other, ns=(old, old))
    os.replace(other, page)
    shown = _get(tmp_path, "Airships")
    assert "gondolas" in shown and "balloons" not in shown


def _body(word):
    return f"# Airships\n\nThe {word} carries trunks.\n"     # the same size for 8 letters
