"""An upload's heavy notes are compiled one per turn of the write lane (so another tenant's
write waits for one of them, not all; small ones share a turn), and a note with more headings than
compile.max_note_headings is refused naming the file and the setting — at upload and
POST /documents before anything is written, and at ingest as a failed note (REST
in-process, over a compiled workspace)."""

from click.testing import CliRunner

from mindgraph.cli import cli
from documents_support import HASHING, raw_hashes, served_workspace

CAPPED = "compile:\n  max_note_headings: 50\n"


def headings(count: int) -> str:
    return "# Many\n\n" + "".join(f"## kettle {i}\nword\n" for i in range(count))


def test_heavy_uploaded_notes_are_compiled_in_turns_of_their_own(tmp_path):
    client = served_workspace(tmp_path)
    heavy = [(f"h{i}.md", headings(5_000).encode()) for i in range(3)]      # ~550 KB of prose
    light = [(f"l{i}.md", f"# L{i}\n\nThe kettle {i}.\n".encode()) for i in range(2)]
    answer = client.post("/upload", files=[("files", (name, data, "text/markdown"))
                                           for name, data in heavy + light])
    assert answer.status_code == 200, answer.text
    documents = answer.json()["documents"]
    assert [d["raw"].rsplit("/", 1)[-1] for d in documents] == \
        ["h0.md", "h1.md", "h2.md", "l0.md", "l1.md"]
    assert all(d["searchable"] for d in documents)
    jobs = [j for j in client.get("/status").json()["recent"] if j["kind"] == "upload"]
    # a compile (a job, a turn of the write lane) for each heavy note, the light ones with
    # the last (newest first): not one for all five, which held the lane for all of them
    assert [j["outcome"]["ingested"] for j in jobs] == [3, 1, 1], jobs


def test_a_note_over_the_heading_cap_is_refused_at_upload_naming_file_and_setting(tmp_path):
    client = served_workspace(tmp_path, CAPPED)
    before = raw_hashes(tmp_path / "raw")
    refused = client.post("/upload", files=[
        ("files", ("small.md", b"# Small\n", "text/markdown")),
        ("files", ("many.md", headings(60).encode(), "text/markdown"))])
    assert refused.status_code == 413, refused.text
    detail = refused.json()["detail"]
    assert "many.md" in detail and "61 headings" in detail
    assert "compile.max_note_headings (50)" in detail and "nothing written" in detail
    created = client.post("/documents", json={"title": "Many", "text": headings(60)})
    assert created.status_code == 413, created.text
    assert "compile.max_note_headings" in created.json()["detail"]
    assert raw_hashes(tmp_path / "raw") == before          # all or nothing: none written
    # "#" lines in code are no headings; a note at the cap (H1 and 49 more) compiles
    code = "# Code\n\n```sh\n" + "# a comment\n" * 80 + "```\n"
    fits = client.post("/upload", files=[
        ("files", ("code.md", code.encode(), "text/markdown")),
        ("files", ("fifty.md", headings(49).encode(), "text/markdown"))])
    assert fits.status_code == 200, fits.text
    assert all(d["searchable"] for d in fits.json()["documents"])


def test_a_raw_note_over_the_heading_cap_fails_at_ingest_and_the_others_go_on(tmp_path):
    (tmp_path / "mindgraph.yml").write_text(HASHING + CAPPED)
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Kept.md").write_text("# Kept\n\nTrunks stay.\n")
    (tmp_path / "raw" / "Many.md").write_text(headings(60))
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "ingest"])
    assert "Many.md: 61 headings, more than compile.max_note_headings (50)" in result.output
    assert (tmp_path / "wiki" / "Kept.md").is_file()
    assert not (tmp_path / "wiki" / "Many.md").exists()
