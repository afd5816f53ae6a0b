"""`mindgraph ingest` warns about raw frontmatter it cannot take as written, and still compiles
the note: a block never closed, a date no reader can read, values of the wrong kind. Each
warning names the note, the line and what was done; the run exits 0 (a warning, not a
failure), as for the other notes an ingest adds to a compiled note."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from mindgraph.cli import cli


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def page_of(workspace, name):
    text = (workspace / "wiki" / name).read_text()
    _, head, body = text.split("---\n", 2)
    return yaml.safe_load(head), body


def test_unclosed_frontmatter_is_reported_and_its_lines_compiled_as_text(workspace, write_raw):
    write_raw("unclosed.md", "---\ntitle: no close\n\n# Unclosed fm\nbody\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 0, result.output
    assert "Ingested, with a note:" in result.output
    assert ("unclosed.md:1: the frontmatter's '---' is never closed, so its lines were "
            "compiled as body text (the opening '---' left out); end the block with a '---' "
            "line.") in result.output
    meta, body = page_of(workspace, "unclosed.md")
    assert meta["title"] == "Unclosed fm"
    assert "title: no close" in body and "body" in body       # nothing lost
    assert "> ---" not in body and "\n---\n" not in body      # no stray rule, no '---' summary
    data = json.loads(run("ingest", "-C", str(workspace), "--force", "--json").output)
    [item] = data["files"]
    assert item["status"] == "ingested" and item["reason"].startswith("unclosed.md:1: ")
    assert data["ok"] is True


def test_bad_frontmatter_fields_are_named_with_their_line_and_fate(workspace, write_raw):
    write_raw("zep.md", "---\ndate: 99999-99-99\ncreated: not a date\naliases: {x: 1}\n"
                        "tags: 5\nmodified: 2024-01-02\n---\n# Zeppelin airships\n\n"
                        "Zeppelin airships carried passengers across the ocean.\n")
    result = run("ingest", "-C", str(workspace), "--json")
    assert result.exit_code == 0, result.output
    [item] = json.loads(result.output)["files"]
    assert item["status"] == "ingested"
    warnings = item["reason"].split("\n")
    assert len(warnings) == 4, warnings
    date, created, aliases, tags = warnings
    assert date.startswith("zep.md:2: frontmatter 'date' is not a date the timeline can read "
                           "(99999-99-99); dropped from the page.")
    assert created.startswith("zep.md:3: frontmatter 'created' is not a date") \
        and "(not a date); dropped" in created
    assert aliases.startswith("zep.md:4: frontmatter 'aliases' is a mapping ({x: 1})") \
        and "dropped" in aliases
    assert tags.startswith("zep.md:5: frontmatter 'tags' holds 5, not text; kept as text")
    meta, _ = page_of(workspace, "zep.md")
    assert "date" not in meta                   # not written as if it were a date
    assert meta["created"] == "2024-01-02" and meta["date_source"] == "frontmatter"
    assert meta["tags"] == ["5"] and meta["aliases"] == []
    # the text report lists them one per line under the note
    result = run("ingest", "-C", str(workspace), "--force")
    assert result.exit_code == 0
    assert "\n  raw/zep.md:2: frontmatter 'date'" in result.output  # its path once
    assert "\n    raw/zep.md:5: frontmatter 'tags' holds 5" in result.output


def test_an_unreadable_date_alone_leaves_the_page_undated_everywhere(workspace, write_raw):
    write_raw("zep.md", "---\ndate: 99999-99-99\n---\n# Zeppelin airships\n\n"
                        "Zeppelin airships carried passengers across the ocean.\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 0, result.output
    assert "zep.md:2: frontmatter 'date' is not a date the timeline can read" in result.output
    meta, _ = page_of(workspace, "zep.md")
    assert not {"date", "created", "updated"} & set(meta)
    timeline = json.loads(run("timeline", "Zeppelin", "-C", str(workspace), "--json").output)
    assert (timeline["count"], timeline["undated"]) == (0, 1)


def test_good_frontmatter_gives_no_warning(workspace, write_raw):
    write_raw("ok.md", "---\ntitle: Fine\ndate: 2024-05-01\ntags: [a, b]\naliases: Other\n"
                       "---\nA fine note with a body.\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 0
    assert "with a note" not in result.output


def test_a_frontmatter_that_is_not_a_mapping_says_how_to_write_one(workspace, write_raw):
    """"frontmatter must be a mapping of keys (key: value), got list." named Python's type
    and no fix; a note starting with a horizontal rule ('---', text, '---') got "str"."""
    write_raw("list.md", "---\n- a\n- b\n---\nbody\n")
    write_raw("rule.md", "---\nA thought between two rules.\n---\nbody\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 1
    out = result.output
    assert "raw/list.md:2: frontmatter must be a mapping of keys (key: value), got a list. " \
        "Write each property as 'key: value' between the '---' lines (a list goes under a " \
        "key: 'tags: [a, b]')" in out, out
    assert "raw/rule.md:2: frontmatter must be a mapping of keys (key: value), got a line " \
        "of text." in out and "can draw it as '***' instead." in out
