"""GET /page lists a page's sections up to sections_limit (1,000 by default) from
sections_offset, saying sections_total only when it did not list them all: a page of fewer
sections is answered as before (REST in-process, over a compiled workspace)."""

from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"


def test_sections_are_paged_past_the_limit_and_small_pages_are_unchanged(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Many.md").write_text(
        "# Many\n\n" + "".join(f"## kettle {i}\nword\n" for i in range(1_200)))
    (tmp_path / "raw" / "Few.md").write_text("# Few\n\n## One\nword\n\n## Two\nword\n")
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "ingest"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    client = TestClient(create_app(Mindgraph.open(tmp_path)), base_url=LOCAL)

    few = client.get("/page", params={"page": "Few"}).json()
    assert "sections_total" not in few
    assert [s["heading"] for s in few["sections"]][-2:] == ["One", "Two"]

    first = client.get("/page", params={"page": "Many"}).json()
    total = first["sections_total"]
    assert total >= 1_200 and len(first["sections"]) == 1_000
    rest = client.get("/page", params={"page": "Many", "sections_offset": 1_000}).json()
    assert rest["sections_total"] == total and len(rest["sections"]) == total - 1_000
    ids = [s["id"] for s in first["sections"] + rest["sections"]]
    assert len(set(ids)) == total                      # every section once, none lost
    whole = client.get("/page", params={"page": "Many", "sections_limit": 10_000}).json()
    assert "sections_total" not in whole and [s["id"] for s in whole["sections"]] == ids
    too_many = client.get("/page", params={"page": "Many", "sections_limit": 10_001})
    assert too_many.status_code == 422
