"""Temp files of atomic writes: their names fit NAME_MAX, and the ones a killed write left
are cleaned by the next run (only our own pattern, only older than the run)."""

from __future__ import annotations

import os
import time

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.fsutil import NAME_MAX, TEMP_NAME, atomic_write_bytes, temp_prefix


def _workspace(tmp_path):
    base = tmp_path / "kb"
    assert CliRunner().invoke(cli, ["init", str(base)]).exit_code == 0
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    return base


def test_a_255_byte_raw_name_compiles(tmp_path):
    base = _workspace(tmp_path)
    names = ["n" * 252 + ".md",                         # 255 bytes
             "é" * 125 + "x" + ".md",                   # 254 bytes, the cut falls inside é
             "ü" * 126 + ".md"]                          # 255 bytes of two-byte characters
    for name in names:
        assert len(name.encode()) in (254, 255)
        (base / "raw" / name).write_text(f"# Long\n\nA note with a {len(name)}-char name.\n")
    result = CliRunner().invoke(cli, ["ingest", "-C", str(base)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Ingested 3" in result.output and "failed 0" in result.output, result.output
    for name in names:
        assert (base / "wiki" / name).is_file()


def test_temp_names_fit_name_max_and_match_the_cleanup_pattern(tmp_path):
    for name in ["a.md", "n" * 255, "é" * 127 + "x"]:
        prefix = temp_prefix(name)
        temp = f"{prefix}abcd_123.tmp"
        assert len(temp.encode()) <= NAME_MAX and TEMP_NAME.match(temp)
        atomic_write_bytes(tmp_path / name, b"data")
        assert (tmp_path / name).read_bytes() == b"data"


def test_embed_cleans_the_temp_files_of_a_killed_store_write(tmp_path):
    base = _workspace(tmp_path)
    (base / "raw" / "A.md").write_text("# A\n\nSome text.\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0
    assert runner.invoke(cli, ["embed", "-C", str(base)]).exit_code == 0
    folder = base / ".mindgraph" / "vectors" / "default"
    [store_file] = folder.glob("*.npz")
    killed = folder / f".{store_file.name}.k1ll3d_0.tmp"     # what a SIGKILL mid-write leaves
    killed.write_bytes(b"half a store")
    hour_ago = time.time() - 3600
    os.utime(killed, (hour_ago, hour_ago))
    in_flight = folder / f".{store_file.name}.wr1t1ng0.tmp"  # another writer's, newer than us
    in_flight.write_bytes(b"being written")
    later = time.time() + 3600
    os.utime(in_flight, (later, later))
    not_ours = folder / "notes.tmp"
    not_ours.write_bytes(b"someone else's")
    os.utime(not_ours, (hour_ago, hour_ago))
    result = runner.invoke(cli, ["embed", "-C", str(base)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Embedded 0" in result.output                      # nothing to do, still cleaned
    assert not killed.exists()
    assert in_flight.exists() and not_ours.exists()
