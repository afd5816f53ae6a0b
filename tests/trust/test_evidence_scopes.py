"""Evidence stays inside the page's scope: a note posted by one tenant that links to another
tenant's file, the state folder, the configuration or a file outside raw/ and wiki/ gets none
of them read by `mindgraph verify`, the owner's plan shows each refused citation, and the
page's readers (GET /page) never see their content. Citations inside the scope (the agent's
own files, its team's, its tenant's shared ones) are still evidence."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from tenant_workspace import owner, tenant_clients
TOKENS = {name: f"{name}-token-" + "x" * 32 for name in ("alice", "bob", "carol")}
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: TOKEN_ALICE}
    - {name: bob, tenant: acme, agent: bob, teams: [ops], token_env: TOKEN_BOB}
    - {name: carol, tenant: globex, agent: carol, token_env: TOKEN_CAROL}
"""
FILES = {
    "raw/acme/personal/alice/wifi.txt": "Alice wifi password is hunter2.\n",
    "raw/acme/team/search/ranking.txt": "Ranking uses quokka scores.\n",
    "raw/acme/shared/holidays.txt": "The office closes on Fridays.\n",
    "raw/globex/personal/carol/data.txt": "Carol budget is 40 units.\n",
    "raw/acme/personal/alice/Alice plan.md":
        "# Alice plan\n\nRanking uses quokka scores, see [ranking](../../team/search/ranking.txt)."
        "\n\nThe office closes on Fridays, see [holidays](../../shared/holidays.txt).\n",
    "raw/acme/shared/Handbook.md":
        "# Handbook\n\nWifi details live with Alice, see [wifi](../personal/alice/wifi.txt).\n",
    "code/secret.txt": "The launch code is 0000.\n",
}
# what carol's page links to from raw/globex/personal/carol/api-notes/
ESCAPES = {"alice": "../../../../acme/personal/alice/wifi.txt",
           "absent": "../../../../acme/personal/alice/no-such-file.txt",
           "state": "../../../../../.mindgraph/.ingest-state.json",
           "config": "../../../../../mindgraph.yml",
           "code": "../../../../../code/secret.txt",
           "link": "../link.txt"}
# nothing of these may reach carol
SECRETS = ("hunter2", "launch code is 0000", "token_env", "TOKEN_ALICE", "Alice plan.md",
           "quokka")


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A compiled two-tenant workspace, a REST client per identity, and the owner's CLI."""
    # a symlink in carol's own folder that leads into alice's
    (tmp_path / "raw/globex/personal/carol").mkdir(parents=True)
    os.symlink(tmp_path / "raw/acme/personal/alice/wifi.txt",
               tmp_path / "raw/globex/personal/carol/link.txt")
    return tmp_path, tenant_clients(tmp_path, monkeypatch, TOKENS, CONFIG, FILES)


def verify_and_apply(base: Path) -> str:
    """The owner's `verify --due`, then `--apply` of the printed plan: the plan's text."""
    shown = owner(base, "verify", "--due").output
    plan, digest = re.search(r"apply +mindgraph verify --apply (\S+) --approve (\w+)",
                             shown).groups()
    owner(base, "verify", "--apply", plan, "--approve", digest)
    return shown


def sources(page: dict) -> dict[str, dict]:
    return {s["ref"]: s for s in page["frontmatter"]["evidence"]["sources"]}


def test_a_note_citing_another_scope_the_state_and_the_config_gets_none_of_them_read(
        workspace):
    base, client = workspace
    links = " ".join(f"See [{k}]({v})." for k, v in ESCAPES.items())
    posted = client["carol"].post("/documents", json={
        "title": "Quarterly notes", "text": f"Wifi password. Launch code. {links}"})
    assert posted.status_code == 200, posted.text
    plan = verify_and_apply(base)
    page = client["carol"].get("/page", params={"page": "Quarterly notes"}).json()
    answer = json.dumps(page)
    assert [s for s in SECRETS if s.lower() in answer.lower()] == []
    found = sources(page)
    reasons = {k: found[f"file:{posixpath_norm(v)}"]["reason"] for k, v in ESCAPES.items()}
    assert all(not found[f"file:{posixpath_norm(v)}"]["available"] for v in ESCAPES.values())
    assert all(not found[f"file:{posixpath_norm(v)}"]["claims"] for v in ESCAPES.values())
    assert "is not readable from this page's scope (globex/personal/carol)" in reasons["alice"]
    # a file of another scope reads the same whether it exists or not
    assert reasons["alice"].split(" ", 1)[1] == reasons["absent"].split(" ", 1)[1]
    assert reasons["state"].endswith("lies in the state folder; not read")
    assert reasons["config"].endswith("is the workspace's configuration; not read")
    assert reasons["code"].endswith("lies outside raw/ and wiki/; not read")
    assert "(through a symlink)" in reasons["link"] and "scope" in reasons["link"]
    # no refused file counts: the page rests on its raw note alone, and says what it lacked
    verification = page["frontmatter"]["verification"]
    assert (verification["status"], page["frontmatter"]["evidence"]["status"]) == \
        ("reviewed", "partial")
    # the owner saw every refused citation, with both scopes, before approving
    page_name = "globex/personal/carol/api-notes/Quarterly-notes.md (globex/personal/carol)"
    assert "records  L2 reviewed 2, L2 verified 5" in plan     # carol's and the Handbook
    assert "refused      7 cited file(s) on 2 page(s), not read and not counted as " \
           "evidence:" in plan
    assert (f"raw/acme/personal/alice/wifi.txt (acme/personal/alice), cited by {page_name}: "
            f"not readable from this page's scope") in plan
    assert f".mindgraph/.ingest-state.json, cited by {page_name}: lies in the state folder" \
        in plan
    assert f"mindgraph.yml, cited by {page_name}: the workspace's configuration" in plan
    assert f"code/secret.txt, cited by {page_name}: lies outside raw/ and wiki/" in plan
    assert (f"raw/globex/personal/carol/link.txt → raw/acme/personal/alice/wifi.txt "
            f"(acme/personal/alice), cited by {page_name}: not readable from this page's "
            f"scope (through a symlink)\n") in plan
    assert "file refused 7" in plan


def posixpath_norm(path: str) -> str:
    import posixpath
    return posixpath.normpath(path)


def test_citations_inside_the_scope_are_still_evidence(workspace):
    base, client = workspace
    posted = client["carol"].post("/documents", json={
        "title": "Budget", "text": "[Carol budget is 40 units.](../data.txt)"})
    assert posted.status_code == 200, posted.text
    plan = verify_and_apply(base)
    assert "refused" in plan        # the shared Handbook's link into alice's folder, below
    budget = client["carol"].get("/page", params={"page": "Budget"}).json()
    data = sources(budget)["file:../data.txt"]
    assert data["available"] and data["claims"][0]["quote"] == "Carol budget is 40 units."
    assert budget["frontmatter"]["verification"]["status"] == "verified"
    # alice's personal page reads her team's file and her tenant's shared one
    mine = client["alice"].get("/page", params={"page": "Alice plan"}).json()
    own = sources(mine)
    assert own["file:../../team/search/ranking.txt"]["available"]
    assert own["file:../../shared/holidays.txt"]["available"]
    assert mine["frontmatter"]["verification"]["status"] == "verified"
    # a shared page is read by bob too: it may not quote alice's personal file
    handbook = client["bob"].get("/page", params={"page": "Handbook"}).json()
    wifi = sources(handbook)["file:../personal/alice/wifi.txt"]
    assert not wifi["available"] and "hunter2" not in json.dumps(handbook)
    assert "is not readable from this page's scope (acme/shared)" in wifi["reason"]
    assert ("raw/acme/personal/alice/wifi.txt (acme/personal/alice), cited by "
            "acme/shared/Handbook.md (acme/shared): not readable from this page's scope") in plan


def test_without_scopes_raw_files_are_evidence_and_the_state_and_config_are_not(tmp_path):
    (tmp_path / "raw" / "docs").mkdir(parents=True)
    (tmp_path / "raw" / "docs" / "limits.txt").write_text("Each vault holds up to 10 GB.\n")
    (tmp_path / "mindgraph.yml").write_text("paths:\n  raw: raw\n# Each vault holds 9 GB.\n")
    (tmp_path / "raw" / "Vault.md").write_text(
        "# Vault\n\nEach vault holds up to 10 GB, see [limits](docs/limits.txt), "
        "[config](../mindgraph.yml) and [state](../.mindgraph/.ingest-state.json).\n")
    owner(tmp_path, "ingest")
    planned = json.loads(owner(tmp_path, "verify", "--json").output)
    [verdict] = [v for v in planned["verdicts"] if v["path"] == "Vault.md"]
    found = {s["ref"]: s for s in verdict["evidence"]["sources"]}
    assert found["file:docs/limits.txt"]["available"]
    assert found["file:../mindgraph.yml"]["reason"].endswith("configuration; not read")
    assert found["file:../.mindgraph/.ingest-state.json"]["reason"].endswith(
        "lies in the state folder; not read")
    assert [(r["page"], r["target"], r["page_scope"]) for r in planned["refused"]] == [
        ("Vault.md", "mindgraph.yml", ""), ("Vault.md", ".mindgraph/.ingest-state.json", "")]
    assert "9 GB" not in json.dumps(planned)


def test_a_record_quoting_a_file_now_out_of_reach_is_due_again(workspace):
    base, client = workspace
    memo = base / "raw/globex/team/deals/memo.txt"
    memo.parent.mkdir(parents=True)
    memo.write_text("Deals close on Mondays.\n")
    with_deals = CONFIG.replace("agent: carol,", "agent: carol, teams: [deals],")
    (base / "mindgraph.yml").write_text(with_deals)
    posted = client["carol"].post("/documents", json={
        "title": "Deals", "text": "[Deals close on Mondays.](../../../team/deals/memo.txt)"})
    assert posted.status_code == 200, posted.text
    verify_and_apply(base)              # carol is in deals: her page may quote its memo
    ref = "file:../../../team/deals/memo.txt"
    before = sources(client["carol"].get("/page", params={"page": "Deals"}).json())[ref]
    assert before["available"] and before["claims"][0]["quote"] == "Deals close on Mondays."
    # carol leaves the team: her page's record still quotes the team's memo, though fresh
    (base / "mindgraph.yml").write_text(CONFIG)
    plan = verify_and_apply(base)
    assert "checked 1 page(s)" in plan
    assert ("raw/globex/team/deals/memo.txt (globex/team/deals), cited by "
            "globex/personal/carol/api-notes/Deals.md (globex/personal/carol): not readable "
            "from this page's scope") in plan
    after = client["carol"].get("/page", params={"page": "Deals"}).json()
    assert not sources(after)[ref]["available"] and not sources(after)[ref]["claims"]
    # and once rewritten it is not due again
    assert "checked 0 page(s)" in owner(base, "verify", "--due").output
