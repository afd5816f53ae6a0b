"""The documents and links API through the REST app: new notes, overlays, manual links,
deletes, uploads, rescans and status — and that what it does survives restarts and
recompiles while the raw notes that came from elsewhere stay byte for byte as they were."""

import asyncio
import hashlib
import json
import threading
import time

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.documents.records import document_id
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
CONFIG = "embedding:\n  provider: hashing\n  dimension: 64\n"


def raw_hashes(raw):
    """Every file under raw/ by path, with its SHA-256."""
    return {p.relative_to(raw).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(raw.rglob("*")) if p.is_file()}


@pytest.fixture
def vault(tmp_path):
    """A compiled workspace of three raw notes (two linked), with its raw hashes."""
    (tmp_path / "mindgraph.yml").write_text(CONFIG)
    raw = tmp_path / "raw"
    (raw / "travel").mkdir(parents=True)
    (raw / "travel" / "Packing.md").write_text("---\ntags: [gear]\n---\n# Packing\n\n"
                                               "Fold the trunks before [[Kyoto]].\n")
    (raw / "travel" / "Kyoto.md").write_text("# Kyoto\n\nTemples and trains.\n")
    (raw / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry cargo.\n")
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "ingest"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return tmp_path


def client_for(base, **kwargs):
    """A local client of a fresh app over ``base`` (a new app = a server restart)."""
    mg = Mindgraph.open(base)
    return TestClient(create_app(mg), base_url=LOCAL, **kwargs)


@pytest.fixture
def client(vault):
    return client_for(vault)


def ids_by_page(client):
    listing = client.get("/documents", params={"limit": 200}).json()
    return {d["page"]: d["id"] for d in listing["documents"]}


def test_list_and_get_documents_with_filters_and_paging(client):
    listing = client.get("/documents").json()
    assert listing["total"] == 3
    assert [d["page"] for d in listing["documents"]] == ["Zeppelins.md", "travel/Kyoto.md",
                                                         "travel/Packing.md"]
    packing = client.get("/documents", params={"tag": "gear"}).json()["documents"]
    assert [d["page"] for d in packing] == ["travel/Packing.md"]
    assert packing[0]["source"] == "travel/Packing.md"
    assert packing[0]["created_via_api"] is False
    second = client.get("/documents", params={"offset": 1, "limit": 1}).json()
    assert second["total"] == 3 and [d["page"] for d in second["documents"]] == [
        "travel/Kyoto.md"]
    one = client.get(f"/documents/{packing[0]['id']}").json()
    assert one["title"] == "Packing" and "Fold the trunks" in one["text"]


def test_unknown_and_traversing_ids_are_refused(client):
    assert client.get("/documents/0123456789abcdef").status_code == 404
    for bad in ("..%2F..%2Fetc%2Fpasswd", "../../etc/passwd", "ZEPPELIN"):
        assert client.get(f"/documents/{bad}").status_code in (404, 422), bad
    assert client.delete("/documents/..%2Fraw%2FZeppelins.md").status_code in (404, 422)
    assert client.delete("/links/0123456789abcdef").status_code == 404


def test_new_note_is_written_compiled_and_searchable_and_survives(vault, client):
    before = raw_hashes(vault / "raw")
    created = client.post("/documents", json={"title": "Airship hangars",
                                              "text": "Hangars shelter the zeppelins.",
                                              "tags": ["hangar"]})
    assert created.status_code == 200, created.text
    body = created.json()
    assert body["searchable"] is True and body["searchable_since"]
    assert body["raw"] == "api-notes/Airship-hangars.md"
    assert (vault / "raw" / body["raw"]).is_file()
    hits = client.get("/search", params={"q": "hangars shelter"}).json()["results"]
    assert hits[0]["page"] == "api-notes/Airship-hangars.md"
    after = raw_hashes(vault / "raw")
    assert {k: v for k, v in after.items() if k in before} == before   # nothing else touched
    # a restart and a forced recompile keep it
    CliRunner().invoke(cli, ["-C", str(vault), "ingest", "--force"], catch_exceptions=False)
    again = client_for(vault).get(f"/documents/{body['id']}").json()
    assert again["created_via_api"] is True and again["tags"][0] == "hangar"


def test_overlay_applies_at_compile_time_and_raw_stays_untouched(vault, client):
    before = raw_hashes(vault / "raw")
    doc = ids_by_page(client)["travel/Kyoto.md"]
    changed = client.put(f"/documents/{doc}", json={"title": "Kyoto travel notes",
                                                    "tags": ["japan", "trip"],
                                                    "type": "guide"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["title"] == "Kyoto travel notes"
    assert changed.json()["overlay"] == {"title": "Kyoto travel notes",
                                         "tags": ["japan", "trip"], "type": "guide"}
    page = (vault / "wiki" / "travel" / "Kyoto.md").read_text()
    assert "title: Kyoto travel notes" in page and "type: guide" in page
    assert raw_hashes(vault / "raw") == before
    assert client.get("/documents", params={"type": "guide"}).json()["total"] == 1
    # a forced recompile from the CLI and a restart keep the overlay
    result = CliRunner().invoke(cli, ["-C", str(vault), "ingest", "--force"],
                                catch_exceptions=False)
    assert result.exit_code == 0
    assert "title: Kyoto travel notes" in (vault / "wiki" / "travel" / "Kyoto.md").read_text()
    restarted = client_for(vault)
    assert restarted.get(f"/documents/{doc}").json()["tags"] == ["japan", "trip"]
    # null clears one field, the others stay
    cleared = restarted.put(f"/documents/{doc}", json={"title": None}).json()
    assert cleared["title"] == "Kyoto" and cleared["type"] == "guide"
    assert raw_hashes(vault / "raw") == before


def test_manual_links_show_in_links_backlinks_and_graph_and_survive(vault, client):
    before = raw_hashes(vault / "raw")
    ids = ids_by_page(client)
    made = client.post("/links", json={"from": ids["Zeppelins.md"],
                                       "to": ids["travel/Packing.md"], "kind": "depends_on",
                                       "context": "Cargo must be packed first."})
    assert made.status_code == 200, made.text
    link = made.json()
    assert link["origin"] == "manual" and link["kind"] == "depends_on"
    out = client.get(f"/documents/{ids['Zeppelins.md']}/links").json()["outbound"]
    assert [(x["page"], x["kind"], x["origin"], x["context"]) for x in out] == [
        ("travel/Packing.md", "depends_on", "manual", "Cargo must be packed first.")]
    back = client.get(f"/documents/{ids['travel/Packing.md']}/links").json()["backlinks"]
    assert ("Zeppelins.md", "depends_on", "manual") in {(x["page"], x["kind"], x["origin"])
                                                        for x in back}
    mg = Mindgraph.open(vault)
    edge = mg.graph().graph.get_edge_data("Zeppelins.md", "travel/Packing.md")["depends_on"]
    assert edge["kind"] == "extracted" and edge["sources"][0]["syntax"] == "manual"
    # the batch read gives both documents' links at once
    batch = client.post("/links/batch", json={"ids": [ids["Zeppelins.md"],
                                                      ids["travel/Packing.md"]]}).json()
    assert set(batch["documents"]) == {ids["Zeppelins.md"], ids["travel/Packing.md"]}
    # survives a forced recompile and a restart; raw/ untouched
    CliRunner().invoke(cli, ["-C", str(vault), "ingest", "--force"], catch_exceptions=False)
    restarted = client_for(vault)
    out = restarted.get(f"/documents/{ids['Zeppelins.md']}/links").json()["outbound"]
    assert [x["link_id"] for x in out] == [link["id"]]
    assert raw_hashes(vault / "raw") == before
    # deleted: gone from links, and stays gone after a recompile
    assert restarted.delete(f"/links/{link['id']}").status_code == 200
    CliRunner().invoke(cli, ["-C", str(vault), "ingest", "--force"], catch_exceptions=False)
    assert client_for(vault).get(f"/documents/{ids['Zeppelins.md']}/links").json()[
        "outbound"] == []
    assert raw_hashes(vault / "raw") == before


def test_bad_links_are_refused(client):
    ids = ids_by_page(client)
    same = client.post("/links", json={"from": ids["Zeppelins.md"], "to": ids["Zeppelins.md"],
                                       "kind": "related"})
    assert same.status_code == 400
    wrong_kind = client.post("/links", json={"from": ids["Zeppelins.md"],
                                             "to": ids["travel/Kyoto.md"], "kind": "likes"})
    assert wrong_kind.status_code == 422
    unknown = client.post("/links", json={"from": ids["Zeppelins.md"],
                                          "to": "0123456789abcdef", "kind": "related"})
    assert unknown.status_code == 404


def test_delete_only_what_the_api_created(vault, client):
    before = raw_hashes(vault / "raw")
    ids = ids_by_page(client)
    refused = client.delete(f"/documents/{ids['Zeppelins.md']}")
    assert refused.status_code == 403
    assert "not created through the API" in refused.json()["detail"]
    made = client.post("/documents", json={"title": "Scratch", "text": "Temporary."}).json()
    link = client.post("/links", json={"from": ids["Zeppelins.md"], "to": made["id"],
                                       "kind": "related"}).json()
    gone = client.delete(f"/documents/{made['id']}")
    assert gone.status_code == 200, gone.text
    assert gone.json()["links_removed"] == 1
    assert not (vault / "raw" / made["raw"]).exists()
    assert not (vault / "wiki" / made["page"]).exists()
    assert client.get(f"/documents/{made['id']}").status_code == 404
    assert client.delete(f"/links/{link['id']}").status_code == 404
    assert raw_hashes(vault / "raw") == before


def test_delete_refuses_a_note_edited_after_the_api_wrote_it(vault, client):
    made = client.post("/documents", json={"title": "Draft", "text": "First."}).json()
    (vault / "raw" / made["raw"]).write_text("Edited by a person.\n")
    refused = client.delete(f"/documents/{made['id']}")
    assert refused.status_code == 403 and "changed after the API wrote it" in \
        refused.json()["detail"]
    assert (vault / "raw" / made["raw"]).read_text() == "Edited by a person.\n"


def test_upload_writes_notes_and_wraps_data_files(vault, client):
    before = raw_hashes(vault / "raw")
    files = [("files", ("../../escape.md", b"# Escape\n\nNot outside raw.\n", "text/markdown")),
             ("files", ("prices.json", b'{"trunk": 120}', "application/json")),
             ("files", ("..\\..\\table.csv", b"item,price\ntrunk,120\n", "text/csv"))]
    response = client.post("/upload", files=files)
    assert response.status_code == 200, response.text
    raws = sorted(d["raw"] for d in response.json()["documents"])
    assert raws == ["api-notes/escape.md", "api-notes/prices-json.md", "api-notes/table-csv.md"]
    assert all(d["searchable"] for d in response.json()["documents"])
    assert not (vault.parent / "escape.md").exists()
    page = Mindgraph.open(vault)
    assert page.extract("api-notes/prices-json.md") == {"trunk": 120}
    after = raw_hashes(vault / "raw")
    assert {k: v for k, v in after.items() if k in before} == before


def test_upload_refuses_other_types_and_writes_nothing(vault, client):
    before = raw_hashes(vault / "raw")
    files = [("files", ("ok.md", b"# Fine\n", "text/markdown")),
             ("files", ("tool.exe", b"MZ\x00\x00", "application/octet-stream"))]
    response = client.post("/upload", files=files)
    assert response.status_code == 415
    assert "'.exe' files are not taken" in response.json()["detail"]
    binary = client.post("/upload", files=[("files", ("fake.md", b"\x00\x01\x02",
                                                      "text/markdown"))])
    assert binary.status_code == 415 and "NUL bytes" in binary.json()["detail"]
    assert raw_hashes(vault / "raw") == before


def test_upload_limits_are_its_own(vault):
    (vault / "mindgraph.yml").write_text(CONFIG + "serve:\n  upload_max_files: 2\n"
                                         "  upload_max_file_bytes: 2048\n"
                                         "  max_body_bytes: 1024\n")
    client = client_for(vault)
    big = client.post("/upload", files=[("files", ("big.md", b"a" * 3000, "text/markdown"))])
    assert big.status_code == 413 and "upload_max_file_bytes" in big.json()["detail"]
    many = client.post("/upload", files=[("files", (f"n{i}.md", b"# N\n", "text/markdown"))
                                         for i in range(3)])
    assert many.status_code == 413
    # bigger than the JSON limit but within the upload's own: taken
    fine = client.post("/upload", files=[("files", ("mid.md", b"b " * 900, "text/markdown")),
                                         ("files", ("mid2.md", b"c " * 900, "text/markdown"))])
    assert fine.status_code == 200, fine.text
    # the JSON routes keep their 1 KiB limit
    huge = client.post("/documents", json={"title": "x", "text": "y" * 2000})
    assert huge.status_code == 413
    # a whole body past the upload's cap is refused while it streams
    over = client.post("/upload", files=[("files", (f"p{i}.md", b"d" * 2000, "text/markdown"))
                                         for i in range(3)])
    assert over.status_code == 413


def test_rescan_compiles_in_the_background_and_a_second_is_409(vault, client):
    (vault / "raw" / "Balloons.md").write_text("# Balloons\n\nHot air lifts them.\n")
    started = client.post("/rescan", json={"embed": False})
    assert started.status_code == 202, started.text
    job = started.json()["job"]["id"]
    for _ in range(200):
        status = client.get("/status").json()
        if not status["busy"]:
            break
        time.sleep(0.05)
    finished = [j for j in status["recent"] if j["id"] == job][0]
    assert finished["phase"] == "done" and finished["outcome"]["ingest"]["ingested"] == 1
    assert "Balloons.md" in ids_by_page(client)
    # while one runs (held here), a second gets 409 at once
    service = client.app.state.documents
    held = service.start_rescan(service_view(client))
    conflict = client.post("/rescan")
    assert conflict.status_code == 409 and "already running" in conflict.json()["detail"]
    service.jobs.finish(held)
    assert client.post("/rescan", json={"embed": False}).status_code == 202


def service_view(client):
    return client.app.state.callers.view(None)


def test_status_streams_server_sent_events_until_idle(client):
    service = client.app.state.documents
    job = service.jobs.start("rescan", "")

    def work():
        time.sleep(0.3)
        service.jobs.update(job, phase="compiling", done=1, total=2, current="a.md")
        time.sleep(0.3)
        service.jobs.finish(job, {"ingest": None, "embed": None})

    threading.Thread(target=work, daemon=True).start()
    events = []
    with client.stream("GET", "/status", headers={"Accept": "text/event-stream"}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    statuses = [e for e in events if "busy" in e]
    assert statuses[0]["busy"] is True
    assert any(r["phase"] == "compiling" and r["current"] == "a.md"
               for e in statuses for r in e["running"])
    assert statuses[-1]["busy"] is False and statuses[-1]["recent"][0]["phase"] == "done"
    assert events[-1] == {}          # the idle event closes the stream


def test_document_ids_are_stable_page_digests(client):
    ids = ids_by_page(client)
    assert ids["Zeppelins.md"] == document_id("Zeppelins.md")


def test_uploads_and_deletes_survive_restarts_and_recompiles(vault, client):
    uploaded = client.post("/upload", files=[("files", ("kept.md", b"# Kept\n\nStays.\n",
                                                        "text/markdown"))]).json()
    kept = uploaded["documents"][0]
    doomed = client.post("/documents", json={"title": "Doomed", "text": "Goes."}).json()
    assert client.delete(f"/documents/{doomed['id']}").status_code == 200
    result = CliRunner().invoke(cli, ["-C", str(vault), "ingest", "--force"],
                                catch_exceptions=False)
    assert result.exit_code == 0
    restarted = client_for(vault)
    assert restarted.get(f"/documents/{kept['id']}").json()["created_via_api"] is True
    assert restarted.get(f"/documents/{doomed['id']}").status_code == 404
    assert not (vault / "raw" / doomed["raw"]).exists()
    # deleting a note removed by hand meanwhile still forgets it
    (vault / "raw" / kept["raw"]).unlink()
    assert restarted.delete(f"/documents/{kept['id']}").status_code == 200


def test_a_name_already_taken_in_the_api_folder_gets_a_new_one(vault, client):
    (vault / "raw" / "api-notes").mkdir()
    (vault / "raw" / "api-notes" / "notes.md").write_text("# Someone else's\n")
    before = raw_hashes(vault / "raw")
    made = client.post("/upload", files=[("files", ("notes.md", b"# Mine\n",
                                                    "text/markdown"))]).json()
    assert made["documents"][0]["raw"] == "api-notes/notes-2.md"
    after = raw_hashes(vault / "raw")
    assert {k: v for k, v in after.items() if k in before} == before


@pytest.mark.parametrize("title, file", [("aux", "_aux.md"), ("COM1", "_COM1.md"),
                                         ("NUL.txt", "_NUL.txt.md"), ("Auxiliary", "Auxiliary.md")])
def test_a_title_that_is_a_windows_device_name_gets_a_file_windows_can_hold(client, title, file):
    """POST /documents wrote raw/api-notes/aux.md and COM1.md, which a vault synced to Windows
    cannot hold (an upload of such a name is refused, `pull` puts a '_' before it)."""
    made = client.post("/documents", json={"title": title, "text": "Body."})
    assert made.status_code == 200, made.text
    assert made.json()["raw"] == f"api-notes/{file}"
    assert client.get(f"/documents/{made.json()['id']}").json()["title"] == title


def _upload_streamed(vault, kilobytes: int) -> tuple[httpx.Response, list[int]]:
    """POST /upload one file of ``kilobytes`` kB sent in 1 kB chunks without a
    Content-Length (the Guard counts what arrives); the response and the chunks pulled."""
    app = create_app(Mindgraph.open(vault))
    boundary = "b0undary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; "
            f"filename=\"big.md\"\r\nContent-Type: text/markdown\r\n\r\n").encode()
    pulled = []

    async def chunks():
        yield head
        for _ in range(kilobytes):
            pulled.append(1)
            yield b"x" * 1000
        yield f"\r\n--{boundary}--\r\n".encode()

    async def post():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url=LOCAL) as http:
            return await http.post("/upload", content=chunks(), headers={
                "Content-Type": f"multipart/form-data; boundary={boundary}"})

    return asyncio.run(post()), pulled


def test_an_upload_streamed_past_its_cap_is_refused_while_it_arrives(vault):
    (vault / "mindgraph.yml").write_text(CONFIG + "serve:\n  upload_max_files: 1\n"
                                         "  upload_max_file_bytes: 2048\n"
                                         "  max_body_bytes: 1024\n")
    response, pulled = _upload_streamed(vault, 100)
    assert response.status_code == 413
    assert response.json()["detail"].startswith("The request body is larger than 3072 bytes")
    assert len(pulled) <= 4                  # refused as it arrived, not after all of it
    assert not (vault / "raw" / "api-notes").exists()


def test_an_upload_is_cut_off_at_what_could_compile(vault):
    """Each file may hold at most compile.max_note_bytes (a larger one is refused once the
    form is read), so the stream is cut there, not at serve.upload_max_file_bytes: with the
    defaults one request spooled 2.5 GB to disk before its 413."""
    (vault / "mindgraph.yml").write_text(CONFIG + "serve:\n  upload_max_files: 1\n"
                                         "  upload_max_file_bytes: 1000000\n"
                                         "  max_body_bytes: 1024\n"
                                         "compile:\n  max_note_bytes: 2048\n")
    response, pulled = _upload_streamed(vault, 900)
    assert response.status_code == 413
    assert response.json()["detail"].startswith("The request body is larger than 3072 bytes")
    assert "compile.max_note_bytes" in response.json()["detail"]
    assert len(pulled) <= 4                  # not the 900 kB upload_max_file_bytes allows
    assert not (vault / "raw" / "api-notes").exists()


def test_the_default_upload_takes_50_files_and_refuses_51(vault, client):
    """DESIGN: "upload (50 files, 50 MB each)" — the defaults, not a test's own limits."""
    raw = vault / "raw"
    before = raw_hashes(raw)
    over = client.post("/upload", files=[("files", (f"n{i}.md", b"# N\n", "text/markdown"))
                                         for i in range(51)])
    assert over.status_code == 413, over.text
    assert raw_hashes(raw) == before                     # nothing of it written
    taken = client.post("/upload", files=[("files", (f"n{i}.md", f"# N{i}\n".encode(),
                                                     "text/markdown")) for i in range(50)])
    assert taken.status_code == 200, taken.text
    assert len(raw_hashes(raw)) == len(before) + 50
