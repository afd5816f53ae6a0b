"""`mindgraph embed --dry-run` writes nothing under the state folder: the page cache, the
chunk memo and the store's lock were written before, so a dry run on a read-only state folder
ended in a traceback (EROFS on the page cache's temp file). The read-only folder is a real
read-only bind mount, made in a user namespace (`unshare -rm`; skipped where there is none)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hashing_workspace import hashing_workspace

from mindgraph.cli import cli


def state_files(workspace: Path) -> dict[str, bytes]:
    """Every file under the state folder, by path, with its bytes."""
    state = workspace / ".mindgraph"
    return {str(p.relative_to(state)): p.read_bytes() for p in sorted(state.rglob("*"))
            if p.is_file()}


@pytest.fixture
def embedded_then_changed(tmp_path):
    """A workspace embedded once, then given a page the store does not hold yet."""
    workspace = hashing_workspace(tmp_path, 3)
    assert CliRunner().invoke(cli, ["embed", "-C", str(workspace)]).exit_code == 0
    (workspace / "wiki" / "extra.md").write_text("# Extra\n\nA page added since.\n")
    return workspace


def test_a_dry_run_leaves_every_state_file_as_it_was(embedded_then_changed):
    before = state_files(embedded_then_changed)
    result = CliRunner().invoke(cli, ["embed", "--dry-run", "-C", str(embedded_then_changed)])
    assert result.exit_code == 0, result.output
    assert "Would embed 1 of 7 chunks" in result.output
    assert state_files(embedded_then_changed) == before


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs user namespaces (unshare -rm)")
@pytest.mark.parametrize("first_run", [True, False], ids=["nothing cached", "cached"])
def test_a_dry_run_on_a_read_only_state_folder_plans_without_a_traceback(
        embedded_then_changed, first_run):
    workspace = embedded_then_changed
    state = workspace / ".mindgraph"
    if first_run:       # only what ingest left: no page cache, no memo, no vectors yet
        for name in ("pages.pickle", "vectors"):
            shutil.rmtree(state / name) if (state / name).is_dir() else \
                (state / name).unlink(missing_ok=True)
        for memo in state.glob("chunks-*.json"):
            memo.unlink()
    script = (f'mount --bind "{state}" "{state}" && mount -o remount,bind,ro "{state}" && '
              f'exec "{sys.executable}" -m mindgraph embed --dry-run -C "{workspace}"')
    run = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    expected = "Would embed 7 of 7" if first_run else "Would embed 1 of 7"
    assert expected in run.stdout
    assert "Dry run: nothing was embedded or written." in run.stdout


def test_a_dry_run_keeps_no_digest_of_the_model_files_it_checked(tmp_path):
    # the default model's tokenizer is checked against its pin to plan the chunks, and its
    # digest was kept in .mindgraph/file-digests.json; in a process of its own, as a user
    # runs it (this one may have hashed the file already, and keeps nothing then)
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Airships.md").write_text("# Airships\n\nAirships carry trunks.\n")
    (tmp_path / "mindgraph.yml").write_text("")
    run = subprocess.run([sys.executable, "-m", "mindgraph", "embed", "--dry-run", "-C",
                          str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Would embed 1 of 1 chunks" in run.stdout
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["Airships.md", "mindgraph.yml",
                                                           "wiki"]
