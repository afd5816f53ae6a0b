"""`mindgraph check`'s text output in proportion: each kind's findings together, errors first,
a few of each and how many more (--all: every one; --json always complete); a missing
attachment is a warning (the Obsidian Help vault, published without its images, had 761
missing-attachment errors, listed before its 101 broken links)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def vault(tmp_path):
    """A wiki whose pages embed 40 images that are not there, and hold 2 broken links."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    for i in range(8):
        images = "\n".join(f"![[shot-{i}-{j}.png]]" for j in range(5))
        (wiki / f"Page {i}.md").write_text(f"---\ntitle: Page {i}\n---\nSee [[Page "
                                           f"{(i + 1) % 8}]].\n\n{images}\n")
    (wiki / "Page 0.md").write_text((wiki / "Page 0.md").read_text() + "[[Nowhere]] [[Gone]]\n")
    return tmp_path


def test_a_missing_attachment_is_a_warning_and_strict_passes_on_it_alone(vault):
    report = json.loads(run("check", "-C", vault, "--json").stdout)
    attachments = [f for f in report["findings"] if f["kind"] == "missing-attachment"]
    assert len(attachments) == 40 and {f["severity"] for f in attachments} == {"warning"}
    assert (report["errors"], report["warnings"]) == (2, 40)       # the two broken links
    assert run("check", "-C", vault, "--strict").exit_code == 1
    page = vault / "wiki" / "Page 0.md"
    page.write_text(page.read_text().replace("[[Nowhere]] [[Gone]]", ""))
    assert run("check", "-C", vault, "--strict").exit_code == 0    # images alone: exit 0


def test_text_output_groups_kinds_errors_first_with_a_few_of_each(vault):
    text = run("check", "-C", vault).output.splitlines()
    assert text[:2] == [
        "error   broken-link      Page 0.md:11: [[Nowhere]] points to no page. Create the page "
        "or fix the link's spelling.",
        "error   broken-link      Page 0.md:11: [[Gone]] points to no page. Create the page or "
        "fix the link's spelling."]
    shown = [line for line in text if line.startswith("warning missing-attachment Page")]
    assert len(shown) == 5
    assert "warning missing-attachment ... and 35 more (--all lists every finding)." in text
    assert text[-2].startswith("8 pages: 2 errors, 40 warnings (broken-link 2, "
                               "missing-attachment 40).")
    every = run("check", "-C", vault, "--all").output
    assert every.count("warning missing-attachment Page") == 40 and "more (--all" not in every
    assert run("check", "-C", vault, "--limit", "0").output == every
    three = run("check", "-C", vault, "--limit", "3").output
    assert "warning missing-attachment ... and 37 more" in three
    assert "error   broken-link      ... and" not in three            # 2 of 2 shown


def test_one_more_is_shown_rather_than_counted(vault):
    (vault / "wiki" / "Page 1.md").write_text("---\ntitle: Page 1\n---\nSee [[Page 2]], "
                                              "![[a.png]] [[Nowhere]].\n")
    text = run("check", "-C", vault, "--limit", "35").output
    assert text.count("warning missing-attachment Page") == 36 and "1 more" not in text


def test_a_link_is_quoted_as_the_note_wrote_it(tmp_path):
    """`![pic](img/x.jpg)` was quoted as `![[img/x.jpg]]` (and a markdown link as its
    target in brackets, unquoted): a search for the quoted text found nothing."""
    (tmp_path / "mindgraph.yml").write_text("{}\n")
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "a.md").write_text(
        "---\ntitle: A\n---\n# A\n\nSee ![pic](img/x%20y.jpg), [b](Missing%20Page.md#Part), "
        "[[Gone|shown]] and ![[img/z.png]].\n")
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "check", "--json"])
    messages = sorted(f["message"] for f in json.loads(result.stdout)["findings"]
                      if f["kind"] in ("broken-link", "missing-attachment"))
    assert [m.split(" ", 1)[0] for m in messages] == [
        "![[img/z.png]]", "![pic](img/x%20y.jpg)", "[[Gone|shown]]",
        "[b](Missing%20Page.md#Part)"]


def test_a_link_to_a_note_with_hash_in_its_file_name_says_why_it_cannot_resolve(tmp_path):
    """[[C# notes]] asks for page 'C', heading 'notes' (as in Obsidian); with 'C# notes.md'
    there, "fix the link's spelling" sent the user to a spelling that was right."""
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "C# notes.md").write_text("# C sharp\n\nAbout C#.\n")
    (raw / "Index.md").write_text("# Index\n\nSee [[C# notes]] and [[Nowhere#Part]].\n")
    assert run("ingest", "-C", tmp_path).exit_code == 0
    report = json.loads(run("check", "-C", tmp_path, "--json").stdout)
    broken = {f["message"].split(" points")[0]: f for f in report["findings"]
              if f["kind"] == "broken-link"}
    assert set(broken) == {"[[C# notes]]", "[[Nowhere#Part]]"}
    assert broken["[[C# notes]]"]["raw_path"] == "Index.md"
    assert "'#' starts a heading in a link, so it asks for page 'C': C# notes.md has '#' in " \
        "its file name" in broken["[[C# notes]]"]["message"]
    assert "Rename that note without '#'" in broken["[[C# notes]]"]["message"]
    assert broken["[[Nowhere#Part]]"]["message"].endswith(
        "Create the page or fix the link's spelling.")
    text = run("check", "-C", tmp_path).stdout
    assert "raw/Index.md:3: [[C# notes]] points to no page. '#' starts a heading" in text


def test_a_link_by_an_alias_keeps_its_heading_and_shown_text_in_the_fix(tmp_path):
    """[[Reading pages#Model|model]] to a page that has 'Reading pages' as an alias: the fix
    named [[Interpreter|Reading pages]], dropping the heading and the text the page shows."""
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "Interpreter.md").write_text("---\naliases: [Reading pages]\n---\n# Interpreter\n\n"
                                        "Reads pages.\n\n## Model\n\nThe model it uses.\n")
    (raw / "Index.md").write_text("# Index\n\nSee the [[Reading pages#Model|model]] and "
                                  "[[Reading pages]].\n")
    assert run("ingest", "-C", tmp_path).exit_code == 0
    report = json.loads(run("check", "-C", tmp_path, "--json").stdout)
    fixes = sorted(f["message"].split(" A page has it as an alias: ")[1]
                   for f in report["findings"] if f["kind"] == "broken-link")
    assert fixes == ["link [[Interpreter#Model|model]] instead.",
                     "link [[Interpreter|Reading pages]] instead."]


def test_a_raw_note_whose_name_starts_with_a_space_is_named_at_its_raw_file(tmp_path):
    # " idea.md" was looked up as "idea.md": its findings lost their raw file and line
    (tmp_path / "raw").mkdir()
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (tmp_path / "raw" / " idea.md").write_text("# Idea\n\nSee [[Nowhere]].\n")
    assert run("ingest", "-C", tmp_path).exit_code == 0
    report = json.loads(run("check", "-C", tmp_path, "--json").stdout)
    broken = [f for f in report["findings"] if f["kind"] == "broken-link"]
    assert [(f["raw_path"], f["raw_line"]) for f in broken] == [(" idea.md", 3)]
    assert "raw/ idea.md:3: [[Nowhere]] points to no page" in run("check", "-C", tmp_path).output



def test_raw_notes_that_failed_are_listed_first_as_the_readme_says(tmp_path):
    """The README says the raw notes that failed to compile are listed first: grouping by
    kind put `raw-failed` after `broken-link` and `ambiguous-link`, so on the Help vault a
    note whose page is stale came after six links to a page that does not exist (a
    `raw-warning` after 254 missing-attachment and no-backlinks warnings). --json already
    had them first."""
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "Index.md").write_text("# Index\n\nSee [[Nowhere]] and ![[gone.png]].\n")
    (raw / "Broken.md").write_text("---\ntags: [a, b\n---\n# Broken\n")
    (raw / "Open.md").write_text("---\ntitle: Open\n\n# Open\n\nSee [[Index]].\n")
    assert run("ingest", "-C", tmp_path).exit_code == 1
    kinds = [line.split()[1] for line in run("check", "-C", tmp_path).output.splitlines()
             if line.startswith(("error", "warning"))]
    assert kinds[:2] == ["raw-failed", "broken-link"]
    warnings = kinds[2:]
    assert warnings[0] == "raw-warning" and "missing-attachment" in warnings[1:]
