"""POST /reindex with dry_run changes nothing: without a raw folder it re-read the wiki into
the server's page cache (the indexes and their files under .mindgraph updated, the new page
embedded), though a dry run only says what a reindex would do."""

import hashlib

from fastapi.testclient import TestClient

from hashing_workspace import hashing_workspace

from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app


def _state(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_dry_run_reindex_changes_nothing_without_a_raw_folder(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n"
                                            "  dimension: 64\n")
    (tmp_path / "wiki" / "Airships.md").write_text("# Airships\n\nAirships carry trunks.\n")
    mg = Mindgraph.open(tmp_path)
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    assert client.post("/reindex").json()["embed"]["embedded"] == 1
    client.get("/smart_search", params={"q": "airships"})     # vectors in use: kept current
    (tmp_path / "wiki" / "Balloons.md").write_text("# Balloons\n\nBalloons float by.\n")
    before = _state(tmp_path / ".mindgraph")

    dry = client.post("/reindex", params={"dry_run": True})
    assert dry.status_code == 200, dry.text
    assert dry.json()["embed"]["dry_run"] and dry.json()["ingest"] is None
    assert _state(tmp_path / ".mindgraph") == before
    assert set(mg._cache.pages) == {"Airships.md"}      # the server's page cache, as it was

    # a real one reads the new page (and the next query would have)
    done = client.post("/reindex").json()
    assert done["notes"][0].endswith("nothing to compile, only the wiki was re-read")
    assert client.get("/search", params={"q": "balloons"}).json()["count"] == 1


def test_a_dry_run_reindex_with_a_raw_folder_writes_nothing_in_the_workspace(tmp_path):
    # the plan's chunk memo (.mindgraph/chunks-*.json) and the page cache were written
    hashing_workspace(tmp_path, 3)
    (tmp_path / "raw" / "Extra.md").write_text("# Extra\n\nA note added since.\n")
    before = _state(tmp_path)
    client = TestClient(create_app(Mindgraph.open(tmp_path)), base_url="http://127.0.0.1:8765")

    dry = client.post("/reindex", params={"dry_run": True})
    assert dry.status_code == 200, dry.text
    assert dry.json()["ingest"]["ingested"] == 1 and dry.json()["embed"]["embedded"] == 6
    assert _state(tmp_path) == before
