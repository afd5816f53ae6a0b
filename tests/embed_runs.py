"""`mindgraph embed` as real processes for the embed-lock tests (file lock and pgvector's
advisory lock): a slowed embed that shows a progress line after every batch, reading a
process's stderr up to a line, and waiting for its end (importable from any test folder:
tests/ is on sys.path through its conftest)."""

from __future__ import annotations

import os
import subprocess
import sys

# `mindgraph embed --json -C DIR` with the hashing model slowed by PAUSE seconds a batch
SLOW = """
import sys, time
from mindgraph.cli import progress
from mindgraph.providers.embedding import hashing
progress.EVERY_S = 0.0
PAUSE = float(sys.argv[2])
embed = hashing.HashingEmbedder.embed_documents
def slow(self, texts, *args):
    time.sleep(PAUSE)
    return embed(self, texts, *args)
hashing.HashingEmbedder.embed_documents = slow
from mindgraph.cli import main
sys.argv = ["mindgraph", "embed", "--json", "-C", sys.argv[1]]
main()
"""


def slow_embed_command(workspace, pause: float = 0.3) -> list[str]:
    """The command line of a slowed `mindgraph embed --json -C workspace`."""
    return [sys.executable, "-c", SLOW, str(workspace), str(pause)]


def start_against(pg_dsn: str, command: list[str]) -> subprocess.Popen:
    """``command`` as a process with its output in pipes, storing into PostgreSQL at
    ``pg_dsn`` (MINDGRAPH_PG_DSN), unbuffered so its progress lines come as they happen."""
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1",
                                 "MINDGRAPH_PG_DSN": pg_dsn})


def wait_for_line(process, start_of_line):
    """Read ``process``'s stderr up to a line starting so (the lines read before it)."""
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith(start_of_line):
            return seen
    raise AssertionError(f"no line starting {start_of_line!r}: {''.join(seen)}")


def finish(process):
    """(exit code, stdout, stderr) once ``process`` has ended."""
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err
