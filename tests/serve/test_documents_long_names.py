"""Uploads and titles in Chinese or Japanese: a file name is cut in UTF-8 bytes, not in
characters (120 CJK characters are 360 bytes, past the 255 a file system takes)."""

from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app


def test_a_long_cjk_upload_name_and_title_fit_a_file_name(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Seed.md").write_text("# Seed\n\nA note.\n")
    assert CliRunner().invoke(cli, ["-C", str(tmp_path), "ingest"]).exit_code == 0
    client = TestClient(create_app(Mindgraph.open(tmp_path)), base_url="http://127.0.0.1:8765")
    name = "長い題名の覚え書き" * 14 + ".md"                    # 126 characters, 381 bytes
    made = [client.post("/upload", files=[("files", (name, "# 覚え書き\n".encode(),
                                                     "text/markdown"))]) for _ in range(2)]
    assert [m.status_code for m in made] == [200, 200], made[-1].text
    # 80 characters of CJK Extension B, 4 bytes each, were a 320-byte title slug
    titled = client.post("/documents", json={"title": "\U00020000" * 100, "text": "Body."})
    assert titled.status_code == 200, titled.text
    raws = [m.json()["documents"][0]["raw"] for m in made] + [titled.json()["raw"]]
    assert len(set(raws)) == 3
    for raw in raws:
        assert len(raw.rsplit("/", 1)[-1].encode()) <= 255 and (tmp_path / "raw" / raw).is_file()
