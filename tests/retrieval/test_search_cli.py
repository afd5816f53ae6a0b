"""`mindgraph search` in-process: JSON shape, explanations, and never a stale index."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli


def _workspace(tmp_path):
    wiki = tmp_path / "wiki"
    (wiki / "Plugins").mkdir(parents=True)
    (wiki / "Plugins" / "Note composer.md").write_text(
        "# Note composer\n\nMerge notes.\n\n## Extract note\n\nSplit a selection into a new "
        "note.\n")
    (wiki / "Search.md").write_text("# Search\n\nUse `task-todo:` to find open tasks.\n")
    return tmp_path


def _search(workspace, *args, code=0):
    result = CliRunner().invoke(cli, ["search", *args, "-C", str(workspace)])
    assert result.exit_code == code, result.output
    return result.output


def test_json_results_say_page_section_score_snippet_and_why(tmp_path):
    workspace = _workspace(tmp_path)
    data = json.loads(_search(workspace, "extract", "a", "selection", "--json"))
    assert data["retriever"] == "keyword" and data["count"] == 1
    top = data["results"][0]
    assert top["page"] == "Plugins/Note composer.md" and top["title"] == "Note composer"
    assert (top["section_id"], top["heading"]) == ("extract-note", "Extract note")
    assert top["score"] > 0 and top["scores"]["section_bm25"] > 0
    assert "**selection**" in top["snippet"]
    assert top["matched_terms"] == ["extract", "selection"]
    assert top["why"]["fields"]["heading"] == ["extract"]
    code = json.loads(_search(workspace, "`task-todo:`", "--json", "--limit", "1"))
    assert code["results"][0]["page"] == "Search.md"


def test_search_sees_edits_added_and_deleted_pages(tmp_path):
    workspace = _workspace(tmp_path)
    assert "No page matches" in _search(workspace, "quokka")
    page = workspace / "wiki" / "Search.md"
    page.write_text("# Search\n\nA quokka lives here now.\n")
    out = _search(workspace, "quokka")
    assert "Search.md" in out and "**quokka**" in out
    (workspace / "wiki" / "New.md").write_text("# New\n\nzeppelin\n")
    assert "New.md" in _search(workspace, "zeppelin")
    page.unlink()
    data = json.loads(_search(workspace, "quokka", "--json"))
    assert data["results"] == [] and data["index"]["updated"]["removed"] == ["Search.md"]
    assert (workspace / ".mindgraph" / "keyword.pickle").is_file()


def test_query_of_stop_words_and_missing_wiki(tmp_path):
    workspace = _workspace(tmp_path)
    data = json.loads(_search(workspace, "how", "do", "I", "--json"))
    assert data["results"] == [] and "no searchable terms" in data["note"]
    out = _search(tmp_path / "nowhere", "x", code=2)
    assert "does not exist (no such folder)" in out and "mindgraph init" in out
    (tmp_path / "nowhere").mkdir()
    (tmp_path / "nowhere" / "mindgraph.yml").write_text("paths:\n  wiki: pages\n")
    out = _search(tmp_path / "nowhere", "x", code=1)
    assert "pages does not exist" in out and "mindgraph ingest" in out


def test_a_compiled_pages_summary_sentence_shows_once(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "Knowledge graph.md").write_text(
        "# Knowledge graph\n\nThe graph module builds a NetworkX graph with one node per "
        "page path.\n\n- Edges come from resolved links.\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "-C", str(tmp_path)]).exit_code == 0
    page = (tmp_path / "wiki" / "Knowledge graph.md").read_text()
    assert "> [!summary]" in page and page.count("one node per page path") == 2
    data = json.loads(_search(tmp_path, "networkx", "node", "--json"))
    assert data["results"][0]["snippet"].count("page path") == 1
    context = runner.invoke(cli, ["context", "networkx graph nodes", "-C", str(tmp_path)])
    assert context.exit_code == 0 and context.output.count("one node per page path") == 1
    short = runner.invoke(cli, ["context", "networkx graph nodes", "-n", "1", "--json",
                                "-C", str(tmp_path)])                  # -n, as `search -n`
    assert short.exit_code == 0 and json.loads(short.stdout)["sources"] == [
        "Knowledge graph.md"]


def test_no_match_does_not_echo_a_huge_query_in_full(tmp_path):
    workspace = _workspace(tmp_path)
    out = _search(workspace, "quokka " * 1500)
    assert "No page matches 'quokka quokka" in out and len(out) < 200, len(out)


def test_a_context_whose_vectors_time_out_prints_the_keyword_matches_and_says_so(
        tmp_path, monkeypatch):
    """A cold model on a loaded machine: the vector side gives no answer within the limit.
    The block was empty; it now holds the keyword matches, found meanwhile on their own
    thread, its header and stderr saying the vectors timed out (exit 0 as ever)."""
    import time

    from mindgraph.providers.embedding.hashing import HashingEmbedder

    workspace = _workspace(tmp_path)
    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    assert CliRunner().invoke(cli, ["embed", "-C", str(workspace)]).exit_code == 0
    embed = HashingEmbedder.embed_queries
    monkeypatch.setattr(HashingEmbedder, "embed_queries",     # a model still loading
                        lambda *a, **k: (time.sleep(8), embed(*a, **k))[1])
    started = time.perf_counter()
    late = CliRunner().invoke(cli, ["context", "split a selection into a new note",
                                    "--timeout", "2", "-C", str(workspace)])
    assert time.perf_counter() - started < 6                 # the limit still holds
    assert late.exit_code == 0
    assert "(Plugins/Note composer.md#" in late.stdout and "### Relevant notes" in late.stdout
    assert "keyword matches only: the vector search gave no answer within 2 s" in late.stdout
    assert "mindgraph context: timeout: the vector search gave no answer within 2 s; the " \
           "block holds the keyword matches alone" in late.stderr
    data = json.loads(CliRunner().invoke(cli, ["context", "split a selection", "--timeout",
                                               "2", "--json", "-C", str(workspace)]).stdout)
    assert data["status"] == "timeout" and data["sources"] == ["Plugins/Note composer.md"]


def test_a_contexts_limit_covers_answering_not_opening_the_indexes(tmp_path, monkeypatch):
    """A fresh `mindgraph context` opens the keyword index and the vector store (a server has
    them open): that counted against --timeout, and a big vault's first second of it left an
    empty block. Opening is said in --json (open_ms), outside the limit."""
    import time

    from mindgraph.retrieval import keyword

    opened = keyword.open_keyword_index
    monkeypatch.setattr(keyword, "open_keyword_index",        # a big vault's index
                        lambda *a, **k: (time.sleep(1.0), opened(*a, **k))[1])
    workspace = _workspace(tmp_path)
    data = json.loads(CliRunner().invoke(cli, ["context", "split a selection into a new note",
                                               "--timeout", "0.5", "--json", "-C",
                                               str(workspace)]).stdout)
    assert data["status"] == "ok" and data["sources"][0] == "Plugins/Note composer.md", data
    assert data["open_ms"] >= 1000


def test_an_empty_query_is_a_usage_error_as_over_rest(tmp_path):
    workspace = _workspace(tmp_path)
    for blank in ("", "   "):
        result = CliRunner().invoke(cli, ["search", blank, "-C", str(workspace)])
        assert result.exit_code == 2 and "QUERY is empty" in result.output, result.output


def test_a_context_that_runs_out_of_time_says_how_to_give_it_more(tmp_path, monkeypatch):
    """Text mode: the empty block's reason on stderr names --timeout (a fresh process spends
    part of the limit loading); --json keeps the bare reason for agents."""
    import time

    from mindgraph.core.queries import Queries
    from mindgraph.core.vectors import VectorSearch

    answer, keywords = VectorSearch.smart_search, Queries.search
    monkeypatch.setattr(VectorSearch, "smart_search",     # a search that takes 0.5 s
                        lambda *a, **k: (time.sleep(0.5), answer(*a, **k))[1])
    monkeypatch.setattr(Queries, "search",                # and its keywords no sooner
                        lambda *a, **k: (time.sleep(0.5), keywords(*a, **k))[1])
    workspace = _workspace(tmp_path)
    late = CliRunner().invoke(cli, ["context", "networkx graph nodes", "--timeout", "0.05",
                                    "-C", str(workspace)])
    assert late.exit_code == 0 and late.stdout == ""
    assert "mindgraph context: timeout: no answer within 0.05 s" in late.stderr
    assert "--timeout SECONDS" in late.stderr
    data = json.loads(CliRunner().invoke(cli, ["context", "networkx graph nodes", "--timeout",
                                               "0.01", "--json", "-C",
                                               str(workspace)]).stdout)
    assert data["status"] == "timeout" and data["sources"] == []


def test_a_snippet_shows_a_notes_html_as_its_words_not_its_markup(tmp_path):
    """A note's raw HTML came into snippets as markup: ``<img src="img/cat.png" width="80"
    alt="the cat">`` took a third of the 240 characters of `search`, `context` and every
    agent's result. A tag goes (an image leaves its alt text); HTML in code stays."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Garden.md").write_text(
        "# Garden\n\nCover the <b>tomatoes</b> before frost. <img src=\"img/cat.png\" "
        "width=\"80\" alt=\"the cat\"><br>Frost kills <kbd>basil</kbd>; write `<b>frost</b>`."
        "\n\n## 霜\n\n<b>霜</b>の前にトマトを覆う。\n")
    data = json.loads(_search(tmp_path, "frost", "--json"))
    snippet = data["results"][0]["snippet"]
    # a match in code marks the code span whole (retrieval/snippet_marks.py)
    assert snippet == ("Cover the tomatoes before **frost**. the cat **Frost** kills basil; "
                       "write **`<b>frost</b>`**."), snippet
    ja = json.loads(_search(tmp_path, "霜", "--json"))["results"][0]["snippet"]
    assert ja.startswith("**霜**の前にトマト"), ja
    context = CliRunner().invoke(cli, ["context", "frost on the tomatoes", "-C", str(tmp_path)])
    assert context.exit_code == 0 and "the cat" in context.output
    assert "<img" not in context.output and "<b>" not in context.output.split("`")[0]


def test_a_section_that_only_embeds_a_note_names_it_instead_of_an_empty_snippet(tmp_path):
    """The Obsidian Help vault's first hit for "embed a file" was 'Embed files § Embed search
    results', whose text is ``![[Search#Embed search results in a note]]`` alone: its snippet
    line was blank, in `search` and `search --hybrid` alike."""
    (tmp_path / "mindgraph.yml").write_text("embedding: {provider: hashing, dimension: 64}\n")
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Embed files.md").write_text(
        "# Embed files\n\nShow a note inside another.\n\n## Embed search results\n\n"
        "![[Search#Embed search results in a note]]\n\n## Embed a picture\n\n"
        "![a diagram](diagram.png)\n")
    (wiki / "Search.md").write_text("# Search\n\n## Embed search results in a note\n\n"
                                    "Add a `query` code block.\n")
    results = json.loads(_search(tmp_path, "embed search results", "--json"))["results"]
    by_section = {r["section_id"]: r["snippet"] for r in results if r["page"] != "Search.md"}
    assert by_section == {"embed-search-results":
                          "(embeds Search › Embed search results in a note)"}, results
    picture = json.loads(_search(tmp_path, "embed picture", "--json"))["results"][0]
    assert (picture["section_id"], picture["snippet"]) == ("embed-a-picture",
                                                           "(embeds a diagram)")
    assert CliRunner().invoke(cli, ["embed", "-C", str(tmp_path)]).exit_code == 0
    hybrid = json.loads(_search(tmp_path, "--hybrid", "embed search results", "--json"))
    shown = {r["section_id"]: r["snippet"] for r in hybrid["results"]
             if r["page"] == "Embed files.md"}
    assert shown["embed-search-results"] == "(embeds Search › Embed search results in a note)"


def test_a_snippet_leaves_out_the_marker_of_a_heading_inside_a_section(tmp_path):
    """A heading too deep for a section of its own (##### in the Help vault's Sync settings)
    came into the snippet as '##### 隠しファイルと隠しフォルダ'; a '# comment' in a code block stays."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Sync.md").write_text(
        "# Sync\n\n## Excluded\n\nSnapshots are not synced.\n\n##### Dot folders\n\n"
        "Hidden files are not synced.\n\n```bash\n# synced by hand\nrsync a b\n```\n")
    snippet = json.loads(_search(tmp_path, "synced", "--json"))["results"][0]["snippet"]
    assert snippet == ("Snapshots are not **synced**. Dot folders Hidden files are not "
                       "**synced**. "
                       "# **synced** by hand rsync a b"), snippet
