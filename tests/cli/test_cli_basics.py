"""The CLI as a whole: help everywhere, exit codes, init, check."""

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


def all_commands(group, prefix=()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from all_commands(command, prefix + (name,))


def test_every_command_module_registers_what_the_table_names():
    from mindgraph.cli import COMMANDS

    for name in COMMANDS:
        assert cli.get_command(click.Context(cli), name) is not None, name


@pytest.mark.parametrize("path, command", list(all_commands(cli)),
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_command_has_help(path, command):
    assert command.help, f"mindgraph {' '.join(path)} has no help text"
    bare = [p.opts[0] for p in command.params
            if isinstance(p, click.Option) and not p.hidden and not p.help]
    assert bare == [], f"mindgraph {' '.join(path)}: options without help text {bare}"
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output


def test_init_scaffolds_and_is_idempotent(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["init", str(tmp_path / "kb"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (tmp_path / "kb" / "mindgraph.yml").is_file()
    assert (tmp_path / "kb" / "raw").is_dir() and (tmp_path / "kb" / "wiki").is_dir()
    assert len(data["created"]) == 3
    again = runner.invoke(cli, ["init", str(tmp_path / "kb")])
    assert again.exit_code == 0 and "kept it" in again.output


def test_config_error_exits_2_and_names_key(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("store:\n  backnd: x\n")
    result = CliRunner().invoke(cli, ["check", "-C", str(tmp_path)])
    assert result.exit_code == 2
    assert "store.backnd" in result.output


def test_check_reports_and_strict_fails(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "A.md").write_text("---\ntitle: A\n---\nSee [[B]] and [[Nowhere]].\n")
    (wiki / "B.md").write_text("---\ntitle: B\n---\nBack to [[A]].\n")
    (wiki / "C.md").write_text("no frontmatter, nobody links here\n")
    (wiki / "D.md").write_text("---\ntitle: D\ntags: [x]\n\nThe block above never closes.\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["check", "-C", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["counts"] == {"broken-link": 1, "no-frontmatter": 1, "no-backlinks": 2,
                                "unclosed-frontmatter": 1}
    unclosed = [f for f in report["findings"] if f["kind"] == "unclosed-frontmatter"][0]
    assert (unclosed["path"], unclosed["line"]) == ("D.md", 1)
    broken = [f for f in report["findings"] if f["kind"] == "broken-link"][0]
    assert (broken["path"], broken["line"]) == ("A.md", 4)
    strict = runner.invoke(cli, ["check", "-C", str(tmp_path), "--strict"])
    assert strict.exit_code == 1
    assert "A.md:4" in strict.output


def test_stats_counts_pages_links_and_raw_states(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "Alpha.md").write_text("# Alpha\nAlpha mentions Beta. #letters\n")
    (raw / "Beta.md").write_text("# Beta\nBeta is the second letter, see [[Gamma]].\n")
    (raw / "broken.md").write_bytes(b"\xff\xfe not utf-8")
    runner = CliRunner()
    ingest = runner.invoke(cli, ["ingest", "-C", str(tmp_path), "--json"])
    assert ingest.exit_code == 1  # one file failed, the others were compiled
    result = runner.invoke(cli, ["stats", "-C", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert stats["pages"] == 2
    assert stats["raw"] == {"files": 3, "by_state": {"ingested": 2, "failed": 1},
                            "ingested": True}
    assert stats["links"]["by_resolution"]["resolved"] >= 1   # "Beta" auto-linked from Alpha
    assert stats["links"]["by_resolution"]["missing"] == 1    # [[Gamma]]
    assert {"tag": "letters", "pages": 1} in stats["tags"]["top"]


def test_errors_under_json_are_json_on_stdout_and_typos_get_a_suggestion(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "A.md").write_text("# A\n")
    result = CliRunner().invoke(cli, ["get", "Nope", "-C", str(tmp_path), "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout)
    assert error["error"] == "NotFoundError" and "No page named 'Nope'" in error["detail"]
    assert error["exit_code"] == 1
    outside = CliRunner().invoke(cli, ["stats", "-C", str(tmp_path / "x"), "--json"])
    assert outside.exit_code == 2 and json.loads(outside.stdout)["error"] == "ConfigError"
    typo = CliRunner().invoke(cli, ["serach", "x"])
    assert typo.exit_code == 2 and "Did you mean search?" in typo.output
    # a group's subcommand typed alone is named with its group, not "Did you mean links?"
    alone = CliRunner().invoke(cli, ["backlinks", "A"])
    assert alone.exit_code == 2 and "`mindgraph graph backlinks`" in alone.output
    assert "Did you mean" not in alone.output
    explain = CliRunner().invoke(cli, ["explain", "x"])
    assert explain.exit_code == 2 and "`mindgraph search --hybrid QUERY`" in explain.output
    block = CliRunner().invoke(cli, ["get", "A", "--block", "2", "-C", str(tmp_path)])
    assert block.exit_code == 2 and "--extract" in block.output


def test_an_option_typo_suggests_the_closest_option_of_that_command():
    """click offered every close option of the command, sorted by name: --hybird got "Did
    you mean one of: '--dir', '--hybrid'?"; now the closest (a group's subcommand too)."""
    typo = CliRunner().invoke(cli, ["search", "--hybird", "x"])
    assert typo.exit_code == 2
    assert "No such option '--hybird'. Did you mean '--hybrid'?" in typo.output
    assert "--dir" not in typo.output
    sub = CliRunner().invoke(cli, ["graph", "hubs", "--limt", "3"])
    assert sub.exit_code == 2 and "Did you mean '--limit'?" in sub.output
    far = CliRunner().invoke(cli, ["search", "--zzzzqq", "x"])
    assert far.exit_code == 2 and "Did you mean" not in far.output


def _check(workspace):
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "-C", str(workspace)]).exit_code == 0
    result = runner.invoke(cli, ["check", "-C", str(workspace), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_check_names_raw_lines_once_and_links_to_missing_anchors(tmp_path):
    raw = tmp_path / "raw"
    (raw / "img").mkdir(parents=True)
    (raw / "img" / "there.png").write_bytes(b"\x89PNG")
    (raw / "Home.md").write_text(
        "# Home\n\nThe home page of this small test vault.\n\n"       # raw lines 1-3
        "Twice on a line: [[Nowhere]] and [[Nowhere]].\n\n"            # 5
        "See [[Guide#Set up: first steps]] and [[Guide#Missing part]].\n\n"  # 7
        "Block [[Guide#^intro]] and [[Guide#^gone]], here [[#Nope]].\n\n"    # 9
        "![[there.png]] ![[img/there.png]] ![[absent.png]]\n")               # 11
    (raw / "Guide.md").write_text("# Guide\n\nIntro text of the guide. ^intro\n\n"
                                  "## Set up first steps\n\nBack [[Home]].\n")
    report = _check(tmp_path)
    text = CliRunner().invoke(cli, ["check", "-C", str(tmp_path), "--limit", "0"]).output
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    got = sorted((f["kind"], f["raw_path"], f["raw_line"]) for f in errors)
    assert got == [("broken-link", "Home.md", 5), ("missing-block", "Home.md", 9),
                   ("missing-heading", "Home.md", 7), ("missing-heading", "Home.md", 9)]
    missing = [f for f in report["findings"] if f["kind"] == "missing-attachment"]
    assert [(f["severity"], f["raw_path"], f["raw_line"]) for f in missing] == \
        [("warning", "Home.md", 11)]                  # the page is whole without the image
    assert all(f["line"] > f["raw_line"] for f in errors)    # the wiki page's lines differ
    assert "raw/Home.md:5: [[Nowhere]] points to no page" in text
    assert text.count("[[Nowhere]]") == 1
    assert "[[Guide#Missing part]]: Guide.md has no heading 'Missing part'" in text
    assert "[[#Nope]]: this page has no heading 'Nope'" in text
    assert "![[absent.png]] names no file" in text
    no_backlinks = [f for f in report["findings"] if f["kind"] == "no-backlinks"]
    assert [(f["raw_path"], f["raw_line"]) for f in no_backlinks] in ([], [("Home.md", 0)])


@pytest.mark.slow
def test_check_on_the_real_vault_points_into_raw_notes(corpora, tmp_path):
    import shutil

    shutil.copytree(corpora / "obsidian-help", tmp_path / "raw")
    report = _check(tmp_path)
    findings = report["findings"]
    assert len({json.dumps(f, sort_keys=True) for f in findings}) == len(findings)
    links = [f for f in findings if f["line"]]
    assert len(links) > 900 and all(f["raw_path"] and f["raw_line"] for f in links)
    for finding in links:        # the raw line holds the link the finding is about
        raw = (tmp_path / "raw" / finding["raw_path"]).read_text(encoding="utf-8")
        # the message quotes the link as written: [[target#...]] or [text](target#...)
        written = re.match(r"!?(?:\[\[([^\]#|]*)|\[[^\]]*\]\(([^)#]*))", finding["message"])
        target = written.group(1) if written.group(1) is not None else written.group(2)
        assert target in raw.split("\n")[finding["raw_line"] - 1], finding
    counts = report["counts"]
    assert counts["missing-heading"] > 50 and counts["missing-attachment"] > 500


@pytest.mark.parametrize("argv", [[], ["-C", "."], ["graph"], ["graph", "-C", "."]])
def test_a_group_without_its_subcommand_prints_help_and_exits_2(argv):
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.output and "Commands:" in result.output


def test_every_command_naming_a_missing_page_exits_1_as_not_found(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "A.md").write_text("# A\n")
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    assert "or not found (a page, section or path that does not exist" in readme
    for argv in (["get", "Nope"], ["links", "Nope"], ["url", "Nope"],
                 ["graph", "path", "A", "Nope"], ["get", "A", "--section", "nope"]):
        result = CliRunner().invoke(cli, [*argv, "-C", str(tmp_path), "--json"])
        assert result.exit_code == 1, (argv, result.output)
        assert json.loads(result.stdout)["error"] == "NotFoundError", argv


def test_empty_answers_say_so_instead_of_printing_nothing(tmp_path):
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path / "kb")]).exit_code == 0
    assert runner.invoke(cli, ["init", str(tmp_path / "empty")]).exit_code == 0
    stats = runner.invoke(cli, ["stats", "-C", str(tmp_path / "kb")])
    assert stats.exit_code == 0, stats.output
    assert "by kind: none" in stats.output and "by resolution: none" in stats.output
    (tmp_path / "kb" / "wiki" / "A.md").write_text("# A\nSee [[B]].\n")
    (tmp_path / "kb" / "wiki" / "B.md").write_text("# B\nSee [[A]].\n")
    for command, said in (("orphans", "0 orphans.\n"), ("broken", "0 broken links.\n")):
        result = runner.invoke(cli, ["graph", command, "-C", str(tmp_path / "kb")])
        assert (result.exit_code, result.output) == (0, said), command
    empty_raw = tmp_path / "empty" / "raw"
    for command, said in (("hubs", f"0 hubs. The wiki has no pages yet: {empty_raw} holds no "
                                   "notes. Put Markdown files there (.md, .markdown or .txt), "
                                   "then run `mindgraph ingest`.\n"),
                          ("communities", f"0 communities of 2 or more pages. The wiki has "
                           f"no pages yet: {empty_raw} holds no notes. Put Markdown files "
                           f"there (.md, .markdown or .txt), then run `mindgraph ingest`.\n")):
        result = runner.invoke(cli, ["graph", command, "-C", str(tmp_path / "empty")])
        assert (result.exit_code, result.output) == (0, said), command
    (tmp_path / "kb" / "wiki" / "C.md").write_text("# C\nAlone.\n")
    result = runner.invoke(cli, ["graph", "communities", "--min-size", "3",
                                 "-C", str(tmp_path / "kb")])
    assert (result.exit_code, result.output) == (0, "0 communities of 3 or more pages. A page "
                                                    "with no links is a community of one: "
                                                    "--min-size 1 lists those.\n")


def test_a_count_option_given_words_says_it_is_not_a_whole_number(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Home.md").write_text("# Home\n\nThe start page.\n")
    for args, bad in ((["search", "-n", "abc", "home"], "abc"),
                      (["timeline", "home", "--limit", "2.5"], "2.5")):
        result = CliRunner().invoke(cli, [*args, "-C", str(tmp_path)])
        assert result.exit_code == 2
        assert f"'{bad}' is not a whole number." in result.output, result.output
        assert "integer range" not in result.output
    ok = CliRunner().invoke(cli, ["search", "-n", "3", "home", "-C", str(tmp_path)])
    assert ok.exit_code == 0, ok.output


def test_url_help_says_which_obsidian_folder_counts():
    text = " ".join(CliRunner().invoke(cli, ["url", "--help"]).output.split())
    assert "when wiki/ (or a folder above it) holds a .obsidian folder" in text
    assert "raw/ being a vault does not count" in text


def test_the_groups_named_for_a_subcommand_typed_alone_are_every_group():
    import importlib

    import click

    from mindgraph.cli import COMMANDS, GROUPS

    groups = []
    for name, module in COMMANDS.items():
        holder = click.Group()
        importlib.import_module(f"mindgraph.cli.{module}").register(holder)
        if isinstance(holder.commands[name], click.Group):
            groups.append(name)
    assert sorted(groups) == sorted(GROUPS)


@pytest.mark.parametrize("typed, named", [
    ("ask", "`mindgraph search --hybrid \"QUESTION\"`"), ("query", "`mindgraph search QUERY`"),
    ("compile", "`mindgraph ingest`"), ("index", "`mindgraph ingest` (pages and the keyword index), then `mindgraph embed`"),
    ("dashboard", "`mindgraph serve`"), ("show", "`mindgraph get PAGE`")])
def test_a_word_a_new_user_types_names_the_command_that_does_it(typed, named):
    result = CliRunner().invoke(cli, [typed, "what is a vault"])
    assert result.exit_code == 2
    assert f"No such command '{typed}'. Try {named}" in result.output


def test_every_command_named_for_a_users_word_exists():
    from mindgraph.cli import COMMANDS, ELSEWHERE
    for typed, (command, why) in ELSEWHERE.items():
        named = [command, *re.findall(r"`mindgraph ([^` ]+)", why)]
        assert typed not in COMMANDS, typed
        for name in named:
            assert name in COMMANDS or name.split()[0] in COMMANDS, (typed, name)


def test_check_and_lint_say_apart_what_they_do_in_the_command_list():
    # before: check's line read "Lint the wiki: broken/ambiguous links, pages without..."
    # beside a `lint` command: two linters, told apart by nothing
    listed = {line.split(None, 1)[0]: line.split(None, 1)[1]
              for line in CliRunner().invoke(cli, ["--help"]).output.splitlines()
              if line.startswith("  ") and line.split(None, 1)[0] in ("check", "lint")}
    assert "lint" not in listed["check"].lower() and not listed["check"].endswith("...")
    assert all(what in listed["check"] for what in ("links", "frontmatter", "failed raw notes"))
    assert listed["lint"].startswith("Review content:") and not listed["lint"].endswith("...")
    assert "summaries" in listed["lint"] and "links" not in listed["lint"]


@pytest.mark.parametrize(("args", "detail"), [
    (["search", "--hybird", "x", "--json"], "No such option '--hybird'. Did you mean '--hybrid'?"),
    (["serch", "x", "--json"], "No such command 'serch'. Did you mean search? See `mindgraph "
                               "--help`."),
    (["graph", "neigbors", "Home", "--json"], "No such command 'neigbors'. Did you mean "
                                              "'neighbors'?"),
    (["search", "x", "-n", "abc", "--json"], "Invalid value for '--limit' / '-n': 'abc' is not "
                                             "a whole number."),
])
def test_a_usage_error_with_json_is_a_json_document_on_stdout_too(args, detail):
    """An agent that typed --json and a typo read an empty stdout (the error went to stderr
    only), where a configuration or not-found error is a JSON document."""
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {"error": "UsageError", "detail": detail,
                                         "exit_code": 2}
    assert f"Error: {detail}" in result.stderr
    plain = CliRunner().invoke(cli, [a for a in args if a != "--json"])
    assert plain.exit_code == 2 and plain.stdout == ""
