"""`mindgraph lint`: each rule on pages made to trip it (and on pages made not to), the real
Obsidian vault with its release notes, the LLM judge on a fake OpenAI server, and the CLI,
REST and MCP entry points."""

import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))
from fake_openai import FakeOpenAI  # noqa: E402 (the fake OpenAI server of the search tests)

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "obsidian-help"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpora/obsidian-help")

PAGES = {
    # no summary: a title, then straight into headings
    "Bare.md": "# Bare\n\n## Steps\n\nOpen the settings and pick a theme for the app.\n",
    # a summary in the frontmatter / a lead sentence / a dated entry: none of them flagged
    "Described.md": "---\nsummary: How themes change the look of the whole app.\n---\n"
                    "# Described\n\n## Steps\n\nPick one.\n",
    "Lead.md": "# Lead\n\nThemes change how every pane of the app looks.\n\n## More\n\nText.\n",
    "Journal 2024-05-01.md": "# Journal 2024-05-01\n\n## Done\n\nShipped the theme picker.\n",
    # a footnote cited but never defined, and one that is
    "Cited.md": "# Cited\n\nSync keeps your notes safe on every device.[^1] Backups too.[^2]\n\n"
                "[^2]: The backup page.\n",
    # the same fact with different numbers on two pages, and a page that agrees
    "Plans.md": "# Plans\n\nThe Standard plan keeps version history of every note for 30 days "
                "on the server.\n",
    "Pricing.md": "# Pricing\n\nThe Standard plan keeps version history of every note for 14 "
                  "days on the server.\n",
    "Agrees.md": "# Agrees\n\nThe Plus plan keeps version history of every attachment for 12 "
                 "months in the cloud.\n",
    # one page says `cssclass` is deprecated; another still tells people to use it
    "Properties.md": "# Properties\n\nThe `cssclass` property is deprecated since 1.4: use "
                     "`cssclasses` instead.\n",
    "Styling.md": "# Styling\n\nSet `cssclass` in the frontmatter to style one note with a "
                  "snippet.\n\nOr set `cssclasses` to style it with several.\n",
    # near-duplicates: one text under two names
    "Copy one.md": "# Copy one\n\n" + " ".join(
        f"Step {i} of the long import guide moves notes from the old app into the vault."
        for i in range(12)) + "\n",
    "Copy two.md": "# Copy two\n\n" + " ".join(
        f"Step {i} of the long import guide moves notes from the old app into the vault."
        for i in range(12)) + " One more line at the end.\n",
}


def write_wiki(root: Path, pages=PAGES) -> Path:
    for name, text in pages.items():
        path = root / "wiki" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "raw").mkdir(exist_ok=True)
    return root


@pytest.fixture
def workspace(tmp_path):
    return write_wiki(tmp_path)


def lint(root: Path, **config):
    return Mindgraph(settings_from_dict(config, base_dir=root)).lint("offline")


def by_rule(report, rule):
    return [f for f in report.findings if f.rule == rule]


def test_each_rule_flags_what_it_should_and_nothing_else(workspace):
    report = lint(workspace)
    assert [f.page for f in by_rule(report, "no-summary")] == ["Bare.md"]
    dangling = by_rule(report, "dangling-reference")
    assert [(f.page, f.line) for f in dangling] == [("Cited.md", 3)]
    assert "[^1]" in dangling[0].message and "[^1]:" in dangling[0].fix
    (conflict,) = by_rule(report, "conflicting-fact")
    assert {conflict.page, conflict.other_page} == {"Plans.md", "Pricing.md"}
    assert "30 days" in conflict.message and "14 days" in conflict.message
    (current,) = by_rule(report, "deprecated-but-current")
    assert (current.page, current.line, current.other_page) == ("Styling.md", 3, "Properties.md")
    assert "cssclass" in current.message and current.section == "lead"
    (dup,) = by_rule(report, "near-duplicate")
    assert {dup.page, dup.other_page} == {"Copy one.md", "Copy two.md"}
    assert report.pages == len(PAGES)


def test_pages_dated_apart_are_updates_not_contradictions(tmp_path):
    write_wiki(tmp_path, {
        "v1.md": "---\ndate: 2023-01-01\n---\n# v1\n\nThe Standard plan keeps version history "
                 "of every note for 30 days on the server.\n",
        "v2.md": "---\ndate: 2024-01-01\n---\n# v2\n\nThe Standard plan keeps version history "
                 "of every note for 14 days on the server.\n"})
    assert by_rule(lint(tmp_path), "conflicting-fact") == []


def test_an_older_page_naming_a_deprecated_thing_is_history(tmp_path):
    write_wiki(tmp_path, {
        "Old.md": "---\ndate: 2020-01-01\n---\n# Old\n\nSet `cssclass` in the frontmatter to "
                  "style a note.\n",
        "New.md": "---\ndate: 2023-06-01\n---\n# New\n\nThe `cssclass` property has been "
                  "removed.\n",
        "Help.md": "# Help\n\nWrite `cssclass` in the properties of a note to style it.\n"})
    report = lint(tmp_path)
    assert [f.page for f in by_rule(report, "deprecated-but-current")] == ["Help.md"]


def test_japanese_and_chinese_deprecations(tmp_path):
    write_wiki(tmp_path, {
        "プロパティ.md": "# プロパティ\n\n`cssclass` は非推奨です。代わりに `cssclasses` を使います。\n",
        "スタイル.md": "# スタイル\n\nノートのスタイルには `cssclass` をフロントマターに書きます。\n",
        "属性.md": "# 属性\n\n`tag` 属性已弃用。\n",
        "标签.md": "# 标签\n\n在属性中写 `tag` 来给笔记加标签。\n"})
    found = {(f.page, f.other_page) for f in by_rule(lint(tmp_path), "deprecated-but-current")}
    assert found == {("スタイル.md", "プロパティ.md"), ("标签.md", "属性.md")}


def test_a_missing_source_note_is_a_dangling_reference(tmp_path):
    write_wiki(tmp_path, {
        "Gone.md": "---\nsources:\n  - path: notes/gone.md\n    sha256: abc\n---\n# Gone\n\n"
                   "This page was compiled from a note that is no longer there.\n",
        "Here.md": "---\nsources:\n  - path: notes/here.md\n    sha256: abc\n---\n# Here\n\n"
                   "This page was compiled from a note that is still there.\n",
        "Out.md": "---\nreferences: [../../etc/passwd]\n---\n# Out\n\nThis page cites a "
                  "file outside the workspace.\n"})
    (tmp_path / "raw" / "notes").mkdir(parents=True)
    (tmp_path / "raw" / "notes" / "here.md").write_text("# Here\n")
    found = {(f.page, f.message) for f in by_rule(lint(tmp_path), "dangling-reference")}
    assert found == {("Gone.md", "'sources' names raw/notes/gone.md, which does not exist."),
                     ("Out.md", "'references' names '../../etc/passwd', which is outside "
                                "the workspace and raw/.")}


def test_a_raw_note_whose_name_starts_with_a_space_is_not_dangling(tmp_path):
    # the recorded source " idea.md" was read as "idea.md": a real note reported missing
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / " idea.md").write_text("An idea worth keeping.\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(tmp_path), "ingest"]).exit_code == 0
    data = json.loads(runner.invoke(cli, ["-C", str(tmp_path), "lint", "--json"]).stdout)
    assert [f for f in data["findings"] if f["rule"] == "dangling-reference"] == []


def test_the_obsidian_vault_and_its_release_notes(tmp_path):
    """The real vault: the identical release notes are caught, the help pages without a lead
    are named, and the 336 dated release notes are not taken for pages without a summary."""
    wiki = tmp_path / "wiki"
    shutil.copytree(CORPUS / "en", wiki / "en")
    shutil.copytree(CORPUS / "Release notes", wiki / "Release notes")
    (tmp_path / "raw").mkdir()
    report = lint(tmp_path)
    dups = {(f.page, f.other_page) for f in by_rule(report, "near-duplicate")}
    assert ("Release notes/v1.4.15.md", "Release notes/v1.4.16.md") in dups
    missing = {f.page for f in by_rule(report, "no-summary")}
    assert "en/Obsidian/About Obsidian.md" in missing
    assert len([p for p in missing if p.startswith("Release notes/")]) <= 3
    assert not any(f.page.startswith("en/") for f in by_rule(report, "deprecated-but-current"))
    before = {p: p.read_bytes() for p in wiki.rglob("*.md")}
    lint(tmp_path)
    assert {p: p.read_bytes() for p in wiki.rglob("*.md")} == before     # read-only


# -- the CLI -------------------------------------------------------------------------------


def test_cli_lists_findings_with_their_fix_and_json_has_them_all(workspace):
    runner = CliRunner()
    text = runner.invoke(cli, ["-C", str(workspace), "lint"])
    assert text.exit_code == 0, text.output
    assert "no-summary" in text.output and "Bare.md" in text.output and "Fix:" in text.output
    assert f"{len(PAGES)} pages: 5 findings" in text.output
    data = json.loads(runner.invoke(cli, ["-C", str(workspace), "lint", "--json"]).output)
    assert data["counts"] == {"no-summary": 1, "dangling-reference": 1, "conflicting-fact": 1,
                              "deprecated-but-current": 1, "near-duplicate": 1}
    only = json.loads(runner.invoke(cli, ["-C", str(workspace), "lint", "--json", "--rule",
                                          "near-duplicate"]).output)
    assert [f["rule"] for f in only["findings"]] == ["near-duplicate"]
    strict = runner.invoke(cli, ["-C", str(workspace), "lint", "--strict"])
    assert strict.exit_code == 1


def test_cli_rule_runs_only_that_rule_and_prints_what_the_full_run_has_of_it(workspace,
                                                                           monkeypatch):
    """`lint --rule no-summary` ran every rule (the slow pairwise ones too) and then kept one
    rule's findings: the others now are not run at all (each would raise here), and what it
    prints is the full run's findings of that rule."""
    runner = CliRunner()
    full = runner.invoke(cli, ["-C", str(workspace), "lint", "--json"]).stdout
    full_text = runner.invoke(cli, ["-C", str(workspace), "lint"]).output
    import mindgraph.lint.run as run

    def not_asked(*_args, **_kwargs):
        raise AssertionError("a rule that was not asked for ran")

    for rule in ("reference_findings", "conflicting_facts", "deprecations", "current_uses",
                 "near_duplicates"):
        monkeypatch.setattr(run, rule, not_asked)
    only = runner.invoke(cli, ["-C", str(workspace), "lint", "--json", "--rule", "no-summary"])
    assert only.exit_code == 0, only.output
    data = json.loads(only.stdout)
    assert data["findings"] == [f for f in json.loads(full)["findings"]
                                if f["rule"] == "no-summary"] != []
    assert data["counts"] == {"no-summary": 1}
    text = runner.invoke(cli, ["-C", str(workspace), "lint", "--rule", "no-summary"]).output
    assert text.splitlines()[:-1] == [line for line in full_text.splitlines()
                                      if line.startswith("no-summary ")]
    assert text.splitlines()[-1] == f"{len(PAGES)} pages: 1 finding (no-summary 1)."


def test_cli_strict_passes_on_a_clean_wiki(tmp_path):
    write_wiki(tmp_path, {"Lead.md": PAGES["Lead.md"]})
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "lint", "--strict"])
    assert result.exit_code == 0, result.output
    assert "nothing to flag" in result.output


def test_cli_judge_llm_without_a_provider_says_what_to_set(workspace):
    result = CliRunner().invoke(cli, ["-C", str(workspace), "lint", "--judge", "llm"])
    assert result.exit_code != 0
    assert "compile.provider" in result.output


def test_cli_judge_llm_with_only_rules_no_llm_takes_part_in_needs_no_provider(workspace):
    """Only conflicting-fact has an LLM judge: `--judge llm --rule dangling-reference`
    demanded compile.provider all the same; it runs the rule, and with conflicting-fact
    among the rules the provider is still required."""
    offline = CliRunner().invoke(cli, ["-C", str(workspace), "lint", "--json",
                                       "--rule", "dangling-reference"])
    result = CliRunner().invoke(cli, ["-C", str(workspace), "lint", "--judge", "llm", "--json",
                                      "--rule", "dangling-reference", "--rule", "no-summary"])
    assert "compile.provider" not in result.output
    assert json.loads(result.stdout)["counts"]["dangling-reference"] == \
        json.loads(offline.stdout)["counts"]["dangling-reference"] > 0
    with_llm_rule = CliRunner().invoke(cli, ["-C", str(workspace), "lint", "--judge", "llm",
                                             "--rule", "dangling-reference",
                                             "--rule", "conflicting-fact"])
    assert with_llm_rule.exit_code != 0 and "compile.provider" in with_llm_rule.output


# -- the LLM judge on a fake OpenAI server ---------------------------------------------------

CONTRADICTING = {
    "Encryption.md": "# Encryption\n\nObsidian Sync encrypts every remote vault end to end "
                     "with your own password.\n",
    "Security.md": "# Security\n\nObsidian Sync never encrypts a remote vault end to end with "
                   "your own password.\n",
    "Lead.md": PAGES["Lead.md"],
}


def _llm_workspace(root: Path, url: str) -> Path:
    write_wiki(root, CONTRADICTING)
    (root / "mindgraph.yml").write_text(
        f"compile:\n  provider: openai\n  model: gpt-4.1-mini\n  base_url: {url}\n")
    return root


def test_the_llm_judges_similar_statements_in_batches(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def answer(prompt):
        pairs = prompt.count("Pair ")
        return json.dumps({"pairs": [{"n": n, "verdict": "contradicts",
                                      "reason": "one says it encrypts, the other never"}
                                     for n in range(1, pairs + 1)]})

    with FakeOpenAI(answer) as fake:
        root = _llm_workspace(tmp_path, fake.base_url)
        result = CliRunner().invoke(cli, ["-C", str(root), "lint", "--json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        offline = json.loads(CliRunner().invoke(
            cli, ["-C", str(root), "lint", "--json", "--judge", "offline"]).output)
    (finding,) = [f for f in data["findings"] if f["rule"] == "conflicting-fact"]
    assert {finding["page"], finding["other_page"]} == {"Encryption.md", "Security.md"}
    assert finding["judged_by"].startswith("llm:openai:") and "never" in finding["message"]
    assert len(fake.requests) == 1                       # one batch, and none when offline
    assert "Encryption.md" in fake.requests[0]["body"]["messages"][-1]["content"]
    assert [f for f in offline["findings"] if f["rule"] == "conflicting-fact"] == []


def test_a_garbled_llm_answer_falls_back_to_the_offline_findings(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(lambda prompt: "I think they might contradict, maybe.") as fake:
        root = _llm_workspace(tmp_path, fake.base_url)
        result = CliRunner().invoke(cli, ["-C", str(root), "lint", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert any("LLM judge failed" in note for note in data["notes"])
    assert [f for f in data["findings"] if f["rule"] == "conflicting-fact"] == []


# -- REST and MCP ---------------------------------------------------------------------------


def test_rest_lint(workspace):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    data = client.get("/lint").json()
    assert data["counts"]["near-duplicate"] == 1 and data["pages"] == len(PAGES)
    assert len(client.get("/lint", params={"limit": 2}).json()["findings"]) == 2
    refused = client.get("/lint", params={"judge": "llm"})
    assert refused.status_code == 400 and "compile.provider" in refused.json()["detail"]


def test_mcp_lint_tool(workspace):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))

    async def main():
        async with Client(create_mcp_server(mg)) as client:
            return await client.call_tool("lint", {"limit": 3})

    result = anyio.run(main)
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert len(data["findings"]) == 3 and sum(data["counts"].values()) == 5


def test_a_link_to_no_page_is_noted_by_default_and_listed_by_its_opt_in_rule(tmp_path):
    """`lint` said nothing of [[Nowhere]]: links are `check`'s (a broken-link error), and
    Obsidian keeps a link to no page as a placeholder. A default run now notes them, with the
    first one's raw note and line; `--rule unresolved-link` lists each, as `graph broken`."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Alpha.md").write_text(
        "Alpha is where the tour starts.\n\nSee [[Nowhere]] and [[Beta]].\n")
    (tmp_path / "raw" / "Beta.md").write_text(
        "Beta is the second stop of the tour.\n\nBack to [[Alpha]].\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(tmp_path), "ingest"]).exit_code == 0
    default = runner.invoke(cli, ["-C", str(tmp_path), "lint", "--strict"])
    assert default.exit_code == 0, default.output          # a placeholder fails no CI
    assert "note: 1 link(s) point to no page, first raw/Alpha.md:3 ([[Nowhere]])" in \
        default.stderr and "lint --rule unresolved-link" in default.stderr
    listed = runner.invoke(cli, ["-C", str(tmp_path), "lint", "--strict", "--rule",
                                 "unresolved-link"])
    assert listed.exit_code == 1, listed.output
    [line] = [text for text in listed.stdout.splitlines() if "Nowhere" in text]
    assert line.startswith("unresolved-link        Alpha.md:")
    assert "[[Nowhere]] points to no page. Fix: Create the page or fix the link's spelling " \
        "in raw/Alpha.md:3;" in line
    broken = runner.invoke(cli, ["-C", str(tmp_path), "graph", "broken"]).stdout
    assert "raw/Alpha.md:3: missing [[Nowhere]]" in broken    # the same link, the same place
    mg = Mindgraph(settings_from_dict({}, base_dir=tmp_path))
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    data = client.get("/lint", params={"rule": "unresolved-link"}).json()
    assert [(f["page"], f["message"]) for f in data["findings"]] == \
        [("Alpha.md", "[[Nowhere]] points to no page.")]
