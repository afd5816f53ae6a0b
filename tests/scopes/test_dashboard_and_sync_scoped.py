"""The dashboard's data routes and the watcher's status answer each identity with its own
view only (they came after the two-tenant suite; the same rules hold for them)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

from scopes_support import NOTES, TOKENS, VISIBLE, leaks, set_tokens, write_workspace


@pytest.fixture
def client(tmp_path, monkeypatch):
    set_tokens(monkeypatch)
    root = write_workspace(tmp_path)
    assert CliRunner().invoke(cli, ["-C", str(root), "ingest"]).exit_code == 0
    return TestClient(create_app(Mindgraph.open(root)), base_url="http://127.0.0.1:8765")


def auth(name):
    return {"Authorization": f"Bearer {TOKENS[name]}"}


@pytest.mark.parametrize("name", ["alice", "carol", "erin"])
def test_the_dashboard_graph_holds_only_the_viewers_pages(client, name):
    answer = client.get("/dashboard/graph", headers=auth(name))
    assert answer.status_code == 200, answer.text
    assert {n["id"] for n in answer.json()["nodes"]} == VISIBLE[name]
    assert leaks(name, answer.json()) == []


def test_a_page_of_another_tenant_renders_as_one_that_does_not_exist(client):
    mine = client.get("/dashboard/page", params={"page": "Carol Notes"}, headers=auth("carol"))
    assert mine.status_code == 200 and "Carol" in mine.json()["title"]
    theirs = client.get("/dashboard/page", params={"page": "Carol Notes"}, headers=auth("alice"))
    nowhere = client.get("/dashboard/page", params={"page": "No Such Page"},
                         headers=auth("alice"))
    assert theirs.status_code == nowhere.status_code == 404
    assert theirs.json()["detail"].replace("Carol Notes", "X") == \
        nowhere.json()["detail"].replace("No Such Page", "X")
    assert client.get("/dashboard/graph").status_code == 401


def test_only_the_local_identity_reads_the_watchers_status(client):
    refused = client.get("/sync/status", headers=auth("alice"))
    assert refused.status_code == 403 and "local identity" in refused.json()["detail"]
    assert set(VISIBLE["local"]) == set(NOTES)


def test_an_agent_cannot_list_the_notes_folders_through_coverage(client, tmp_path):
    (tmp_path / "raw" / "globex" / "personal" / "carol" / "buyout.py").write_text("x = 1\n")
    for folder in ("raw", "raw/globex", "raw/globex/personal/carol", "wiki", ".mindgraph",
                   "raw/globex/team/nosuchteam"):
        answer = client.get("/coverage", params={"codebase": folder}, headers=auth("alice"))
        assert answer.status_code == 404, (folder, answer.text)
        assert "buyout" not in answer.text and str(tmp_path) not in answer.text
    code = client.get("/coverage", params={"codebase": "code"}, headers=auth("alice"))
    assert code.status_code == 200 and code.json()["total"] == 1


def test_the_dashboard_names_each_pages_scope_from_the_folder_mapping(client):
    nodes = client.get("/dashboard/graph", headers=auth("alice")).json()["nodes"]
    kinds = {n["id"]: n["scope"] for n in nodes}
    assert kinds["acme/personal/alice/Alice Diary.md"] == "personal"
    assert kinds["acme/team/search/Search Plan.md"] == "team"
    assert kinds["acme/shared/Handbook.md"] == "shared"


def test_an_attachment_of_another_tenant_is_not_served(client, tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
    (tmp_path / "raw" / "globex" / "personal" / "carol" / "plan.png").write_bytes(png)
    target = {"target": "globex/personal/carol/plan.png"}
    mine = client.get("/dashboard/attachment", params=target, headers=auth("carol"))
    assert mine.status_code == 200 and mine.content == png
    for how in (target, {"target": "plan.png"}):       # by path or by file name alone
        theirs = client.get("/dashboard/attachment", params=how, headers=auth("alice"))
        assert theirs.status_code == 404 and theirs.content != png


def test_a_symlink_in_a_tenants_folder_does_not_serve_another_tenants_file(client, tmp_path):
    """A symlink (to a file or a folder) inside raw/ that leads into another tenant's folder
    was served: the view was checked on the path as written, the real path only for being
    inside raw/. No symlink is followed now, as ingest follows none."""
    png = b"\x89PNG\r\n\x1a\n" + b"GLOBEXSECRET"
    carol = tmp_path / "raw" / "globex" / "personal" / "carol"
    (carol / "plan.png").write_bytes(png)
    acme = tmp_path / "raw" / "acme" / "shared"
    acme.mkdir(parents=True, exist_ok=True)
    os.symlink(carol / "plan.png", acme / "gl.png")
    os.symlink(carol, acme / "globexlink")
    for target in ("gl.png", "acme/shared/gl.png", "acme/shared/globexlink/plan.png"):
        theirs = client.get("/dashboard/attachment", params={"target": target},
                            headers=auth("alice"))
        assert theirs.status_code == 404 and b"GLOBEXSECRET" not in theirs.content, target
    (acme / "own.png").write_bytes(png[:8] + b"ACME")       # a plain file of her own is served
    mine = client.get("/dashboard/attachment", params={"target": "acme/shared/own.png"},
                      headers=auth("alice"))
    assert mine.status_code == 200 and mine.content.endswith(b"ACME")


def test_a_symlink_does_not_hide_a_real_file_of_the_same_name(client, tmp_path):
    """By file name alone the first path in path order was taken, symlinks included: the
    link won, was refused, and her real file of that name was a 404 (and the page drew the
    embed as a picture to fetch)."""
    png = b"\x89PNG\r\n\x1a\n" + b"GLOBEXSECRET"
    carol = tmp_path / "raw" / "globex" / "personal" / "carol"
    (carol / "plan.png").write_bytes(png)
    acme = tmp_path / "raw" / "acme"
    (acme / "shared").mkdir(parents=True, exist_ok=True)
    (acme / "team" / "search").mkdir(parents=True, exist_ok=True)
    os.symlink(carol / "plan.png", acme / "shared" / "gl.png")      # first in path order
    (acme / "team" / "search" / "gl.png").write_bytes(png[:8] + b"ACMEOWN")
    mine = client.get("/dashboard/attachment", params={"target": "gl.png"},
                      headers=auth("alice"))
    assert mine.status_code == 200 and mine.content.endswith(b"ACMEOWN")
