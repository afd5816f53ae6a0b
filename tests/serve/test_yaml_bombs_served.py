"""An agent's large YAML is refused from libyaml's events, before PyYAML builds anything
(REST in-process, over a compiled workspace).

A data block read by GET /extract went through PyYAML's pure-Python parser, whole, before its
values were counted: 1.9 MB of ``kN: v`` lines held the query lane, every agent's searches
behind it, 18.7 s (bench/bench_note_bombs.py); a frontmatter libyaml refused was read again
by that parser to word the error: 28 s of the write lane for one uploaded note."""

from click.testing import CliRunner
from fastapi.testclient import TestClient

import yaml

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
LINES = 20_000          # past the 10,000-value budget, and past 16 KiB


def served(base, monkeypatch):
    """A compiled workspace's REST client; PyYAML's pure-Python scanner fails the test if it
    runs, and every YAML value built is counted."""
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    (base / "raw").mkdir()
    (base / "raw" / "Kept.md").write_text("# Kept\n\nTrunks stay.\n")
    assert CliRunner().invoke(cli, ["-C", str(base), "ingest"]).exit_code == 0
    client = TestClient(create_app(Mindgraph.open(base)), base_url=LOCAL)
    built = [0]
    construct = yaml.constructor.BaseConstructor.construct_object

    def counted(self, node, deep=False):
        built[0] += 1
        return construct(self, node, deep)

    def pure_python_scanner(*args, **kwargs):
        raise AssertionError("read by PyYAML's pure-Python scanner")

    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_object", counted)
    monkeypatch.setattr(yaml.scanner.Scanner, "check_token", pure_python_scanner)
    return client, built


def test_extract_refuses_a_data_block_past_the_budget_before_building_it(tmp_path,
                                                                          monkeypatch):
    client, built = served(tmp_path, monkeypatch)
    keys = "".join(f"k{i}: v\n" for i in range(LINES)).encode()
    upload = client.post("/upload", files=[("files", ("keys.yaml", keys, "application/yaml"))])
    assert upload.status_code == 200, upload.text
    page = upload.json()["documents"][0]["page"]
    built[0] = 0
    answer = client.get("/extract", params={"page": page})
    assert answer.status_code == 409, answer.text
    assert "field 'k9999' is past the 10,000-value limit for a data block" in answer.text
    assert built[0] < 100      # frontmatter of pages, not the block's 20,000 fields
    # a list past the budget is still told by its length
    items = "".join(f"- item {i}\n" for i in range(LINES)).encode()
    upload = client.post("/upload", files=[("files", ("items.yaml", items, "application/yaml"))])
    answer = client.get("/extract", params={"page": upload.json()["documents"][0]["page"]})
    assert answer.status_code == 409, answer.text
    assert "the document holds 20,000 items, past the 10,000-value limit" in answer.text
    # one under the budget reads as before
    fits = "".join(f"k{i}: {'v' * 20}\n" for i in range(5_000)).encode()
    upload = client.post("/upload", files=[("files", ("fits.yaml", fits, "application/yaml"))])
    answer = client.get("/extract", params={"page": upload.json()["documents"][0]["page"]})
    assert answer.status_code == 200 and answer.json()["data"]["k4999"] == "v" * 20


def test_an_upload_whose_long_frontmatter_is_broken_is_not_read_twice(tmp_path, monkeypatch):
    client, built = served(tmp_path, monkeypatch)
    broken = ("---\n" + "".join(f"k{i}: v\n" for i in range(LINES)) + "bad: [\n---\n"
              "# Broken\n\nbody\n").encode()
    answer = client.post("/upload", files=[("files", ("broken.md", broken, "text/markdown"))])
    assert answer.status_code == 200, answer.text
    document = answer.json()["documents"][0]
    assert not document["searchable"]
    assert "broken.md:10001: frontmatter field 'k9999' is past the 10,000-value limit for a " \
           "note's frontmatter" in answer.text
    assert built[0] < 100      # the other pages' frontmatter, not the note's 20,000 fields
    # a long broken one within the budget says libyaml's words, at the line it is on
    short = ("---\n" + "".join(f"k{i}: {'v' * 40}\n" for i in range(2_000)) + "bad: [\n---\n"
             "# Short\n").encode()
    answer = client.post("/upload", files=[("files", ("short.md", short, "text/markdown"))])
    assert "short.md:2002: frontmatter is not valid YAML (did not find expected node " \
           "content)" in answer.text, answer.text


def test_extract_of_a_json_block_nested_past_pythons_parser_is_a_clear_409(tmp_path,
                                                                          monkeypatch):
    # it was a 500 ("An internal error (RecursionError)")
    client, _ = served(tmp_path, monkeypatch)
    deep = ("[" * 5_000 + "]" * 5_000).encode()
    upload = client.post("/upload", files=[("files", ("deep.json", deep, "application/json"))])
    answer = client.get("/extract", params={"page": upload.json()["documents"][0]["page"]})
    assert answer.status_code == 409, answer.text
    assert "raw/api-notes/deep-json.md:8: the ```json block nests too deeply" in answer.text


def test_a_refused_extract_names_the_notes_line_without_parsing_the_note_as_a_page(
        tmp_path, monkeypatch):
    # the error's raw line came from parsing the whole raw note as a page again (headings,
    # sections, links): 2.5 s of the query lane per refused extract of a note of 85,000
    # headings, as often as its author asked
    from mindgraph.page import parse

    client, _ = served(tmp_path, monkeypatch)
    body = ("---\ntags: [a]\n---\n# Bomb\n\nIntro.\n\n```json\n{\"a\": 1}\n```\n\n```json\n"
            "{bad\n```\n" + "".join(f"## kettle {i}\nword\n" for i in range(50)))
    upload = client.post("/upload", files=[("files", ("Bomb.md", body.encode(), "text/markdown"))])
    page = upload.json()["documents"][0]["page"]
    client.get("/extract", params={"page": page})          # the vault is loaded
    first_lines = []                # of each body whose headings are looked for
    real = parse.find_headings
    monkeypatch.setattr(parse, "find_headings", lambda lines, masked, first_line=1:
                        first_lines.append(first_line) or real(lines, masked, first_line))
    answer = client.get("/extract", params={"page": page, "block": 2})
    assert answer.status_code == 409, answer.text
    assert "raw/api-notes/Bomb.md:13: the ```json block does not parse" in answer.text
    assert 4 not in first_lines     # the raw note's body starts on line 4
