"""`mindgraph embed` killed (SIGKILL) at any point resumes where it stopped: what it stored
is never embedded again, and the next run embeds only the rest. (What it embedded since its
last flush is lost: flushes come as often as cost a tenth of the run, vectors/sync.py.)"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hashing_workspace import hashing_workspace
from killed_embed import embed_killed_after

from mindgraph.cli import cli
from mindgraph.core import Mindgraph

@pytest.fixture
def workspace(tmp_path):
    """200 notes of two sections each, compiled, hashing embeddings."""
    return hashing_workspace(tmp_path, 200)


def stored(workspace) -> dict[str, dict[str, str]]:
    mg = Mindgraph.open(workspace)
    try:
        return mg.vector_store().hashes(mg.embedding_provider().model_version)
    finally:
        mg.close()


@pytest.mark.parametrize("kill_after", [64, 192])
def test_a_killed_embed_resumes_from_what_it_stored_and_redoes_none_of_it(
        workspace, kill_after):
    reported = embed_killed_after(workspace, kill_after, "hashing", "HashingEmbedder", 0.1)
    kept = sum(len(chunks) for chunks in stored(workspace).values())
    assert 64 <= kept <= reported + 64, "the first batch is flushed at once, and no more " \
                                        "than one batch can be stored but not yet reported"

    rerun = CliRunner().invoke(cli, ["embed", "--json", "-C", str(workspace)])
    assert rerun.exit_code == 0, rerun.output
    answer = json.loads(rerun.stdout)
    assert answer["unchanged"] == kept and answer["embedded"] == answer["chunks"] - kept
    assert answer["embedded"] > 0
    again = json.loads(CliRunner().invoke(cli, ["embed", "--json", "-C",
                                                str(workspace)]).stdout)
    assert again["embedded"] == 0 and again["unchanged"] == answer["chunks"]
