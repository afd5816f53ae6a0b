"""A view's core: what one identity's search, links, graph, counts, timeline and check see,
how a view follows the wiki, and how the compiler keeps links inside what readers see."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.scopes import LOCAL

from scopes_support import NOTES, VISIBLE, embedded_core, leaks, set_tokens, write_workspace


@pytest.fixture
def mg(tmp_path, monkeypatch):
    """The two-tenant workspace, compiled and embedded (embedded store)."""
    core = embedded_core(tmp_path, monkeypatch)
    yield core
    core.close()


def as_(mg, name):
    return mg.as_identity(mg.scopes.identity(name))


def test_links_to_unseen_pages_read_as_missing_and_their_backlinks_are_left_out(mg):
    alice = as_(mg, "alice")
    links = alice.links("Alice Diary")
    assert sorted((o["target"], o["status"], o["page"]) for o in links["outgoing"]) == [
        ("Bob Notes", "missing", None), ("Handbook", "resolved", "acme/shared/Handbook.md"),
        ("Ops Runbook", "missing", None),
        ("Search Plan", "resolved", "acme/team/search/Search Plan.md")]
    owner = mg.links("acme/personal/alice/Alice Diary.md")
    assert {o["target"] for o in owner["outgoing"]} >= {"Ops Runbook", "Bob Notes"}
    handbook = {b["page"] for b in alice.links("Handbook")["backlinks"]}
    assert handbook == {"acme/personal/alice/Alice Diary.md", "acme/shared/Roadmap.md",
                        "acme/team/search/Search Plan.md"}
    assert {b["page"] for b in mg.links("acme/shared/Handbook.md")["backlinks"]} >= {
        "acme/personal/bob/Bob Notes.md", "acme/team/ops/Ops Runbook.md"}
    # a link into another tenant does not resolve: carol's [[Handbook]] is a broken link
    carol = as_(mg, "carol")
    handbook_link = [o for o in carol.links("Carol Notes")["outgoing"]
                     if o["target"] == "Handbook"]
    assert handbook_link[0]["status"] == "missing" and handbook_link[0]["page"] is None
    # as broken as a link to no page, in the same words
    broken = [f.message for f in alice.check().findings if f.kind == "broken-link"]
    assert broken == [f"[[{name}]] points to no page. Create the page or fix the link's "
                      f"spelling." for name in ("Ops Runbook", "Bob Notes")]


def test_graph_queries_see_only_the_view(mg):
    for name in ("alice", "bob", "carol", "erin"):
        view = as_(mg, name)
        members = {m for c in view.communities() for m in c.members}
        assert members <= VISIBLE[name]
        assert {h.path for h in view.hubs(50)} <= VISIBLE[name]
        assert set(view.orphans()) <= VISIBLE[name]
        for page in VISIBLE[name]:
            assert {n.path for n in view.related(page, 3)} <= VISIBLE[name]
    assert as_(mg, "erin").orphans() == ["globex/shared/Roadmap.md"]
    with pytest.raises(Exception, match="No page named 'Ops Runbook'"):
        as_(mg, "alice").path("Alice Diary", "Ops Runbook")


def test_scores_and_counts_are_those_of_the_view_alone(mg, tmp_path_factory):
    """Keyword scores of a view equal those of a workspace holding only its pages: nothing
    about other scopes (document counts, term frequencies) moves them."""
    alone = tmp_path_factory.mktemp("alice-alone")
    for path in VISIBLE["alice"]:
        target = alone / "wiki" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mg.settings.wiki_dir / path, target)
    reference = Mindgraph.open(alone)
    alice = as_(mg, "alice")
    for query in ("handbook", "pangolin roadmap", "search plan quokka", "narwhal"):
        assert [(r.path, round(r.score, 9)) for r in alice.search(query)] == \
            [(r.path, round(r.score, 9)) for r in reference.search(query)]
    stats = alice.stats()
    assert (stats["pages"], stats["raw"]["files"]) == (4, 4)
    assert stats["tags"] == reference.stats()["tags"]


def test_vector_search_is_restricted_to_the_view(mg):
    owner = mg.smart_search("narwhal service restart", 5)
    assert owner.results[0].page == "acme/team/ops/Ops Runbook.md"
    assert "vector" in owner.results[0].sources
    hits = mg.vector_store().query(mg.embedding_provider().embed_queries(["narwhal"])[0], 3,
                                   mg.embedding_provider().model_version)
    assert hits and any(h.page == "acme/team/ops/Ops Runbook.md" for h in hits)
    for name in ("alice", "dave", "carol"):
        answer = as_(mg, name).smart_search("narwhal service restart", 10)
        assert {r.page for r in answer.results} <= VISIBLE[name]
        assert leaks(name, [r.snippet for r in answer.results]) == []


def test_a_view_follows_the_wiki(mg):
    alice, carol = as_(mg, "alice"), as_(mg, "carol")
    assert alice.search("lemur") == []
    (mg.settings.wiki_dir / "acme/shared/Lemur.md").write_text(
        "# Lemur\n\nThe lemur rota, see [[Ops Runbook]] and [[Handbook]].\n")
    (mg.settings.wiki_dir / "globex/shared/Lemur Two.md").write_text("# Lemur Two\n\nlemur\n")
    assert [r.path for r in alice.search("lemur")] == ["acme/shared/Lemur.md"]
    assert [r.path for r in carol.search("lemur")] == ["globex/shared/Lemur Two.md"]
    assert [(o["target"], o["status"]) for o in alice.links("Lemur")["outgoing"]] == [
        ("Ops Runbook", "missing"), ("Handbook", "resolved")]
    assert [(o["target"], o["status"]) for o in as_(mg, "bob").links("Lemur")["outgoing"]] \
        == [("Ops Runbook", "resolved"), ("Handbook", "resolved")]
    (mg.settings.wiki_dir / "acme/shared/Lemur.md").unlink()
    assert alice.search("lemur") == []


def test_timeline_shows_only_notes_of_the_view(mg):
    for name, concept in (("alice", "Handbook"), ("bob", "Handbook"), ("carol", "merger")):
        entries = as_(mg, name).timeline(concept).to_dict()["entries"]
        assert entries and {e["path"] for e in entries} <= VISIBLE[name], name
    assert as_(mg, "carol").timeline("narwhal").to_dict()["entries"] == []
    assert mg.timeline("narwhal").to_dict()["entries"]


def test_compiled_links_stay_inside_what_every_reader_sees(mg):
    wiki = mg.settings.wiki_dir
    # a team page does not link another team's page, a shared page no team's page, and no
    # page another tenant's; a personal page links its agent's teams' pages
    assert "[[Search Plan" not in (wiki / "acme/team/ops/Ops Runbook.md").read_text()
    assert "[[Deal Memo" not in (wiki / "globex/shared/Roadmap.md").read_text()
    assert "[[Handbook" not in (wiki / "globex/team/deals/Deal Memo.md").read_text()
    assert "[[Handbook]]" in (wiki / "acme/personal/bob/Bob Notes.md").read_text()
    assert "[[Ops Runbook]]" in (wiki / "acme/personal/bob/Bob Notes.md").read_text()
    assert "[[Deal Memo]]" in (wiki / "globex/personal/carol/Carol Notes.md").read_text()


def test_check_reports_a_page_no_folder_rule_places(mg):
    report = mg.check()
    unplaced = [f for f in report.findings if f.kind == "no-scope"]
    assert [f.path for f in unplaced] == ["loose/Unplaced.md"]
    assert "raw note loose/Unplaced.md" in unplaced[0].message
    assert "only the local identity sees it" in unplaced[0].message
    assert all(f.kind != "no-scope" for f in as_(mg, "alice").check().findings)
    result = CliRunner().invoke(cli, ["check", "-C", str(mg.settings.base_dir)])
    assert "no-scope" in result.output and "loose/Unplaced.md" in result.output


def test_no_identities_is_the_workspace_as_before(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "loose.md").write_text("# Loose\n\nno scope at all\n")
    mg = Mindgraph.open(tmp_path)
    assert not mg.scopes.enabled
    assert mg.as_identity(LOCAL) is mg
    assert mg.as_identity(mg.scopes.local) is mg
    assert all(f.kind != "no-scope" for f in mg.check().findings)


def test_the_cli_acts_as_the_configured_local_identity(mg):
    root = mg.settings.base_dir
    config = root / "mindgraph.yml"
    config.write_text(config.read_text().replace("scopes:\n", "scopes:\n  local: bob\n"))
    run = CliRunner().invoke
    stats = json.loads(run(cli, ["stats", "-C", str(root), "--json"]).output)
    assert stats["pages"] == len(VISIBLE["bob"])
    found = run(cli, ["search", "-C", str(root), "zebrafish quokka narwhal"]).output
    assert "Ops Runbook" in found and leaks("bob", found, ["zebrafish quokka narwhal"]) == []
    assert "No page named 'Alice Diary'" in run(cli, ["get", "-C", str(root),
                                                      "Alice Diary"]).output
    hubs = run(cli, ["graph", "hubs", "-C", str(root), "--json"]).output
    assert leaks("bob", hubs) == [] and "Ops Runbook" in hubs
    usage = json.loads(run(cli, ["usage", "-C", str(root), "--json"]).output)
    assert usage["queries"] >= 1


def test_usage_lines_name_the_identity_and_a_view_reads_only_its_own(mg):
    alice, bob = as_(mg, "alice"), as_(mg, "bob")
    alice.usage_log.record("rest", "zebrafish", results=["acme/personal/alice/Alice Diary.md"],
                           result_count=1)
    bob.usage_log.record("rest", "narwhal", result_count=1)
    assert [line["query"] for line in alice.usage_log.lines()] == ["zebrafish"]
    assert [line["identity"] for line in bob.usage_log.lines()] == ["bob"]
    assert {line["query"] for line in mg.usage_log.lines()} >= {"zebrafish", "narwhal"}


def test_every_note_is_accounted_for():
    assert set(NOTES) == VISIBLE["local"]


def test_mcp_without_http_acts_as_the_configured_local_identity(mg):
    """stdio and in-process MCP sessions carry no token: they are ``scopes.local``."""
    import anyio
    from mcp import Client

    from mindgraph.config import load_settings
    from mindgraph.serve.mcp import create_mcp_server

    root = mg.settings.base_dir
    config = root / "mindgraph.yml"
    config.write_text(config.read_text().replace("scopes:\n", "scopes:\n  local: bob\n"))
    server = create_mcp_server(Mindgraph(load_settings(root)))

    async def script():
        async with Client(server) as client:
            return (await client.call_tool("get_page", {"page": "Alice Diary"}),
                    await client.call_tool("search", {"query": "narwhal zebrafish"}))

    missing, found = anyio.run(script)
    assert missing.is_error and "No page named 'Alice Diary'" in missing.content[0].text
    text = found.content[0].text
    assert "Ops Runbook" in text and leaks("bob", text, ["narwhal zebrafish"]) == []


def test_a_view_hears_that_vectors_are_pending_but_not_how_many_or_where(tmp_path,
                                                                         monkeypatch):
    write_workspace(tmp_path)
    config = tmp_path / "mindgraph.yml"
    config.write_text(config.read_text() + "serve:\n  embed_changes_max_chunks: 0\n")
    set_tokens(monkeypatch)
    mg = Mindgraph.open(tmp_path)
    mg.ingest()
    mg.embed()
    mg.smart_search("warm up")
    (mg.settings.wiki_dir / "acme/team/ops/Secret Two.md").write_text("# Secret Two\n\nnarwhal\n")
    (mg.settings.wiki_dir / "acme/team/ops/Secret Three.md").write_text("# Three\n\nnarwhal\n")
    owner = " ".join(mg.smart_search("narwhal").degradation)
    assert "not embedded yet: 2" in owner
    alice = " ".join(as_(mg, "alice").smart_search("narwhal").degradation)
    assert "some changed pages are not embedded yet" in alice and "yet: 2" not in alice
    mg.close()


def test_a_query_another_tenant_asked_is_embedded_again_not_read_from_its_cache(mg):
    """The query-vector cache was shared by every view: a query carol had asked came back
    from the cache, faster (10.7 ms against 14.5 ms on the help vault), which told alice
    that someone asked exactly that. Each view now keeps its queries apart: over REST,
    carol's question is embedded once for her and once again for alice, and a view still
    answers its own repeated question from the cache."""
    from fastapi.testclient import TestClient

    from mindgraph.serve.rest import create_app
    from scopes_support import TOKENS

    app = create_app(mg)
    embedded: list[str] = []
    provider = mg.embedding_provider()
    original = provider.embed_queries

    def counted(queries):
        embedded.extend(queries)
        return original(queries)

    provider.embed_queries = counted
    clients = {name: TestClient(app, base_url="http://127.0.0.1:8765",
                                headers={"Authorization": f"Bearer {TOKENS[name]}"})
               for name in ("alice", "carol")}
    question = "when does the axolotl merger close"
    with clients["alice"], clients["carol"]:
        for name in ("carol", "alice", "alice", "carol"):
            answer = clients[name].get("/smart_search", params={"q": question})
            assert answer.status_code == 200, answer.text
    assert embedded.count(question) == 2       # once per tenant, then from each one's cache
