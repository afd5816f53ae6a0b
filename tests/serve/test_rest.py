"""The REST API in-process (no server started): statuses, auth, bounds, reindex, freshness."""

import asyncio
import threading
import time

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import FreshnessGate, create_app

LOCAL = "http://127.0.0.1:8765"     # the Host a loopback server answers to


def local(app):
    """A test client that calls the app as a local client would (Host 127.0.0.1)."""
    return TestClient(app, base_url=LOCAL)


@pytest.fixture
def workspace(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Catalog.md").write_text("---\ntitle: Trunk Catalog\ndate: 2024-02-01\n---\n"
                                     "Bookmarks of trunks. See [[Packing]].\n\n## Data\n"
                                     "```json\n{\"n\": 1}\n```\n")
    (wiki / "Packing.md").write_text("---\ntitle: Packing\n---\nBack to [[Catalog]].\n")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "packing.py").write_text("def pack_trunk():\n    pass\n")
    return tmp_path


@pytest.fixture
def client(workspace):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    return local(create_app(mg))


def test_health_and_page(client):
    assert client.get("/health").json()["pages"] == 2
    page = client.get("/page", params={"name": "trunk catalog"}).json()
    assert page["path"] == "Catalog.md"
    assert [o["page"] for o in page["outgoing"]] == ["Packing.md"]
    assert [b["page"] for b in page["backlinks"]] == ["Packing.md"]
    assert page["sections"][1]["id"] == "data"


def test_unknown_page_is_404_json(client):
    response = client.get("/page", params={"name": "Nope"})
    assert response.status_code == 404
    assert response.json()["error"] == "NotFoundError"


def test_bad_parameters_are_422(client):
    assert client.get("/page").status_code == 422
    assert client.get("/timeline", params={"concept": "x", "limit": 0}).status_code == 422
    assert client.get("/timeline", params={"concept": "x", "limit": 10**6}).status_code == 422
    assert client.get("/timeline", params={"concept": "x", "since": "2024-13-45"}).status_code \
        == 422


def test_section_extract_timeline_check_coverage(client):
    assert client.get("/section", params={"page": "Catalog", "id": "data"}).json()["heading"] \
        == "Data"
    assert client.get("/extract", params={"page": "Catalog"}).json()["data"] == {"n": 1}
    timeline = client.get("/timeline", params={"concept": "bookmarks"}).json()
    assert [e["path"] for e in timeline["entries"]] == ["Catalog.md"]
    backwards = client.get("/timeline", params={"concept": "bookmarks", "since": "2025-01-01",
                                                "until": "2020-01-01"})
    assert backwards.status_code == 400 and "swap them" in backwards.json()["detail"]
    assert client.get("/timeline", params={"concept": " / "}).status_code == 422
    assert client.get("/check").json()["errors"] == 0
    assert client.get("/coverage", params={"codebase": "code"}).json()["total"] == 1
    assert client.get("/coverage", params={"codebase": "../.."}).status_code == 404
    no_code = client.get("/coverage", params={"codebase": "wiki"})
    assert no_code.status_code == 400 and "no source files" in no_code.json()["detail"]


def test_token_required_when_configured(workspace):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    client = local(create_app(mg, token="s3cret"))
    assert client.get("/health").status_code == 200
    assert client.get("/page", params={"name": "Packing"}).status_code == 401
    wrong = client.get("/page", params={"name": "Packing"},
                       headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    ok = client.get("/page", params={"name": "Packing"},
                    headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200


def test_a_401_says_whether_the_token_is_missing_or_wrong_and_names_the_variable(workspace):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    client = local(create_app(mg, token="s3cret"))
    missing = client.get("/page", params={"name": "Packing"}).json()["detail"]
    wrong = client.get("/page", params={"name": "Packing"},
                       headers={"Authorization": "Bearer nope"}).json()["detail"]
    basic = client.get("/stats", headers={"Authorization": "Basic nope"}).json()["detail"]
    assert missing.startswith("No Authorization header")
    assert wrong.startswith("The token in 'Authorization: Bearer <token>' is not recognised")
    assert basic.startswith("The Authorization header is not 'Bearer <token>'")
    for detail in (missing, wrong, basic):
        assert "MINDGRAPH_API_TOKEN" in detail and "scopes.identities" not in detail
        assert "s3cret" not in detail
    # /health answers everyone; the page count with a valid token, and why not without one
    health = {name: client.get("/health", headers=headers).json() for name, headers in (
        ("none", {}), ("wrong", {"Authorization": "Bearer nope"}),
        ("basic", {"Authorization": "Basic s3cret"}),
        ("valid", {"Authorization": "Bearer s3cret"}))}
    assert (health["valid"]["pages"], health["valid"]["token"]) == (2, "accepted")
    assert (health["none"]["pages"], health["none"]["token"]) == (None, "missing")
    assert (health["wrong"]["pages"], health["wrong"]["token"]) == (None, "not recognised")
    # as the 401 says: the header is not 'Bearer <token>' (it said "not recognised")
    assert (health["basic"]["pages"], health["basic"]["token"]) == (None, "not bearer")
    open_server = local(create_app(mg)).get("/health").json()
    assert (open_server["pages"], open_server["token"]) == (2, "not needed")


def test_openapi_document_lists_routes(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/health", "/page", "/section", "/timeline", "/coverage"} <= set(paths)


def test_serve_refuses_public_bind_without_token(workspace, monkeypatch):
    monkeypatch.delenv("MINDGRAPH_API_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["serve", "-C", str(workspace), "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "MINDGRAPH_API_TOKEN" in result.output


def test_serve_refuses_a_busy_port_and_a_folder_that_is_no_workspace(workspace, tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = CliRunner().invoke(cli, ["serve", "-C", str(workspace), "--port", str(port)])
        assert busy.exit_code == 2 and f"Port {port} on 127.0.0.1 is already in use" in \
            busy.output and "--port N" in busy.output
        mcp = CliRunner().invoke(cli, ["mcp", "-C", str(workspace), "--transport", "http",
                                       "--port", str(port)])
        assert mcp.exit_code == 2 and "already in use" in mcp.output
    nowhere = tmp_path / "not-a-workspace"
    nowhere.mkdir()
    result = CliRunner().invoke(cli, ["serve", "-C", str(nowhere)])
    assert result.exit_code == 2 and "not a mindgraph workspace" in result.output


def test_search_related_path_communities_and_usage_log(client, workspace):
    found = client.get("/search", params={"q": "trunks"}).json()
    assert found["results"][0]["page"] == "Catalog.md"
    assert client.get("/search", params={"q": "x", "limit": 101}).status_code == 422
    related = client.get("/related", params={"page": "Packing"}).json()
    assert [r["path"] for r in related["related"]] == ["Catalog.md"]
    assert client.get("/path", params={"source": "Catalog", "target": "Packing"}).json() == \
        {"path": ["Catalog.md", "Packing.md"],
         "steps": [{"from": "Catalog.md", "to": "Packing.md", "direction": "both"}]}
    groups = client.get("/communities").json()["communities"]
    assert sorted(m for g in groups for m in g["members"]) == ["Catalog.md", "Packing.md"]
    logged = (workspace / ".mindgraph" / "usage.jsonl").read_text().splitlines()
    assert '"interface": "rest"' in logged[0] and '"trunks"' in logged[0]


def test_server_sees_edits_before_the_next_query(client, workspace):
    assert client.get("/search", params={"q": "zeppelin"}).json()["count"] == 0
    (workspace / "wiki" / "Packing.md").write_text("---\ntitle: Packing\n---\n"
                                                   "Pack the zeppelin. [[Catalog]]\n")
    hits = client.get("/search", params={"q": "zeppelin"}).json()["results"]
    assert [h["page"] for h in hits] == ["Packing.md"]
    (workspace / "wiki" / "Packing.md").unlink()
    assert client.get("/search", params={"q": "zeppelin"}).json()["count"] == 0
    assert client.get("/page", params={"name": "Packing"}).status_code == 404


def test_errors_share_one_json_shape(client):
    bad = client.get("/search", params={"q": "", "limit": 0})
    assert bad.status_code == 422
    body = bad.json()
    assert body["error"] == "ValidationError" and "q:" in body["detail"]
    assert {tuple(e["loc"]) for e in body["errors"]} == {("query", "q"), ("query", "limit")}
    assert client.get("/nowhere").json()["error"] == "HTTPError"
    assert client.get("/reindex").status_code == 405
    date = client.get("/timeline", params={"concept": "x", "since": "1700000000"})
    assert date.status_code == 422 and "YYYY-MM-DD" in date.json()["detail"]


def test_hostile_folder_names_are_404_not_500(client):
    for name in ("\x00", "a" * 5000, "/etc", "code/../.."):
        response = client.get("/coverage", params={"codebase": name[:1000]})
        assert response.status_code == 404, name[:20]
        assert response.json()["error"] == "NotFoundError"


def test_missing_wiki_folder_is_503(tmp_path):
    client = local(create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path))))
    response = client.get("/stats")
    assert response.status_code == 503
    assert "mindgraph ingest" in response.json()["detail"]


def test_openapi_documents_every_response(client):
    document = client.get("/openapi.json").json()
    assert {"/health", "/stats", "/search", "/smart_search", "/page", "/section", "/related",
            "/communities", "/path", "/timeline", "/coverage", "/reindex",
            "/context"} <= set(document["paths"])
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            success = next(c for c in operation["responses"] if c.startswith("2"))  # 202: rescan
            content = operation["responses"][success]["content"]
            if "application/json" in content:
                assert "$ref" in content["application/json"]["schema"], (method, path)
            else:                                       # a file: bytes of its media types
                assert content and all(c["schema"] == {"type": "string", "format": "binary"}
                                       for c in content.values()), (method, path)
            for code in ("422", "503"):
                error = operation["responses"][code]["content"]["application/json"]["schema"]
                assert error == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, code)
    assert "404" in document["paths"]["/page"]["get"]["responses"]
    assert "409" in document["paths"]["/reindex"]["post"]["responses"]


def test_server_timing_header(client):
    timing = client.get("/health").headers["server-timing"]
    assert timing.startswith("app;dur=") and float(timing.split("=")[1]) >= 0


@pytest.fixture
def raw_workspace(workspace):
    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n"
                                             "  dimension: 64\n")
    (workspace / "raw").mkdir()
    (workspace / "raw" / "zeppelins.md").write_text("# Zeppelins\nAirships that carry "
                                                    "trunks across the sea.\n")
    return workspace


def test_reindex_compiles_embeds_and_serves_the_new_page(raw_workspace):
    mg = Mindgraph.open(raw_workspace)
    client = local(create_app(mg))
    assert client.get("/search", params={"q": "airships"}).json()["count"] == 0
    dry = client.post("/reindex", params={"dry_run": True}).json()
    assert dry["ingest"]["dry_run"] and dry["embed"]["dry_run"]
    assert not (raw_workspace / "wiki" / "zeppelins.md").exists()
    done = client.post("/reindex")
    assert done.status_code == 200
    report = done.json()
    assert report["ingest"]["ingested"] == 1 and report["ingest"]["ok"]
    assert report["embed"]["embedded"] >= 3 and report["embed"]["pages"] == 3
    hits = client.get("/smart_search", params={"q": "airships"}).json()
    assert hits["results"][0]["page"] == "zeppelins.md"
    assert "vector" in hits["results"][0]["retrievers"] and hits["degradation"] == []
    again = client.post("/reindex").json()
    assert again["ingest"]["ingested"] == 0 and again["embed"]["embedded"] == 0


def test_reindex_takes_its_options_as_a_json_body_too(raw_workspace):
    client = local(create_app(Mindgraph.open(raw_workspace)))
    dry = client.post("/reindex", json={"embed": False, "dry_run": True})
    assert dry.status_code == 200, dry.text
    assert dry.json()["ingest"]["dry_run"] and dry.json()["embed"] is None
    assert not (raw_workspace / "wiki" / "zeppelins.md").exists()
    for bad in ('{"embed": tru', '{"dry_run": "maybe"}', '{"dryrun": true}', '[1]'):
        answer = client.post("/reindex", content=bad,
                             headers={"content-type": "application/json"})
        assert answer.status_code == 422, (bad, answer.text)
    broken = client.post("/reindex", content='{"dry_run": tru',
                         headers={"content-type": "application/json"})
    assert "body is not valid JSON (at character" in broken.json()["detail"]
    clash = client.post("/reindex", params={"dry_run": False}, json={"dry_run": True})
    assert clash.status_code == 422 and "give it once" in clash.json()["detail"]
    assert not (raw_workspace / "wiki" / "zeppelins.md").exists()    # nothing ran


def test_reindex_without_raw_folder_only_embeds(workspace):
    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    client = local(create_app(Mindgraph.open(workspace)))
    report = client.post("/reindex").json()
    assert report["ingest"] is None and "no raw folder" in report["notes"][0]
    assert report["embed"]["pages"] == 2


def test_reindex_needs_the_token(raw_workspace):
    client = local(create_app(Mindgraph.open(raw_workspace), token="s3cret"))
    assert client.post("/reindex").status_code == 401
    ok = client.post("/reindex", params={"embed": False},
                     headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200 and ok.json()["embed"] is None


def test_second_concurrent_reindex_gets_409_at_once(raw_workspace):
    mg = Mindgraph.open(raw_workspace)
    app = create_app(mg)

    async def race():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as http:
            # hold the core's lock, as a long compile would: the reindex that gets in first
            # blocks inside ingest; the other must be refused without waiting for it
            with mg._lock:
                calls = [asyncio.create_task(http.post("/reindex")) for _ in range(2)]
                done, pending = await asyncio.wait(calls, timeout=10,
                                                   return_when=asyncio.FIRST_COMPLETED)
                refused = done.pop().result()
            finished = await pending.pop()
        return refused, finished

    refused, finished = asyncio.run(race())
    assert refused.status_code == 409 and "already running" in refused.json()["detail"]
    assert finished.status_code == 200 and finished.json()["ingest"]["ingested"] == 1


def test_freshness_gate_shares_one_scan_among_waiting_requests():
    scans = []

    def scan():
        scans.append(time.monotonic_ns())
        time.sleep(0.05)

    gate = FreshnessGate(scan)
    gate.ensure(time.monotonic_ns())
    assert len(scans) == 1
    arrived = time.monotonic_ns()
    threads = [threading.Thread(target=gate.ensure, args=(arrived,)) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(scans) == 2 and scans[1] >= arrived      # ten requests, one new scan
    gate.ensure(arrived)
    assert len(scans) == 2
    gate.ensure(time.monotonic_ns())                     # arrived after that scan began
    assert len(scans) == 3


def test_data_block_that_does_not_parse_is_409_missing_block_404(client, workspace):
    (workspace / "wiki" / "Broken.md").write_text("# Broken\n```yaml\nkey: [unclosed\n```\n")
    broken = client.get("/extract", params={"page": "Broken"})
    assert broken.status_code == 409
    assert broken.json()["detail"].startswith("Broken.md:3:")
    assert client.get("/extract", params={"page": "Broken", "block": 2}).status_code == 404


def test_queries_are_embedded_before_the_core_queue(raw_workspace):
    """/smart_search embeds its query on the prepare pool, outside the core lock; the search
    then finds the vector cached, and concurrent answers equal sequential ones."""
    mg = Mindgraph.open(raw_workspace)
    client = local(create_app(mg))
    client.post("/reindex")
    client.get("/smart_search", params={"q": "warm up"})
    queries = [f"airships carrying {word}" for word in
               ("trunks", "bookmarks", "data", "packing", "sea", "catalog", "zeppelins", "json")]
    alone = Mindgraph.open(raw_workspace)
    sequential = [alone.smart_search(q).to_dict()["results"] for q in queries]
    provider = mg.hybrid_retriever().vector.provider
    embedded: list[tuple[str, str]] = []
    real = provider.embed_queries

    def recording(texts):
        embedded.extend((t, threading.current_thread().name) for t in texts)
        return real(texts)

    provider.embed_queries = recording
    # before the first search nothing is open: preparing is a no-op, never an error
    Mindgraph.open(raw_workspace).prepare_query("anything")

    async def together():
        transport = httpx.ASGITransport(app=create_app(mg))
        async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as http:
            return await asyncio.gather(*(http.get("/smart_search", params={"q": q})
                                          for q in queries))

    answers = asyncio.run(together())
    assert all(a.status_code == 200 for a in answers)
    assert sorted(t for t, _ in embedded) == sorted(queries)   # each query once
    assert all(name.startswith("mindgraph-prepare") for _, name in embedded)
    # REST adds each page's trust to a result (trust/answer.py); the ranking is the core's
    assert [[{k: v for k, v in r.items() if k != "trust"} for r in a.json()["results"]]
            for a in answers] == sequential


def test_queries_are_answered_while_a_reindex_embeds(raw_workspace):
    """The core lock is not held during model calls: a search started while /reindex waits
    on the embedding model finishes before the reindex does."""
    mg = Mindgraph.open(raw_workspace)
    app = create_app(mg)
    local(app).get("/smart_search", params={"q": "warm up"})
    provider = mg.embedding_provider()
    real = provider.embed_documents
    inside, release = threading.Event(), threading.Event()

    def blocking(texts):
        inside.set()
        assert release.wait(10)
        return real(texts)

    provider.embed_documents = blocking

    async def overlap():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as http:
            reindex = asyncio.create_task(http.post("/reindex"))
            while not inside.is_set():
                await asyncio.sleep(0.01)
            search = await asyncio.wait_for(http.get("/smart_search",
                                                     params={"q": "trunks catalog"}), 10)
            still_running = not reindex.done()
            release.set()
            return search, still_running, await reindex

    search, still_running, reindex = asyncio.run(overlap())
    assert search.status_code == 200 and search.json()["results"]
    assert still_running
    assert reindex.status_code == 200 and reindex.json()["ingest"]["ingested"] == 1
    after = local(app).get("/smart_search", params={"q": "airships"}).json()
    assert after["results"][0]["page"] == "zeppelins.md"


def test_the_core_is_warm_before_the_first_request(raw_workspace):
    mg = Mindgraph.open(raw_workspace)
    mg.embed()
    mg.forget_vectors()
    with local(create_app(mg)):                  # runs the lifespan (start and stop)
        deadline = time.monotonic() + 10
        while mg._hybrid is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert mg._hybrid is not None and mg._hybrid.vector is not None
        assert mg._hybrid.vector.is_cached("warm up")


def test_a_missing_wiki_does_not_stop_the_server_from_starting(tmp_path):
    with local(create_app(Mindgraph.open(tmp_path))) as client:
        response = client.get("/smart_search", params={"q": "anything"})
        assert response.status_code == 503 and "wiki" in response.json()["detail"].lower()


def test_path_follows_links_unless_asked_to_step_over_shared_tags(workspace):
    wiki = workspace / "wiki"
    (wiki / "Tagged one.md").write_text("---\ntags: [rare]\n---\nNo links here.\n")
    (wiki / "Tagged two.md").write_text("---\ntags: [rare]\n---\nNone here either.\n")
    client = local(create_app(Mindgraph.open(workspace)))
    route = {"source": "Tagged one", "target": "Tagged two"}
    assert client.get("/path", params=route).status_code == 404      # no chain of links
    assert client.get("/path", params={**route, "via_tags": True}).json() == \
        {"path": ["Tagged one.md", "Tagged two.md"],
         "steps": [{"from": "Tagged one.md", "to": "Tagged two.md", "direction": "tag"}]}


def test_path_says_which_way_each_step_is_linked(workspace):
    """The chain follows links either way; {"path": [...]} alone read as "each page links
    the next" (on the Help vault Home, Style guide, Canvas, though Style guide links Home)."""
    (workspace / "wiki" / "Crate.md").write_text("# Crate\n\nHolds [[Packing]].\n")
    client = local(create_app(Mindgraph.open(workspace)))
    answer = client.get("/path", params={"source": "Catalog", "target": "Crate"}).json()
    assert answer["path"] == ["Catalog.md", "Packing.md", "Crate.md"], answer
    assert answer["steps"][1] == {"from": "Packing.md", "to": "Crate.md", "direction": "in"}
    assert answer["steps"][0]["direction"] == "both"            # each links the other
    assert "steps" in client.get("/openapi.json").json()["components"]["schemas"]["PathOut"][
        "properties"]


def test_the_page_is_page_and_a_section_is_section_id_and_old_names_still_work(client):
    new = client.get("/page", params={"page": "trunk catalog"})
    old = client.get("/page", params={"name": "trunk catalog"})
    assert new.status_code == old.status_code == 200 and new.json() == old.json()
    assert client.get("/page", params={"page": "Packing", "name": "Catalog"}).json()["path"] \
        == "Packing.md"                                   # both given: the new name wins
    section = client.get("/section", params={"page": "Catalog", "section_id": "data"})
    old_section = client.get("/section", params={"page": "Catalog", "id": "data"})
    assert section.status_code == 200 and section.json() == old_section.json()
    assert section.json()["heading"] == "Data"
    paths = client.get("/openapi.json").json()["paths"]
    assert [p["name"] for p in paths["/page"]["get"]["parameters"]] == \
        ["page", "sections_offset", "sections_limit"]
    assert [p["name"] for p in paths["/section"]["get"]["parameters"]] == ["page", "section_id"]
    assert client.get("/page").status_code == 422


def test_a_query_parameter_given_twice_is_422_and_nothing_runs(tmp_path):
    """`embed=junk&embed=0` used to run a reindex with the last value (the schema fuzzer)."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "idea.md").write_text("# Idea\nA trunk with wheels.\n")
    mg = Mindgraph(settings_from_dict({}, base_dir=tmp_path))
    client = TestClient(create_app(mg), base_url=LOCAL)
    answer = client.post("/reindex?embed=junk&embed=0", json={})
    assert answer.status_code == 422
    assert "embed" in answer.json()["detail"]
    assert not (tmp_path / "wiki" / "idea.md").exists()
    assert client.get("/search", params=[("q", "trunk"), ("q", "wheels")]).status_code == 422


def test_communities_leave_out_lone_pages_as_the_cli_does(client, workspace):
    (workspace / "wiki" / "Lone.md").write_text("---\ntitle: Lone\n---\nNo links here.\n")
    default = client.get("/communities").json()
    assert [c["size"] for c in default["communities"]] == [2] and default["count"] == 1
    every = client.get("/communities", params={"min_size": 1}).json()
    assert sorted(len(c["members"]) for c in every["communities"]) == [1, 2] and every["count"] == 2
    assert client.get("/communities", params={"min_size": 0}).status_code == 422


def test_an_unexpected_error_is_a_json_500(workspace):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    app = create_app(mg)

    def broken(*args, **kwargs):
        raise RuntimeError("the state folder went away")

    mg.search = broken
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as client:
        answer = client.get("/search", params={"q": "trunks"})
    assert answer.status_code == 500 and answer.headers["content-type"] == "application/json"
    # its text (paths, internals) stays in the server's log
    assert answer.json() == {"error": "InternalError",
                             "detail": "An internal error (RuntimeError) stopped this request; "
                                       "the server's operator can read it in the server's log."}


def test_a_json_body_that_is_not_an_object_names_the_route(client):
    for path in ("/reindex", "/documents"):
        answer = client.post(path, json=[])
        assert answer.status_code == 422, path
        detail = answer.json()["detail"]
        assert f"send a JSON object, not list (the fields of POST {path} are in " \
               f"/openapi.json)" in detail, detail


def test_a_name_of_two_pages_is_409_with_the_candidates_over_rest_and_clear_over_mcp(workspace):
    import anyio
    from mcp import Client

    from mindgraph.serve.mcp import create_mcp_server

    for folder in ("Work", "Home"):
        (workspace / "wiki" / folder).mkdir()
        (workspace / "wiki" / folder / "Templates.md").write_text(f"# Templates\n\n{folder}.\n")
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    response = local(create_app(mg)).get("/page", params={"page": "Templates"})
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "AmbiguousName"
    assert body["candidates"] == ["Home/Templates.md", "Work/Templates.md"]
    assert "'Templates' is the file name of 2 pages" in body["detail"]
    assert local(create_app(mg)).get("/page", params={"page": "Nope"}).status_code == 404

    async def call():
        async with Client(create_mcp_server(mg)) as client:
            return await client.call_tool("get_page", {"page": "Templates"})
    result = anyio.run(call)
    text = result.content[0].text
    assert result.is_error and "Home/Templates.md, Work/Templates.md" in text
    assert "name the page by its path, e.g. 'Home/Templates.md'" in text


def test_path_steps_are_labelled_on_the_graph_the_path_was_found_in(workspace, monkeypatch):
    """A refresh that lands between finding the chain and labelling its steps (an ingest
    dropping the links) must wait: labelled on the new graph a step read "tag", a link that
    is not there in the path's graph nor a shared tag in either."""
    import mindgraph.graph.query as graph_query

    mg = Mindgraph.open(workspace)
    client = local(create_app(mg))
    label, refreshed = graph_query.step_directions, threading.Event()

    def refresh_meanwhile():
        wiki = workspace / "wiki"
        (wiki / "Catalog.md").write_text("# Catalog\n\nNo links now.\n")
        (wiki / "Packing.md").write_text("# Packing\n\nNone here either.\n")
        mg.refresh()
        refreshed.set()

    def let_a_refresh_in_then_label(*args, **kwargs):
        threading.Thread(target=refresh_meanwhile, daemon=True).start()
        refreshed.wait(1.0)         # it gets in now unless this answer holds its snapshot
        return label(*args, **kwargs)

    monkeypatch.setattr(graph_query, "step_directions", let_a_refresh_in_then_label)
    answer = client.get("/path", params={"source": "Catalog", "target": "Packing"}).json()
    assert answer["steps"] == [{"from": "Catalog.md", "to": "Packing.md",
                                "direction": "both"}], answer
    assert refreshed.wait(5.0)      # and it ran once the answer was out
