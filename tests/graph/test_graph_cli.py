"""`mindgraph graph ...` in-process, on a workspace whose wiki is the small test vault."""

from __future__ import annotations

import json
import shutil

import networkx as nx
import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


def _run(workspace, *args, code=0):
    result = CliRunner().invoke(cli, ["graph", *args, "-C", str(workspace)])
    assert result.exit_code == code, result.output
    return result.output


def _json(workspace, *args):
    return json.loads(_run(workspace, *args, "--json"))


def test_graph_queries_as_json(small_vault):
    workspace = small_vault.parent
    data = _json(workspace, "neighbors", "Alpha", "--depth", "1")
    assert data["page"] == "Alpha.md"
    assert {"Beta.md", "Gamma.md", "Home.md", "a/Index.md"} <= {n["path"]
                                                               for n in data["neighbors"]}
    back = _json(workspace, "backlinks", "alpha.md")
    assert {b["source"] for b in back["backlinks"]} == {"Home.md", "a/Index.md"}
    path = _json(workspace, "path", "b/Index", "Index A")
    assert path["path"] == ["b/Index.md", "Beta.md", "Alpha.md", "a/Index.md"]
    hubs = _json(workspace, "hubs", "--limit", "1")
    assert hubs["hubs"][0]["path"] == "Alpha.md"
    assert _json(workspace, "orphans")["orphans"] == ["Lonely.md"]
    communities = _json(workspace, "communities", "--min-size", "1")
    assert sum(c["size"] for c in communities["communities"]) == 7
    broken = _json(workspace, "broken")
    assert {(b["source"], b["status"]) for b in broken["broken_links"]} == {
        ("Alpha.md", "missing"), ("Beta.md", "ambiguous")}
    assert (workspace / ".mindgraph" / "graph.pickle").is_file()


def test_text_output_and_export(small_vault, tmp_path):
    workspace = small_vault.parent
    assert _run(workspace, "path", "a/Index.md", "Gamma", "--directed").strip() == (
        "a/Index.md -> Alpha.md -> Gamma.md")
    assert "Home.md" in _run(workspace, "backlinks", "Alpha")
    exported = json.loads(_run(workspace, "export", "--format", "json"))
    assert {"nodes", "edges", "communities", "broken_links"} <= set(exported)
    target = tmp_path / "g.graphml"
    _run(workspace, "export", "--format", "graphml", "--output", str(target))
    assert nx.read_graphml(target).number_of_nodes() == 7


def test_hubs_text_says_what_its_numbers_count(small_vault):
    """`graph hubs` printed a bare number before each page: a header names it."""
    lines = _run(small_vault.parent, "hubs", "--limit", "2").splitlines()
    assert lines[0].split()[:2] == ["neighbours", "page"]
    first = lines[1].split()
    assert first[1] == "Alpha.md" and int(first[0]) > 0
    assert len(lines) == 3


def _edges_between_nodes(exported: dict) -> bool:
    nodes = {n["id"] for n in exported["nodes"]}
    return all(e["source"] in nodes and e["target"] in nodes for e in exported["edges"])


def test_json_export_keeps_shared_tag_edge_endpoints(small_vault):
    exported = json.loads(_run(small_vault.parent, "export", "--format", "json"))
    assert _edges_between_nodes(exported)
    tagged = {(e["source"], e["target"]): e for e in exported["edges"]
              if e["relation"] == "shared_tag"}
    assert tagged[("Alpha.md", "Beta.md")]["label"] == "tags: #topic"


@pytest.mark.slow
def test_json_export_of_the_real_vault_has_only_node_endpoints(corpora, tmp_path):
    shutil.copytree(corpora / "obsidian-help", tmp_path / "wiki")
    exported = json.loads(_run(tmp_path, "export", "--format", "json"))
    assert len(exported["nodes"]) == 883
    assert sum(e["relation"] == "shared_tag" for e in exported["edges"]) > 1000
    assert _edges_between_nodes(exported)


def test_unknown_or_ambiguous_page_exits_1_with_a_hint(small_vault):
    workspace = small_vault.parent
    out = _run(workspace, "neighbors", "Alpah", code=1)
    assert "No page named 'Alpah'" in out and "Did you mean" in out and "Alpha.md" in out
    out = _run(workspace, "backlinks", "Index", code=1)
    assert "a/Index.md" in out and "b/Index.md" in out


def test_graph_follows_edits_of_the_wiki(small_vault):
    workspace = small_vault.parent
    assert _json(workspace, "orphans")["orphans"] == ["Lonely.md"]
    (small_vault / "Lonely.md").write_text("# Lonely\n\nNow linking [[Home]].\n")
    assert _json(workspace, "orphans")["orphans"] == []
    back = _json(workspace, "backlinks", "Home")
    assert "Lonely.md" in {b["source"] for b in back["backlinks"]}


def test_missing_wiki_folder_is_a_clear_error(tmp_path):
    assert "not a mindgraph workspace" in _run(tmp_path, "hubs", code=2)
    (tmp_path / "mindgraph.yml").write_text("graph:\n  seed: 1\n")
    out = _run(tmp_path, "hubs", code=1)
    assert "does not exist" in out and "mindgraph ingest" in out


def test_communities_write_the_graph_once_and_reuse_it(small_vault, monkeypatch):
    """A first `graph communities` saved the built graph, then saved it again with its
    communities (seconds each at 100,000 notes); it saves once, and a second run reads both."""
    from mindgraph.graph.build import KnowledgeGraph

    workspace = small_vault.parent
    saves = []
    real_save = KnowledgeGraph.save
    monkeypatch.setattr(KnowledgeGraph, "save",
                        lambda self, path: (saves.append(path), real_save(self, path)))
    first = _json(workspace, "communities", "--min-size", "1")
    assert len(saves) == 1
    again = _json(workspace, "communities", "--min-size", "1")
    assert again == first and len(saves) == 1      # communities came from the saved graph
    (small_vault / "Lonely.md").write_text("# Lonely\n\nNow linking [[Home]].\n")
    changed = _json(workspace, "communities", "--min-size", "1")
    assert len(saves) == 2 and changed != first
    assert _json(workspace, "orphans")["orphans"] == [] and len(saves) == 2


def test_a_graph_read_from_its_state_file_answers_like_a_fresh_one(small_vault):
    """graph.pickle keeps no page links (the page cache's are shared when it is loaded): a
    later command reading it exports the same graph as the one that built it, and after an
    edit on disk the loaded graph, brought up to date, equals one built from scratch."""
    workspace = small_vault.parent
    state = workspace / ".mindgraph" / "graph.pickle"
    built = json.loads(_run(workspace, "export", "--format", "json"))
    assert state.is_file()
    assert json.loads(_run(workspace, "export", "--format", "json")) == built
    (small_vault / "Beta.md").write_text("# Beta\n\n[[a/Index]] [[Lonely]] [[Home]] #shared\n")
    (small_vault / "Gamma.md").unlink()
    updated = json.loads(_run(workspace, "export", "--format", "json"))
    assert updated != built
    assert {"source": "Beta.md", "target": "Lonely.md"}.items() <= next(
        e for e in updated["edges"] if e["source"] == "Beta.md"
        and e["target"] == "Lonely.md").items()
    state.unlink()
    assert json.loads(_run(workspace, "export", "--format", "json")) == updated
    assert _json(workspace, "backlinks", "Lonely")["backlinks"][0]["source"] == "Beta.md"


def test_broken_names_the_raw_note_and_line_to_fix_as_check_does(tmp_path):
    """On a compiled workspace `graph broken` said "Garden.md:13", a line of the compiled
    page (frontmatter and a summary added), while `check` said where to fix it, the raw
    note's line 4. Both name the raw note now; the JSON keeps the page's line too."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Garden.md").write_text(
        "# Garden\n\nI grow tomatoes and basil for the summer kitchen.\n"
        "See [[Nowhere]] and [[Compost]].\n")
    (tmp_path / "raw" / "Compost.md").write_text("# Compost\n\nGreens and browns.\n")
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Hand.md").write_text("# Hand\n\nWritten here: [[Gone]].\n")
    assert CliRunner().invoke(cli, ["ingest", "-C", str(tmp_path)]).exit_code == 0
    [row] = [r for r in _json(tmp_path, "broken")["broken_links"] if r["source"] == "Garden.md"]
    assert (row["raw_path"], row["raw_line"]) == ("Garden.md", 4) and row["line"] > 4
    text = _run(tmp_path, "broken")
    assert "raw/Garden.md:4: missing [[Nowhere]]" in text
    assert "Hand.md:3: missing [[Gone]]" in text          # a page written in wiki/ itself
    check = CliRunner().invoke(cli, ["check", "-C", str(tmp_path)]).output
    assert "raw/Garden.md:4: [[Nowhere]]" in check


def test_path_draws_each_step_the_way_its_link_goes(tmp_path):
    """`graph path` is undirected by default, but printed every step as ' -> ': on the Help
    vault 'Home -> Style guide -> Canvas' though Home does not link to Style guide (Style
    guide links to Home). Each arrow now says which page links which, and --json says it."""
    pages = {
        "Start.md": "# Start\n\nSee [[Hub]] and [[Pair]].\n",
        "Hub.md": "# Hub\n\nNothing out.\n",
        "Side.md": "---\ntags: [garden]\n---\n# Side\n\nUp to [[Hub]].\n",
        "Far.md": "---\ntags: [garden]\n---\n# Far\n\nNo links.\n",
        "Pair.md": "# Pair\n\nBack to [[Start]].\n",
    }
    (tmp_path / "wiki").mkdir()
    for name, text in pages.items():
        (tmp_path / "wiki" / name).write_text(text)
    lines = _run(tmp_path, "path", "Start", "Far", "--via-tags").splitlines()
    assert lines[0] == "Start.md -> Hub.md <- Side.md ~ Far.md"
    assert lines[1].startswith("(-> links to the next page, <- is linked from it")
    assert _run(tmp_path, "path", "Start", "Pair").splitlines()[0] == "Start.md <> Pair.md"
    steps = _json(tmp_path, "path", "Start", "Far", "--via-tags")["steps"]
    assert [s["direction"] for s in steps] == ["out", "in", "tag"]
    assert steps[1] == {"from": "Hub.md", "to": "Side.md", "direction": "in"}
    # --directed follows links forwards only: every arrow is ->, and no legend is needed
    assert _run(tmp_path, "path", "Side", "Hub", "--directed").strip() == "Side.md -> Hub.md"
