"""Shared by the tests of bench/ scripts: load one as a module, and the keyword-only search."""

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from mindgraph.retrieval.hybrid import SearchOptions

BENCH = Path(__file__).resolve().parents[2] / "bench"
KEYWORD_ONLY = SearchOptions(use_vector=False, graph_boost=False, expansion=False)


def load_script(name: str) -> ModuleType:
    """bench/<name>.py, imported as the module ``name``."""
    if str(BENCH) not in sys.path:      # as when the script runs: its folder comes first
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def usage_error(script: Path, workspace: Path, *args: str) -> str:
    """What ``script`` says on stderr when run with ``args``, after checking that it stopped
    with a usage error (exit 2) and no traceback."""
    run = subprocess.run([sys.executable, str(script), "-C", str(workspace), *args],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    return run.stderr
