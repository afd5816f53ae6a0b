"""Uploads that could never compile are refused at the door, and a note whose compile failed
can still be deleted by its id (REST in-process, over a compiled workspace)."""

from documents_support import raw_hashes, served_workspace


def test_a_file_over_the_compile_cap_is_refused_at_upload_naming_both_settings(tmp_path):
    client = served_workspace(tmp_path, "compile:\n  max_note_bytes: 2000\n")
    before = raw_hashes(tmp_path / "raw")
    big = client.post("/upload", files=[
        ("files", ("small.md", b"# Small\n", "text/markdown")),
        ("files", ("big.md", b"# Big\n\n" + b"a" * 2500, "text/markdown"))])
    assert big.status_code == 413, big.text
    detail = big.json()["detail"]
    assert "big.md" in detail and "2000 bytes" in detail
    assert "compile.max_note_bytes" in detail and "serve.upload_max_file_bytes" in detail
    # a data file under the cap that its note wrapping takes over it: refused too
    data = b'{"k": "' + b"v" * 1950 + b'"}'
    wrapped = client.post("/upload", files=[("files", ("data.json", data, "application/json"))])
    assert wrapped.status_code == 413, wrapped.text
    assert "compile.max_note_bytes" in wrapped.json()["detail"]
    assert raw_hashes(tmp_path / "raw") == before          # all or nothing: none written
    fits = client.post("/upload", files=[("files", ("fits.md", b"# Fits\n\n" + b"b " * 900,
                                                    "text/markdown"))])
    assert fits.status_code == 200 and fits.json()["documents"][0]["searchable"]


def test_the_upload_cap_still_applies_when_it_is_the_lower(tmp_path):
    client = served_workspace(tmp_path, "serve:\n  upload_max_file_bytes: 1024\n")
    big = client.post("/upload", files=[("files", ("big.md", b"a" * 1500, "text/markdown"))])
    assert big.status_code == 413
    assert "(serve.upload_max_file_bytes)" in big.json()["detail"]


def test_a_note_whose_compile_failed_can_be_deleted_by_its_id(tmp_path):
    client = served_workspace(tmp_path)
    before = raw_hashes(tmp_path / "raw")
    answer = client.post("/upload", files=[
        ("files", ("broken.md", b"---\ntitle: [unclosed\n---\n# Broken\n", "text/markdown"))])
    assert answer.status_code == 200, answer.text
    note = answer.json()["documents"][0]
    assert note["compile"]["status"] == "failed" and not note["searchable"]
    assert (tmp_path / "raw" / note["raw"]).is_file()
    assert client.get(f"/documents/{note['id']}").status_code == 404   # no page to read
    gone = client.delete(f"/documents/{note['id']}")
    assert gone.status_code == 200, gone.text
    assert gone.json() == {"id": note["id"], "page": note["page"], "deleted": True,
                           "links_removed": 0}
    assert raw_hashes(tmp_path / "raw") == before
    again = client.delete(f"/documents/{note['id']}")
    assert again.status_code == 404
    # a note that did not come through the API is still not the API's to delete
    assert client.delete("/documents/0123456789abcdef").status_code == 404
