"""A fresh `mindgraph search` loads only what a keyword search needs (issue 20: start-up)."""

import json
import subprocess
import sys

# run the real CLI in a new process, then list the heavy packages it imported
PROBE = """
import sys
from mindgraph.cli import cli
try:
    cli(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("\\n" + __import__("json").dumps({"code": code, "loaded": sorted(
    m for m in ("httpx", "networkx", "onnxruntime", "fugashi", "rjieba") if m in sys.modules)}))
"""


def test_keyword_search_imports_no_http_client_graph_library_or_model(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (tmp_path / "raw").mkdir()
    (wiki / "Sync.md").write_text("# Sync\n\nKeep a vault in sync on a Linux server.\n")
    (wiki / "Canvas.md").write_text("# Canvas\n\nAn infinite board; see [[Sync]].\n")
    done = subprocess.run([sys.executable, "-c", PROBE, "search", "linux server", "-C",
                           str(tmp_path), "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["code"] in (0, None) and "Sync.md" in done.stdout
    # httpx came with the OpenAI provider's module and networkx with the graph's, both
    # imported by modules a keyword search only passes through
    assert probe["loaded"] == [], probe
