"""The local embedding model writes nothing outside the workspace: onnxruntime, imported by
`mindgraph embed` and hybrid search, wrote a device id and a telemetry database into
~/.cache/Microsoft/DeveloperTools/ until mindgraph set ORT_DISABLE_TELEMETRY."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_embed_and_hybrid_search_write_nothing_in_home(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "notes"
    home.mkdir()
    (workspace / "raw").mkdir(parents=True)
    (workspace / "raw" / "Kyoto.md").write_text("# Kyoto\n\nTemples and gardens.\n", "utf-8")
    (workspace / "mindgraph.yml").write_text("embedding: {provider: local}\n", "utf-8")
    env = {k: v for k, v in os.environ.items()
           if k not in ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    cli = [sys.executable, "-c", "from mindgraph.cli import main; main()", "-C", str(workspace)]
    for args in (["ingest"], ["embed"], ["search", "--hybrid", "temples"]):
        done = subprocess.run([*cli, *args], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []
    assert (workspace / ".mindgraph").is_dir() and Path(workspace / "wiki" / "Kyoto.md").is_file()
