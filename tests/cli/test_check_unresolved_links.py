"""check.unresolved_links: a link to a page that does not exist ([[Nowhere]]) is a broken-link
error by default, a warning when the vault keeps Obsidian's placeholders on purpose, so
`check --strict` passes on them; an ambiguous link and a link to a missing heading stay
errors, and `graph broken` and `lint`'s note say the same severity."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def vault(tmp_path):
    """A wiki whose page links to a page to write later and to an existing one."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (wiki / "Home.md").write_text("---\ntitle: Home\n---\nSee [[Other]] and [[Nowhere]].\n")
    (wiki / "Other.md").write_text("---\ntitle: Other\n---\n# Part\nBack to [[Home]].\n")
    return tmp_path


def placeholders(vault):
    (vault / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n"
                                         "check:\n  unresolved_links: warning\n")


def test_a_link_to_no_page_is_an_error_by_default(vault):
    report = json.loads(run("check", "-C", vault, "--json").stdout)
    assert [(f["severity"], f["kind"]) for f in report["findings"]
            if f["kind"] == "broken-link"] == [("error", "broken-link")]
    assert run("check", "-C", vault, "--strict").exit_code == 1


def test_unresolved_links_warning_lets_strict_pass(vault):
    placeholders(vault)
    report = json.loads(run("check", "-C", vault, "--json").stdout)
    assert [(f["severity"], f["kind"]) for f in report["findings"]
            if f["kind"] == "broken-link"] == [("warning", "broken-link")]
    assert report["errors"] == 0
    result = run("check", "-C", vault, "--strict")
    assert result.exit_code == 0
    assert "warning broken-link      Home.md:4: [[Nowhere]] points to no page." in result.output


def test_ambiguous_and_missing_heading_links_stay_errors(vault):
    placeholders(vault)
    (vault / "wiki" / "a").mkdir()
    (vault / "wiki" / "b").mkdir()
    for folder in ("a", "b"):
        (vault / "wiki" / folder / "Twin.md").write_text(f"---\ntitle: Twin {folder}\n---\n")
    (vault / "wiki" / "Home.md").write_text("---\ntitle: Home\n---\nSee [[Twin]], "
                                            "[[Other#Nope]] and [[Nowhere]].\n")
    report = json.loads(run("check", "-C", vault, "--json").stdout)
    kinds = {f["kind"]: f["severity"] for f in report["findings"] if f["path"] == "Home.md"
             and (f["kind"].endswith("-link") or f["kind"] == "missing-heading")}
    assert kinds == {"ambiguous-link": "error", "missing-heading": "error",
                     "broken-link": "warning"}
    assert run("check", "-C", vault, "--strict").exit_code == 1


def test_graph_broken_and_lint_say_the_same_severity(vault):
    rows = json.loads(run("graph", "broken", "-C", vault, "--json").stdout)["broken_links"]
    assert [(r["target"], r["severity"]) for r in rows] == [("Nowhere", "error")]
    assert "counts them as broken-link errors" in run("lint", "-C", vault).output
    placeholders(vault)
    rows = json.loads(run("graph", "broken", "-C", vault, "--json").stdout)["broken_links"]
    assert [(r["target"], r["severity"]) for r in rows] == [("Nowhere", "warning")]
    text = run("graph", "broken", "-C", vault).output
    assert "missing [[Nowhere]] (a warning: check.unresolved_links)" in text
    assert "counts them as broken-link warnings" in run("lint", "-C", vault).output


def test_a_bad_value_names_the_key(vault):
    (vault / "mindgraph.yml").write_text("check:\n  unresolved_links: ignore\n")
    result = CliRunner().invoke(cli, ["check", "-C", str(vault)])
    assert result.exit_code != 0 and "unresolved_links" in result.output
