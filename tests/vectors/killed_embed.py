"""What the killed-embed tests share: the real `mindgraph embed` in a child process, its model
made slow enough to be killed mid-run (a progress line after every batch), killed with SIGKILL
once it has reported enough chunks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

CHILD = """
import sys, time
from mindgraph.cli import progress
from mindgraph.providers.embedding import {module}
progress.EVERY_S = 0.0
embed = {module}.{model}.embed_documents
def slow(self, texts, *args):
    time.sleep({seconds})
    return embed(self, texts, *args)
{module}.{model}.embed_documents = slow
from mindgraph.cli import main
sys.argv = ["mindgraph", "embed", "-C", sys.argv[1]]
main()
"""


def embed_killed_after(workspace: Path, chunks: int, module: str, model: str,
                       seconds_a_batch: float, timeout: float = 120) -> int:
    """Run `mindgraph embed` on ``workspace`` with ``module.model``'s batches slowed by
    ``seconds_a_batch``, SIGKILL it once it reports ``chunks`` embedded; the count reported."""
    code = CHILD.format(module=module, model=model, seconds=seconds_a_batch)
    child = subprocess.Popen([sys.executable, "-c", code, str(workspace)],
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    reported = 0
    deadline = time.monotonic() + timeout
    try:
        for line in child.stderr:
            if line.startswith("Embedding: "):
                reported = int(line.split()[1])
                if reported >= chunks:
                    break
            assert time.monotonic() < deadline, "the child never reported progress"
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL, "the child ended before it was killed"
    assert reported >= chunks
    return reported
