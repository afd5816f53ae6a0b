"""A link, embed or file reference to something the caller cannot see reads exactly as one
to something that does not exist — over REST, with each identity's token — so an agent
learns nothing of other scopes and tenants from links, /check, /lint, /stats or the graph.

alice (acme) writes links to a page of her own tenant she cannot see (bob's), to another
tenant's page, and to nothing; carol (globex) embeds a file of acme and one that exists
nowhere. Each pair must come back in the same words, and the owner sees the wiki as written.
"""

from __future__ import annotations

import pytest
from documents_support import compiled_tenants
from fastapi.testclient import TestClient

from mindgraph.core import Mindgraph
from mindgraph.documents.records import document_id
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
TOKENS = {name: f"{name}-token-" + "x" * 32 for name in ("alice", "bob", "carol", "owner")}
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
serve: {token_env: TOKEN_OWNER}
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: TOKEN_ALICE}
    - {name: bob, tenant: acme, agent: bob, teams: [ops], token_env: TOKEN_BOB}
    - {name: carol, tenant: globex, agent: carol, teams: [deals], token_env: TOKEN_CAROL}
"""
ALICE = "acme/personal/alice/Alice Note.md"
CAROL = "globex/personal/carol/Carol Note.md"
REFS = "acme/personal/alice/Alice Refs.md"
NOTES = {
    REFS: "---\nreferences: [raw/globex/shared/Globex Merger.md, raw/acme/personal/bob/"
          "Bob Diary.md, raw/acme/shared/Nowhere Zz.md, raw/acme/shared/Handbook.md]\n---\n"
          "# Alice Refs\n\nWhat she read.\n",
    ALICE: "# Alice Note\n\nSee [[Globex Merger]].\n\nSee [[Bob Diary]].\n\n"
           "See [[Nonexistent Zzz]].\n\nSee [[Handbook]].\n\n"
           "![[deal-terms.png]]\n\n![[bob-photo.png]]\n\n![[nonexist-zz.png]]\n\n"
           "![[alice-map.png]]\n",
    "acme/personal/bob/Bob Diary.md": "# Bob Diary\n\nBob's own diary.\n",
    "acme/shared/Handbook.md": "# Handbook\n\nThe acme handbook.\n",
    "globex/shared/Globex Merger.md": "# Globex Merger\n\nThe merger plan.\n",
    CAROL: "# Carol Note\n\nThe router: ![[wifi.txt]]\n\nThe other: ![[nonexist-zz.txt]]\n",
}
FILES = {"acme/shared/wifi.txt": b"ssid acme\n", "globex/shared/deal-terms.png": b"\x89PNG",
         "acme/personal/bob/bob-photo.png": b"\x89PNG",
         "acme/personal/alice/alice-map.png": b"\x89PNG"}
UNSEEN = {"alice": ("Globex Merger", "Bob Diary"), "carol": ("wifi.txt",)}


@pytest.fixture(scope="module")
def rest(tmp_path_factory):
    """A client per identity (the owner too) on the compiled workspace."""
    base = tmp_path_factory.mktemp("unseen")
    with pytest.MonkeyPatch.context() as patch:
        compiled_tenants(base, patch, CONFIG, NOTES, TOKENS)
        for path, data in FILES.items():
            (base / "raw" / path).write_bytes(data)
        outside = tmp_path_factory.mktemp("outside")
        (base / "wiki" / "globex" / "shared" / "linked").symlink_to(outside)
        mg = Mindgraph.open(base)
        app = create_app(mg, TOKENS["owner"])
        yield {name: TestClient(app, base_url=LOCAL,
                                headers={"Authorization": f"Bearer {token}"})
               for name, token in TOKENS.items()}
        mg.close()


def same_words(text: str, name: str) -> str:
    return text.replace(name, "<name>")


def outbound(client, path):
    answer = client.get(f"/documents/{document_id(path)}/links")
    assert answer.status_code == 200, answer.text
    return {o["target"]: o for o in answer.json()["outbound"]}


def test_document_links_to_unseen_pages_read_as_missing_ones(rest):
    links = outbound(rest["alice"], ALICE)
    assert links["Handbook"]["status"] == "resolved"
    missing = links["Nonexistent Zzz"]
    assert missing["status"] == "missing" and missing["page"] is None and missing["id"] is None
    for name in UNSEEN["alice"]:
        assert name in links, f"{name}: the link disappeared, unlike a link to no page"
        shown = {k: v for k, v in links[name].items() if k not in ("target", "line", "context")}
        assert shown == {k: v for k, v in missing.items()
                         if k not in ("target", "line", "context")}, name
    # many at once: the same
    batch = rest["alice"].post("/links/batch", json={"ids": [document_id(ALICE)]}).json()
    statuses = {o["target"]: o["status"]
                for o in batch["documents"][document_id(ALICE)]["outbound"]}
    assert statuses["Globex Merger"] == statuses["Bob Diary"] == "missing"
    # the owner sees the wiki as written, the cross-tenant link included
    owner = outbound(rest["owner"], ALICE)
    assert owner["Globex Merger"]["page"] == "globex/shared/Globex Merger.md"
    assert owner["Bob Diary"]["page"] == "acme/personal/bob/Bob Diary.md"
    assert owner["Nonexistent Zzz"]["status"] == "missing"


def test_page_links_and_stats_count_unseen_as_missing(rest):
    page = rest["alice"].get("/page", params={"name": "Alice Note"}).json()
    status = {o["target"]: (o["status"], o["page"], o["candidates"]) for o in page["outgoing"]}
    assert status["Globex Merger"] == status["Bob Diary"] == status["Nonexistent Zzz"] == \
        ("missing", None, [])
    assert "globex" not in str(page["backlinks"]) and "bob" not in str(page["backlinks"])
    # /stats counts them as /page resolves them: as missing links
    counted: dict[str, int] = {}
    for doc in rest["alice"].get("/documents").json()["documents"]:
        for link in rest["alice"].get("/page", params={"name": doc["page"]}).json()["outgoing"]:
            counted[link["status"]] = counted.get(link["status"], 0) + 1
    stats = rest["alice"].get("/stats").json()
    assert stats.get("stats", stats)["links"]["by_resolution"] == counted
    assert counted["missing"] >= 3


def test_check_reports_an_unseen_page_as_a_broken_link_in_the_same_words(rest):
    findings = rest["alice"].get("/check").json()["findings"]
    broken = {f["message"].split("]]")[0].lstrip("[").lstrip("!["): f for f in findings
              if f["kind"] == "broken-link"}
    assert set(broken) >= {"Globex Merger", "Bob Diary", "Nonexistent Zzz"}, broken
    words = {same_words(broken[n]["message"], n) for n in
             ("Globex Merger", "Bob Diary", "Nonexistent Zzz")}
    assert len(words) == 1, words
    assert all(broken[n]["severity"] == "error" for n in broken)
    owner = rest["owner"].get("/check").json()["findings"]
    assert [f["message"] for f in owner if f["kind"] == "broken-link"
            and f["path"] == ALICE] == [
        "[[Nonexistent Zzz]] points to no page. Create the page or fix the link's spelling."]


def _missing_attachments(client) -> dict[str, dict]:
    findings = client.get("/check").json()["findings"]
    return {f["message"].split("]]")[0].removeprefix("![["): f for f in findings
            if f["kind"] == "missing-attachment"}


def test_an_embedded_file_of_another_scope_is_a_missing_attachment(rest):
    carol = _missing_attachments(rest["carol"])
    assert set(carol) == {"wifi.txt", "nonexist-zz.txt"}, carol
    assert same_words(carol["wifi.txt"]["message"], "wifi.txt") == \
        same_words(carol["nonexist-zz.txt"]["message"], "nonexist-zz.txt")
    alice = _missing_attachments(rest["alice"])
    # another tenant's file and a file of a scope she does not see, as one that is nowhere;
    # her own is found
    assert set(alice) == {"deal-terms.png", "bob-photo.png", "nonexist-zz.png"}, alice
    owner = _missing_attachments(rest["owner"])
    assert set(owner) == {"nonexist-zz.txt", "nonexist-zz.png"}, owner


def test_lint_says_an_unseen_source_file_does_not_exist_like_a_missing_one(rest):
    findings = rest["alice"].get("/lint", params={"rule": "dangling-reference"}).json()
    named = {f["message"] for f in findings["findings"] if f["page"] == REFS}
    assert named == {f"'references' names raw/{p}, which does not exist." for p in
                     ("globex/shared/Globex Merger.md", "acme/personal/bob/Bob Diary.md",
                      "acme/shared/Nowhere Zz.md")}, named
    owner = rest["owner"].get("/lint", params={"rule": "dangling-reference"}).json()
    assert {f["message"] for f in owner["findings"] if f["page"] == REFS} == {
        "'references' names raw/acme/shared/Nowhere Zz.md, which does not exist."}


def test_a_symlinked_folder_is_reported_only_to_those_who_see_its_folder(rest):
    def reported(who):
        return [f["path"] for f in rest[who].get("/check").json()["findings"]
                if f["kind"] == "symlinked-folder"]
    assert reported("owner") == reported("carol") == ["globex/shared/linked"]
    assert reported("alice") == reported("bob") == []
