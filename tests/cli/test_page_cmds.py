"""`mindgraph get`, `url` and `links` on a small wiki."""

import json

from click.testing import CliRunner

from mindgraph.cli import cli


def make_wiki(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Catalog.md").write_text("---\ntitle: Trunk Catalog\n---\nSee [[Packing]] and "
                                     "[[Nowhere]].\n\n## Data\n```json\n{\"n\": 1}\n```\n")
    (wiki / "Packing.md").write_text("---\ntitle: Packing\n---\nBack to [[Catalog]].\n")
    return tmp_path


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_get_extract_json_and_yaml(tmp_path):
    base = str(make_wiki(tmp_path))
    result = run("get", "Trunk Catalog", "-C", base, "--extract", "json")
    assert result.exit_code == 0 and json.loads(result.output) == {"n": 1}
    assert run("get", "Catalog", "-C", base, "--extract", "yaml").output.strip() == "n: 1"
    missing = run("get", "Packing", "-C", base, "--extract", "json")
    assert missing.exit_code == 1 and "no ```json or ```yaml block" in missing.output


def test_get_section_and_unknown_page(tmp_path):
    base = str(make_wiki(tmp_path))
    section = json.loads(run("get", "Catalog", "-C", base, "--section", "data", "--json").output)
    assert section["heading"] == "Data" and '{"n": 1}' in section["text"]
    unknown = run("get", "Catlog", "-C", base)
    assert unknown.exit_code == 1 and "Did you mean: Catalog.md" in unknown.output


def test_links_and_backlinks(tmp_path):
    base = str(make_wiki(tmp_path))
    data = json.loads(run("links", "Catalog", "-C", base, "--json").output)
    assert [(o["target"], o["status"]) for o in data["outgoing"]] == [
        ("Packing", "resolved"), ("Nowhere", "missing")]
    assert [b["page"] for b in data["backlinks"]] == ["Packing.md"]


def test_typed_links_say_their_kind_both_ways(tmp_path):
    """DESIGN: typed links (depends_on, supersedes, …) and every link has a backlink. The
    text form listed a depends_on link like a wikilink; --json alone said which it was."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Plan.md").write_text(
        "---\ndepends_on: [Budget]\nsupersedes: [Old plan]\n---\n# Plan\nSee [[Budget]].\n")
    (tmp_path / "wiki" / "Budget.md").write_text("# Budget\nMoney.\n")
    (tmp_path / "wiki" / "Old plan.md").write_text("# Old plan\nBefore.\n")
    out = run("links", "Plan", "-C", str(tmp_path)).output
    assert "-> Budget.md  (depends_on)" in out and "-> Old plan.md  (supersedes)" in out
    assert "-> Budget.md\n" in out                     # the wikilink: no kind shown
    back = run("links", "Budget", "-C", str(tmp_path)).output
    assert "Plan.md:0  (depends_on)" in back


def test_url(tmp_path):
    base = make_wiki(tmp_path)
    result = run("url", "Packing", "-C", str(base))
    assert result.output.strip() == (base / "wiki" / "Packing.md").resolve().as_uri()


def test_extract_error_on_a_compiled_page_names_the_raw_note_line(tmp_path):
    assert run("init", str(tmp_path / "kb")).exit_code == 0
    note = tmp_path / "kb" / "raw" / "other.md"
    note.write_text('# Other\n\nSome prose here.\n\n```json\n{"a": 1}\n```\n\n'
                    '```json\n{"a": 1,\n "b": }\n```\n')
    assert run("ingest", "-C", str(tmp_path / "kb")).exit_code == 0
    result = run("get", "other", "-C", str(tmp_path / "kb"), "--extract", "json", "--block", "2")
    assert result.exit_code == 1
    assert "raw/other.md:11: the ```json block does not parse" in result.output
    assert note.read_text().split("\n")[10] == ' "b": }'


def test_a_data_block_past_the_value_limit_names_the_field_and_line(tmp_path):
    """`get --extract` said "more than 10,000 values once YAML aliases are expanded"."""
    (tmp_path / "mindgraph.yml").write_text("{}\n")
    (tmp_path / "wiki").mkdir()
    items = "".join(f"  - {i}\n" for i in range(12_000))
    (tmp_path / "wiki" / "d.md").write_text(f"# D\n\nText.\n\n```yaml\nname: x\nitems:\n"
                                            f"{items}```\n")
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "get", "d", "--extract", "yaml"])
    assert result.exit_code == 1, result.output
    assert result.output == ("Error: d.md:7: the ```yaml block's field 'items' holds 12,000 "
                             "items, past the 10,000-value limit for a data block. Shorten "
                             "the list.\n")


def test_get_prints_a_compiled_pages_title_first_and_a_written_h1_once(tmp_path):
    """A compiled page keeps its title in the frontmatter: `get` printed its body from a blank
    line, the page's name nowhere. A page that opens with its H1 is printed as written."""
    notes = tmp_path / "vault"
    notes.mkdir()
    (notes / "Zeppelins.md").write_text("Airships carry trunks.\n")
    base = tmp_path / "kb"
    assert run("init", str(base), "--raw", str(notes)).exit_code == 0
    assert run("ingest", "-C", str(base)).exit_code == 0
    got = run("get", "Zeppelins", "-C", str(base))
    assert got.exit_code == 0 and got.output.startswith("# Zeppelins\n\n> [!summary]\n"), \
        got.output
    assert got.output.endswith("Airships carry trunks.\n") and got.output.count("# Zeppelins") == 1
    assert json.loads(run("get", "Zeppelins", "-C", str(base), "--json").output)[
        "body"].startswith("\n> [!summary]")            # --json: the body as stored
    (base / "wiki" / "Home.md").write_text("---\ntitle: Start\n---\n\n# Home page\n\n#tag Hi.\n")
    assert run("get", "Home", "-C", str(base)).output == "# Home page\n\n#tag Hi.\n"
    (base / "wiki" / "Tagged.md").write_text("---\ntitle: Tagged\n---\n#tag first\n")
    assert run("get", "Tagged", "-C", str(base)).output == "# Tagged\n\n#tag first\n"
