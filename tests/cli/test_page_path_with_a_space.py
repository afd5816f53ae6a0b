"""A page whose path starts with a space (a raw note " idea.md", as file managers allow) is
a page like any other: found by that path and by its title, on the CLI and over REST."""

from __future__ import annotations

from click.testing import CliRunner
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_a_page_whose_path_starts_with_a_space_is_found_by_path_and_title(tmp_path):
    # the name was stripped before the path was tried: `get " idea.md"` and REST /page by
    # its title (resolved to the path, then looked up again) both said "No page named"
    (tmp_path / "raw").mkdir()
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (tmp_path / "raw" / " idea.md").write_text("# Spaced idea\n\nA thought worth keeping.\n")
    assert run("ingest", "-C", tmp_path).exit_code == 0
    got = run("get", " idea.md", "-C", tmp_path)
    assert got.exit_code == 0 and "A thought worth keeping." in got.output
    client = TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path))),
                        base_url="http://127.0.0.1")
    for name in (" idea.md", "Spaced idea"):
        answer = client.get("/page", params={"page": name})
        assert answer.status_code == 200, answer.text
        assert answer.json()["path"] == " idea.md"
