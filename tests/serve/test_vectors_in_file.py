"""Hybrid answers over a store whose vectors are read from its file as needed
(stores/row_matrix.py) are the answers over the same store loaded into memory: `search
--hybrid` and REST /smart_search."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app
from mindgraph.stores import embedded
from mindgraph.stores.row_matrix import RowMatrix

TOPICS = ["zebras graze in herds", "stripes confuse biting flies", "the hub links herds",
          "zoos keep zebras in pairs", "foals stand within an hour", "lions hunt at dusk"]
QUERIES = ["why do zebras have stripes", "herds of zebras", "foals", "lions at dusk"]


@pytest.fixture()
def workspace(tmp_path, monkeypatch):
    """Sixty pages embedded with the hashing model; every table keeps a graph (so a reopened
    one reads its vectors from the file)."""
    monkeypatch.setattr(embedded, "EXACT_BELOW", 1)
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for i in range(60):
        (wiki / f"Note {i}.md").write_text(
            f"# Note {i}\n\n{TOPICS[i % 6]}, note {i}. See [[Note {(i + 1) % 60}]].\n\n"
            f"## More\n\n{TOPICS[(i * 5) % 6]} and {TOPICS[(i + 2) % 6]}.\n")
    done = CliRunner().invoke(cli, ["embed", "-C", str(tmp_path)])
    assert done.exit_code == 0, done.output
    return tmp_path


def hybrid(workspace) -> list:
    out = []
    for query in QUERIES:
        result = CliRunner().invoke(cli, ["search", "--hybrid", query, "--json", "-C",
                                          str(workspace)])
        assert result.exit_code == 0, result.output
        out.append(json.loads(result.output)["results"])
    return out


def test_hybrid_answers_over_vectors_in_the_file_are_those_over_loaded_ones(workspace,
                                                                       monkeypatch):
    real = RowMatrix.from_file
    made = []

    def counted(cls, handle):
        matrix = real(handle)
        made.append(matrix is not None)
        return matrix
    monkeypatch.setattr(RowMatrix, "from_file", classmethod(counted))
    from_disk = hybrid(workspace)
    assert made and all(made)
    assert any("vector" in hit["sources"] for answer in from_disk for hit in answer)

    mg = Mindgraph(load_settings(workspace))
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    rest = [client.get("/smart_search", params={"q": q}).json() for q in QUERIES]
    table = mg.vector_store()._tables[mg.embedding_provider().model_version]
    assert table.vectors.in_file
    assert all("vector" in answer["timings_ms"] for answer in rest)
    assert [answer["results"] for answer in rest] == from_disk
    mg.close()

    monkeypatch.setattr(RowMatrix, "from_file", classmethod(lambda cls, handle: None))
    assert hybrid(workspace) == from_disk
