"""Moves and renames: a raw note at a new path keeps its page's history, not delete + new.

Through the real entry points: `mindgraph ingest`, `check`, `links` and `embed` (CliRunner),
REST /page and the MCP get_page tool; vectors in the real embedded store, embedding calls
counted by the hashing provider.
"""

import json
import subprocess
import sys

import anyio
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from mcp import Client

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.ingest import STATE_FILENAME, IngestState
from mindgraph.ingest.moves import SIMILAR, pair_moves, signature, similarity
from mindgraph.providers.embedding import HashingEmbedder
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app
from mindgraph.trust.writeback import set_record_keys

from ingest_helpers import read_wiki, tree_hashes

BODY = ("Sourdough starts with a starter of flour and water kept warm for five days. "
        "Feed it twice a day and discard half before each feeding.\n\n"
        "## Baking\nShape the dough, proof it overnight in the fridge and bake it hot in a "
        "covered pot for forty minutes.\n")
RECORD = {"verification": {"status": "verified", "level": 2, "by": "ana"},
          "evidence": {"status": "grounded", "refs": ["raw:Bread/2021-03-04 Sourdough.md"]}}


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def ingest(workspace):
    result = run("ingest", "-C", workspace, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def state(workspace):
    return IngestState.load(workspace / ".mindgraph" / STATE_FILENAME)


@pytest.fixture
def vault(workspace, write_raw):
    """A dated note (its file name dates it) that another note mentions by name and that a
    person linked to, compiled once, with a trust record written into its page."""
    write_raw("Bread/2021-03-04 Sourdough.md", BODY)
    write_raw("Pantry.md", "The pantry holds flour. For bread see 2021-03-04 Sourdough; "
                           "also [[2021-03-04 Sourdough]].\n")
    ingest(workspace)
    page = workspace / "wiki" / "Bread" / "2021-03-04 Sourdough.md"
    page.write_text(set_record_keys(page.read_text(encoding="utf-8"), RECORD),
                    encoding="utf-8")
    return workspace


def rename(workspace, old, new):
    source, target = workspace / "raw" / old, workspace / "raw" / new
    target.parent.mkdir(parents=True, exist_ok=True)
    source.rename(target)


# -- how moves are told ----------------------------------------------------------------------

def test_small_edits_stay_above_the_threshold_and_other_notes_far_below():
    edited = BODY.replace("five days", "six days").replace("forty", "forty-five")
    other = "Canvas is an infinite board. Add cards, link them and group them in sections."
    assert similarity(signature(BODY), signature(BODY)) == 1.0
    assert similarity(signature(BODY), signature(edited)) >= SIMILAR
    assert similarity(signature(BODY), signature(other)) < 0.2
    assert signature("") == "" and similarity("", signature(BODY)) == 0.0


def test_same_content_pairs_first_by_file_name_then_similar_pairs_must_be_mutual():
    a, b = signature(BODY), signature(BODY + "One more line about rye flour and salt.\n")
    gone = {"x/Note.md": ("h1", a), "y/Other.md": ("h1", a), "z/Old.md": ("h2", b)}
    added = {"new/Other.md": ("h1", a), "w/Renamed.md": ("h3", signature(BODY + "Salt."))}
    moves = pair_moves(gone, added)
    # y/Other.md has the same content and file name; of the rest, x/Note.md is nearest
    assert [(m.old, m.new) for m in moves] == [("y/Other.md", "new/Other.md"),
                                               ("x/Note.md", "w/Renamed.md")]
    assert moves[0].how == "same content" and moves[1].how.startswith("similar content (")
    # two new notes both nearest to one old note: only the better one is its move
    both = pair_moves({"z/Old.md": ("h2", b)},
                      {"p.md": ("h4", a), "q.md": ("h5", signature(BODY + "Salt."))})
    assert len(both) == 1
    assert pair_moves({"a.md": ("h", a)}, {"b.md": ("h9", signature("Nothing alike here."))}) \
        == []


# -- ingest ----------------------------------------------------------------------------------

def test_a_renamed_note_moves_its_page_with_its_created_date_and_trust_record(vault):
    before = read_wiki(vault, "Bread/2021-03-04 Sourdough.md")
    assert "created: '2021-03-04'" in before
    raw_before = tree_hashes(vault / "raw")
    rename(vault, "Bread/2021-03-04 Sourdough.md", "Baking/Sourdough starter.md")
    raw_before = {k.replace("Bread/2021-03-04 Sourdough.md", "Baking/Sourdough starter.md"): v
                  for k, v in raw_before.items()}
    report = ingest(vault)
    assert report["moved"] == 1 and report["removed"] == 0
    moved = [f for f in report["files"] if f["status"] == "moved"]
    assert moved == [{"path": "Baking/Sourdough starter.md", "status": "moved",
                      "reason": "moved from Bread/2021-03-04 Sourdough.md (same content).",
                      "wiki": "Baking/Sourdough starter.md"}]
    assert not (vault / "wiki" / "Bread").exists()
    page = read_wiki(vault, "Baking/Sourdough starter.md")
    assert "created: '2021-03-04'" in page          # the file name no longer dates it
    assert "verification:\n  status: verified\n  level: 2\n  by: ana" in page
    assert "evidence:\n  status: grounded" in page
    assert tree_hashes(vault / "raw") == raw_before             # raw/ never written
    # links the compiler added to the old name now point to the new page
    pantry = read_wiki(vault, "Pantry.md")
    assert "[[Sourdough starter|2021-03-04 Sourdough]]" in pantry
    records = state(vault)
    assert "Bread/2021-03-04 Sourdough.md" not in records.files
    assert records.moves["Bread/2021-03-04 Sourdough.md"]["page"] == \
        "Baking/Sourdough starter.md"
    again = ingest(vault)
    assert (again["ingested"], again["moved"], again["removed"]) == (0, 0, 0)


def test_a_note_moved_with_small_edits_is_a_move_and_an_unrelated_new_note_is_not(vault):
    rename(vault, "Bread/2021-03-04 Sourdough.md", "Sourdough.md")
    path = vault / "raw" / "Sourdough.md"
    path.write_text(path.read_text().replace("five days", "six days"), encoding="utf-8")
    (vault / "raw" / "Canvas.md").write_text("Canvas is a board of cards.\n")
    report = ingest(vault)
    statuses = {f["path"]: (f["status"], f["reason"]) for f in report["files"]}
    assert statuses["Sourdough.md"][0] == "moved"
    assert statuses["Sourdough.md"][1].startswith(
        "moved from Bread/2021-03-04 Sourdough.md (similar content (0.")
    assert statuses["Canvas.md"] == ("ingested", "")
    assert "by: ana" in read_wiki(vault, "Sourdough.md")


def test_a_delete_and_an_unrelated_new_note_stay_a_delete_and_a_new_note(vault):
    (vault / "raw" / "Bread" / "2021-03-04 Sourdough.md").unlink()
    (vault / "raw" / "Canvas.md").write_text("Canvas is a board of cards.\n")
    report = ingest(vault)
    # removed: its page (a trust record is no hand edit); ingested: Canvas, and Pantry relinked
    assert (report["moved"], report["removed"], report["ingested"]) == (0, 1, 2)
    assert not (vault / "wiki" / "Bread" / "2021-03-04 Sourdough.md").exists()
    assert state(vault).moves == {}


def test_dry_run_says_what_would_move_and_changes_nothing(vault):
    rename(vault, "Bread/2021-03-04 Sourdough.md", "Sourdough.md")
    before = tree_hashes(vault / "wiki")
    result = run("ingest", "-C", vault, "--dry-run", "--json")
    data = json.loads(result.output)
    assert data["moved"] == 1
    assert {"path": "Sourdough.md", "status": "pending",
            "reason": "would move from Bread/2021-03-04 Sourdough.md (same content)",
            "wiki": "Sourdough.md"} in data["files"]
    assert tree_hashes(vault / "wiki") == before


def test_moving_back_and_chained_moves_keep_one_record_per_old_name(vault):
    rename(vault, "Bread/2021-03-04 Sourdough.md", "A.md")
    ingest(vault)
    rename(vault, "A.md", "B.md")
    ingest(vault)
    moves = state(vault).moves
    assert {old: m["page"] for old, m in moves.items()} == {
        "Bread/2021-03-04 Sourdough.md": "B.md", "A.md": "B.md"}
    rename(vault, "B.md", "Bread/2021-03-04 Sourdough.md")
    ingest(vault)
    assert {old: m["page"] for old, m in state(vault).moves.items()} == {
        "A.md": "Bread/2021-03-04 Sourdough.md", "B.md": "Bread/2021-03-04 Sourdough.md"}
    assert "by: ana" in read_wiki(vault, "Bread/2021-03-04 Sourdough.md")


# -- links people wrote to the old name ------------------------------------------------------

def test_check_links_rest_and_mcp_report_a_link_to_the_old_name_as_stale(vault):
    rename(vault, "Bread/2021-03-04 Sourdough.md", "Baking/Sourdough starter.md")
    ingest(vault)
    assert "[[2021-03-04 Sourdough]]" in (vault / "raw" / "Pantry.md").read_text()
    check = run("check", "-C", vault)
    assert "warning stale-link" in check.output
    assert ("raw/Pantry.md:1: [[2021-03-04 Sourdough]] names a page that moved to "
            "Baking/Sourdough starter.md; it still resolves there, but write "
            "[[Sourdough starter]] instead") in check.output
    assert check.exit_code == 0                         # a warning: the link still works
    links = json.loads(run("links", "-C", vault, "Pantry", "--json").output)
    stale = [o for o in links["outgoing"] if o.get("stale")]
    assert [(o["target"], o["status"], o["page"]) for o in stale] == [
        ("2021-03-04 Sourdough", "resolved", "Baking/Sourdough starter.md")]
    assert "moved to Baking/Sourdough starter.md" in stale[0]["stale"]
    text = run("links", "-C", vault, "Pantry").output
    assert "-> Baking/Sourdough starter.md  (stale: [[2021-03-04 Sourdough]] moved there)" \
        in text
    backlinks = json.loads(run("links", "-C", vault, "Sourdough starter", "--json").output)
    assert {b["page"] for b in backlinks["backlinks"]} == {"Pantry.md"}

    mg = Mindgraph(load_settings(vault))
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    page = client.get("/page", params={"page": "Pantry"}).json()
    assert [o["page"] for o in page["outgoing"] if o.get("stale")] == [
        "Baking/Sourdough starter.md"]

    async def script():
        async with Client(create_mcp_server(mg)) as session:
            return await session.call_tool("get_page", {"page": "Pantry"})

    result = anyio.run(script)
    data = json.loads(result.content[0].text)
    assert data["stale_links"] == [{"link": "2021-03-04 Sourdough",
                                    "page": "Baking/Sourdough starter.md",
                                    "fix": "[[Sourdough starter]]"}]
    assert data.get("broken_links", []) == []


# -- vectors ---------------------------------------------------------------------------------

def test_a_moved_page_keeps_its_vectors_with_zero_embedding_calls(vault, monkeypatch):
    monkeypatch.setenv("MINDGRAPH_EMBEDDING__PROVIDER", "hashing")

    def embed():
        mg = Mindgraph(load_settings(vault))
        counting = HashingEmbedder()
        mg._embedder = counting
        report, _ = mg.embed()
        return mg, report, counting

    _, first, counting = embed()
    assert counting.texts_embedded == first.embedded > 0
    rename(vault, "Bread/2021-03-04 Sourdough.md", "Baking/Sourdough starter.md")
    ingest(vault)
    mg, report, counting = embed()
    assert counting.calls == 0 and report.embedded == 0
    store = mg.vector_store()
    held = store.hashes(counting.model_version)
    assert "Bread/2021-03-04 Sourdough.md" not in held
    assert set(held["Baking/Sourdough starter.md"]) == {"lead", "baking"}
    # and the kept vectors are the ones the new page's text gives
    query = counting.embed_queries(["Shape the dough, proof it overnight"])[0]
    assert store.query(query, 1, counting.model_version)[0].page == \
        "Baking/Sourdough starter.md"
    # a move with an edit embeds only the section that changed
    rename(vault, "Baking/Sourdough starter.md", "Starter.md")
    path = vault / "raw" / "Starter.md"
    path.write_text(path.read_text().replace("forty minutes", "forty-five minutes"))
    ingest(vault)
    _, report, counting = embed()
    assert report.embedded == 1 and counting.texts_embedded == 1


def test_a_renamed_page_with_long_split_sections_embeds_nothing(workspace, write_raw,
                                                                monkeypatch):
    # the title starts every chunk and shifts where a long section splits: the renamed page
    # keeps its old title's chunks while its body is unchanged
    monkeypatch.setenv("MINDGRAPH_EMBEDDING__PROVIDER", "hashing")
    long_text = " ".join(f"word{i} grows slowly in the long section" for i in range(400))
    write_raw("Long.md", f"Lead text.\n\n## Long part\n{long_text}\n")
    ingest(workspace)
    mg = Mindgraph(load_settings(workspace))
    first, _ = mg.embed()
    chunks = mg.vector_store().hashes(first.model_version)["Long.md"]
    assert sum(1 for c in chunks if "~" in c) >= 2
    rename(workspace, "Long.md", "A much longer name for the long note.md")
    ingest(workspace)
    mg = Mindgraph(load_settings(workspace))
    counting = HashingEmbedder()
    mg._embedder = counting
    report, _ = mg.embed()
    assert (counting.calls, report.embedded) == (0, 0)
    held = mg.vector_store().hashes(counting.model_version)
    assert set(held) == {"A much longer name for the long note.md"}
    assert len(held["A much longer name for the long note.md"]) == len(chunks)
    again, _ = Mindgraph(load_settings(workspace)).embed()
    assert again.embedded == 0 and again.deleted_chunks == 0


def test_an_old_name_taken_by_a_new_page_belongs_to_the_new_page(vault, write_raw):
    rename(vault, "Bread/2021-03-04 Sourdough.md", "Sourdough starter.md")
    ingest(vault)
    assert "[[Sourdough starter|2021-03-04 Sourdough]]" in read_wiki(vault, "Pantry.md")
    write_raw("Other/2021-03-04 Sourdough.md", "A different note that took the old name.")
    ingest(vault)
    assert "[[2021-03-04 Sourdough]]" in read_wiki(vault, "Pantry.md")
    links = json.loads(run("links", "-C", vault, "Pantry", "--json").output)
    assert {(o["page"], "stale" in o) for o in links["outgoing"]} == {
        ("Other/2021-03-04 Sourdough.md", False)}


def test_a_moved_page_keeps_its_api_overlay_and_manual_links_and_its_evidence_follows(vault):
    """What the documents API set for a page (title, tags, typed links from and to it) moves
    with it, as its trust record does; the record's evidence names the note's new path."""
    old_page, new_page = "Bread/2021-03-04 Sourdough.md", "Baking/Sourdough starter.md"
    client = TestClient(create_app(Mindgraph.open(vault)), base_url="http://127.0.0.1:8765")
    ids = {d["page"]: d["id"] for d in client.get("/documents").json()["documents"]}
    put = client.put(f"/documents/{ids[old_page]}", json={"title": "Starter",
                                                          "tags": ["baking"]})
    assert put.status_code == 200, put.text
    for source, target in ((ids[old_page], ids["Pantry.md"]),
                           (ids["Pantry.md"], ids[old_page])):
        made = client.post("/links", json={"from": source, "to": target, "kind": "related"})
        assert made.status_code == 200, made.text
    rename(vault, old_page, new_page)
    records = vault / ".mindgraph" / "documents"
    stored = {n: (records / n).read_bytes() for n in ("overlays.json", "links.json")}
    assert run("ingest", "-C", vault, "--dry-run").exit_code == 0
    assert {n: (records / n).read_bytes() for n in stored} == stored    # a dry run: nothing
    report = ingest(vault)
    assert report["moved"] == 1
    page = read_wiki(vault, new_page)
    assert "title: Starter" in page and "- baking" in page
    assert "manual_links:\n- to: Pantry.md\n  kind: related" in page
    assert "raw:Baking/Sourdough starter.md" in page and "raw:Bread/" not in page
    client = TestClient(create_app(Mindgraph.open(vault)), base_url="http://127.0.0.1:8765")
    ids = {d["page"]: d["id"] for d in client.get("/documents").json()["documents"]}
    assert client.get(f"/documents/{ids[new_page]}").json()["overlay"] == {
        "title": "Starter", "tags": ["baking"]}
    links = client.get(f"/documents/{ids[new_page]}/links").json()
    assert [e["page"] for e in links["outbound"] if e["origin"] == "manual"] == ["Pantry.md"]
    assert [e["page"] for e in links["backlinks"] if e["origin"] == "manual"] == ["Pantry.md"]
    stored_links = json.loads((records / "links.json").read_text())
    assert sorted((x["source"], x["target"]) for x in stored_links.values()) == [
        (new_page, "Pantry.md"), ("Pantry.md", new_page)]
    assert list(json.loads((records / "overlays.json").read_text())) == [new_page]
    again = ingest(vault)
    assert (again["ingested"], again["moved"], again["removed"]) == (0, 0, 0)


def test_a_rename_differs_from_a_fresh_ingest_only_by_what_the_move_history_knows(
        vault, tmp_path_factory):
    """README "Moves and renames": after a rename, the wiki equals a fresh workspace's wiki
    of the same raw/ but for the moved page's created date and trust record, and the other
    notes' mentions of the old name, which stay links to it."""
    import shutil

    rename(vault, "Bread/2021-03-04 Sourdough.md", "Baking/Sourdough starter.md")
    ingest(vault)
    fresh = tmp_path_factory.mktemp("fresh")
    shutil.copytree(vault / "raw", fresh / "raw")
    ingest(fresh)
    renamed, new = tree_hashes(vault / "wiki"), tree_hashes(fresh / "wiki")
    assert set(renamed) == set(new)
    differ = sorted(p for p in renamed if renamed[p] != new[p])
    assert differ == ["Baking/Sourdough starter.md", "Pantry.md"]
    moved, fresh_page = (read_wiki(w, "Baking/Sourdough starter.md") for w in (vault, fresh))
    assert "created: '2021-03-04'" in moved and "created: '2021-03-04'" not in fresh_page
    assert "verification:" in moved and "verification:" not in fresh_page
    pantry = read_wiki(vault, "Pantry.md")
    assert pantry.replace("[[Sourdough starter|2021-03-04 Sourdough]]",
                          "2021-03-04 Sourdough") == read_wiki(fresh, "Pantry.md")
    # a note that stops saying the old name stops linking it
    (vault / "raw" / "Pantry.md").write_text("The pantry holds flour. Also "
                                             "[[2021-03-04 Sourdough]].\n")
    (fresh / "raw" / "Pantry.md").write_text("The pantry holds flour. Also "
                                             "[[2021-03-04 Sourdough]].\n")
    ingest(vault), ingest(fresh)
    assert "Sourdough starter|" not in read_wiki(vault, "Pantry.md")


def test_a_first_sketch_imports_nothing_numpy_did_not():
    """A signature needs no module NumPy's own import did not load (numpy.random for the
    weights, numpy.ma for np.unique cost ~20 ms of a first run's serial path), so a parent
    that imported sketches leaves its forked workers nothing to import for one."""
    code = ("import sys\nfrom mindgraph.ingest import sketches\n"
            "before = set(sys.modules)\n"
            "sketches.signature('one two three four five six seven ' * 40)\n"
            "print(sorted(set(sys.modules) - before))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_the_written_out_weights_are_the_seeded_generators_and_sketches_are_unchanged():
    """The weights are the seeded generator's (a written-out copy: no numpy.random at run
    time), and signatures are the ones ingest states kept before: a moved note is still
    recognised by the sketch an older release recorded."""
    import numpy as np

    from mindgraph.ingest.sketches import _WEIGHTS

    seeded = np.random.default_rng(20261201).integers(1, 1 << 63, 64, dtype=np.uint64) | 1
    assert _WEIGHTS.dtype == np.uint64 and (_WEIGHTS == seeded).all()
    assert signature("Sourdough starts with a starter of flour and water. " * 30) == (
        "5yv3czfOng2HlAr0WY1+FTameQiir2IoidS3Xj9HGiogFe9ForVwYYsksS0ZPDOF+tZyZ5456qeHEEt+Ngo"
        "VtgN6Q9slbfbD")
    assert signature("日本語のテキストと中文的文本 mixed with English words\tand\ttabs") == (
        "YSkNQaZSbhCuszy689WYEpEylQP0L+QaeChMeQYlKll+U+MrIF7HbLWI7R2fm6SIvG0tq4p3U4kBcV5CeUX/"
        "l1rt/vHMa4ib4+6LOxajlKAOLu0cVThxqvIH4XcIfx27IJEFiwj5b7uaGOwZ3XURxWl+hCUToEnICbHaZ9tG"
        "dddrf9FV/Bu+6Hway2n+RHTr")
    assert signature("ab") == "++seEnYOoNQ=" and signature(" \n\t") == ""
