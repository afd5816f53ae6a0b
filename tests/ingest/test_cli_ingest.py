"""`mindgraph ingest` and `mindgraph pull` through the CLI: output, JSON and exit codes."""

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from mindgraph.cli import cli


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_ingest_json_summary_and_exit_codes(workspace, write_raw):
    write_raw("a.md", "A note.")
    result = run("ingest", "-C", str(workspace), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["ingested"], data["failed"], data["ok"]) == (1, 0, True)
    assert set(data) >= {"ingested", "skipped", "failed", "removed", "provider_calls",
                         "seconds", "files"}
    write_raw("bad.md", b"\xff\xfe")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 1
    assert "bad.md:1: not valid UTF-8" in result.output
    assert "Ingested 0, unchanged 1, skipped 0, failed 1" in result.output


def test_unchanged_notes_are_counted_apart_from_notes_skipped_for_a_reason(workspace, write_raw):
    """"Ingested 1, skipped 356" read as 356 notes left out: they were unchanged. The
    summary says "unchanged" for those and "skipped" only for a file skipped for a reason (an
    empty note, an attachment); --json keeps ``skipped`` as it was (every file not compiled)
    and adds ``unchanged``."""
    write_raw("a.md", "A note.")
    write_raw("b.md", "Another note.")
    write_raw("empty.md", "")
    write_raw("diagram.png", b"\x89PNG\r\n\x1a\n")
    run("ingest", "-C", str(workspace))
    write_raw("c.md", "A new note.")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 0, result.output
    assert "Ingested 1, unchanged 2, skipped 2, failed 0" in result.output
    write_raw("d.md", "One more.")
    data = json.loads(run("ingest", "-C", str(workspace), "--json").stdout)
    assert (data["ingested"], data["unchanged"], data["skipped"]) == (1, 3, 5)


def test_text_output_says_when_a_hand_edited_page_was_replaced(workspace, write_raw):
    write_raw("a.md", "A note.")
    run("ingest", "-C", str(workspace))
    page = next((workspace / "wiki").glob("*.md"))
    page.write_text(page.read_text() + "\nMy own line.\n")
    write_raw("a.md", "A changed note.")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 0
    assert "Ingested, with a note:" in result.output
    assert f"replaced wiki/{page.name}, which had been edited by hand (the raw note " \
        f"changed; raw/ is the source of truth)." in result.output
    # recompiled unchanged (--force): it said "the raw note changed" all the same
    page.write_text(page.read_text() + "\nMy own line again.\n")
    forced = run("ingest", "-C", str(workspace), "--force")
    assert f"replaced wiki/{page.name}, which had been edited by hand (its unchanged raw " \
        f"note was compiled again: --force, a page it links to changed, or a new compiler; " \
        f"raw/ is the source of truth)." in forced.output, forced.output


def test_ingest_usage_and_config_errors_exit_2(workspace, write_raw):
    write_raw("a.md", "A note.")
    assert run("ingest", "-C", str(workspace), "--only", "missing.md").exit_code == 2
    (workspace / "mindgraph.yml").write_text("compile:\n  bogus: 1\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 2 and "compile.bogus" in result.output
    (workspace / "mindgraph.yml").write_text("compile:\n  provider: anthropic\n"
                                             "  api_key_env: MG_TEST_UNSET_KEY\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 2 and "MG_TEST_UNSET_KEY" in result.output


def test_dry_run_lists_what_would_happen(workspace, write_raw):
    write_raw("a.md", "A note.")
    result = run("ingest", "-C", str(workspace), "--dry-run")
    assert result.exit_code == 0
    assert "would compile raw/a.md → wiki/a.md" in result.output
    assert not (workspace / "wiki").exists()


def test_a_dry_run_names_the_wiki_folder_paths_wiki_gives(workspace, write_raw,
                                                          tmp_path_factory):
    # before: "→ wiki/a.md" whatever paths.wiki said
    write_raw("a.md", "A note.")
    elsewhere = tmp_path_factory.mktemp("outside") / "published"
    for wiki, shown in (("build/pages", "build/pages"), (str(workspace / "kb"), "kb"),
                        (str(elsewhere), str(elsewhere.resolve()))):
        (workspace / "mindgraph.yml").write_text(f"paths:\n  wiki: {wiki}\n")
        result = run("ingest", "-C", str(workspace), "--dry-run")
        assert result.exit_code == 0, result.output
        assert f"  would compile raw/a.md → {shown}/a.md" in result.output.splitlines()
    assert not (workspace / "wiki").exists() and not elsewhere.exists()


def test_pull_then_ingest(workspace, tmp_path_factory):
    source = tmp_path_factory.mktemp("notes")
    (source / "sub").mkdir()
    (source / "sub" / "Idea.md").write_text("An idea.")
    (workspace / "mindgraph.yml").write_text(
        f"adapters:\n  - name: notes\n    type: filesystem\n    target: inbox\n"
        f"    options: {{path: {source}}}\n")
    result = run("pull", "-C", str(workspace), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["written"] == 1
    assert (workspace / "raw" / "inbox" / "sub" / "Idea.md").read_text() == "An idea."
    assert run("ingest", "-C", str(workspace)).exit_code == 0
    assert (workspace / "wiki" / "inbox" / "sub" / "Idea.md").exists()


def test_pull_without_adapters_is_a_config_error(workspace):
    result = run("pull", "-C", str(workspace))
    assert result.exit_code == 2 and "no adapters are configured" in result.output


def test_progress_bar_goes_to_stderr_on_a_terminal(workspace, write_raw, monkeypatch):
    for i in range(3):
        write_raw(f"n{i}.md", f"Note {i}.")
    monkeypatch.setattr("mindgraph.cli.progress.is_terminal", lambda: True)
    result = CliRunner().invoke(cli, ["ingest", "-C", str(workspace), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0
    assert "Compiling" in result.stderr
    assert json.loads(result.stdout)["ingested"] == 3     # stdout stays pure JSON


def test_a_five_thousand_character_title_does_not_stop_the_run(workspace, write_raw):
    long_title = "Checklist " + "L" * 5000          # a note app's item, a pasted paragraph
    write_raw("long.md", f"---\ntitle: {long_title}\n---\nSee Kyoto trip for the dates.\n")
    write_raw("Kyoto trip.md", "Temples and gardens.")
    result = run("ingest", "-C", str(workspace), "--json")
    assert result.exit_code == 0, result.output[-2000:]
    assert json.loads(result.output)["ingested"] == 2
    # the other titles are still linked where a note mentions them
    assert "[[Kyoto trip]]" in (workspace / "wiki" / "long.md").read_text("utf-8")


def test_a_page_added_later_is_linked_where_the_scan_must_find_it(workspace, write_raw,
                                                                  tmp_path_factory):
    """A second run relinks only the notes whose scanned mentions name a page that
    appeared; a note mentioning the new title in a way only the linker saw was left
    unlinked (test_link_scan.py). Here the new "Markdown" is the start of a katakana
    compound the linker cuts it from, and "Sync" and "Beta Gamma" are glued to a URL: the
    second run writes exactly what a first run over the same raw/ writes. Every page is in
    Japanese: a Japanese note links only to pages in its language (test_link_language.py)."""
    write_raw("ja/Markdownフォーマットインポーター.md",
              "# Markdownフォーマットインポーター\n\nノートを変換する。\n")
    write_raw("Alpha Beta.md", "# Alpha Beta\n\n最初の文字です。\n")
    write_raw("ja/設定.md", "Markdownフォーマットインポーターウィンドウで有効化します。\n\n"
                            "Use Synchttps://example.com/x and www.Alpha Beta Gamma here.\n")
    assert run("ingest", "-C", str(workspace)).exit_code == 0
    write_raw("Markdown.md", "# Markdown\n\nテキストの形式です。\n")
    write_raw("Sync.md", "# Sync\n\nノートを同期します。\n")
    write_raw("Beta Gamma.md", "# Beta Gamma\n\nほかの文字です。\n")
    result = run("ingest", "-C", str(workspace), "--json")
    assert result.exit_code == 0, result.output
    ingested = {f["path"] for f in json.loads(result.output)["files"]
                if f["status"] == "ingested"}
    assert {"Markdown.md", "Sync.md", "Beta Gamma.md", "ja/設定.md"} <= ingested
    page = (workspace / "wiki" / "ja" / "設定.md").read_text(encoding="utf-8")
    assert "[[Markdown]]フォーマットインポーターウィンドウ" in page
    assert "Use Synchttps://example.com/x and www.Alpha Beta Gamma here." in page
    fresh = tmp_path_factory.mktemp("fresh")
    shutil.copytree(workspace / "raw", fresh / "raw")
    assert run("ingest", "-C", str(fresh)).exit_code == 0
    assert tree_bytes(fresh / "wiki") == tree_bytes(workspace / "wiki")


def tree_bytes(root):
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


DOUBLED = re.compile(r"(?:^|\s)(\S+): \1[:\s]")      # "a.md: a.md:4: ..."


def test_failures_and_warnings_name_their_file_once(workspace, write_raw):
    (workspace / "mindgraph.yml").write_text("compile:\n  max_note_bytes: 2000\n")
    write_raw("badfm.md", "---\ntitle: x\nbad: [1, 2\nfoo: bar\n---\nbody\n")
    write_raw("badutf.md", b"\xff\xfeA")
    write_raw("big.md", "word " * 1000)
    write_raw("dup.md", "One.\n")
    write_raw("dup.txt", "Two.\n")
    write_raw("sub/warn.md", "---\naliases: 5\ndate: notadate\n---\nBody text.\n")
    write_raw("empty.md", "")
    write_raw("image.png", b"\x89PNG")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 1
    out = result.output
    assert not DOUBLED.search(out), out
    lines = out.splitlines()
    assert "  raw/badfm.md:4: frontmatter is not valid YAML (expected ',' or ']', but got ':'). " \
           "Fix the YAML between the '---' lines: a '[' list opened on line 3 is never closed " \
           "(add ']')." in lines
    assert any(ln.startswith("  raw/badutf.md:1: not valid UTF-8 (byte 0xff") for ln in lines)
    assert any(ln.startswith("  raw/big.md: 5000 bytes is over compile.max_note_bytes (2000)")
               for ln in lines)
    # the page it collides on is named as a page, not as the same name twice
    assert "  raw/dup.txt: compiles to the same wiki page as dup.md (wiki/dup.md); rename one " \
           "of the two notes." in lines
    assert any(ln.startswith("  raw/sub/warn.md:2: frontmatter 'aliases' holds 5") for ln in lines)
    assert any(ln.startswith("    raw/sub/warn.md:3: frontmatter 'date'") for ln in lines)
    # reasons that do not name their file get it once in front
    assert "  raw/empty.md: empty note; nothing to compile." in lines
    # attachments are counted in one line, not listed among the real skips; --json has them
    assert "1 attachment (png) kept for links, not compiled (--json lists them)." in lines
    assert not any("image.png" in ln for ln in lines)
    # --json keeps path and reason apart; the reason names the file (and line) once
    data = json.loads(run("ingest", "-C", str(workspace), "--json", "--force").output)
    reasons = {f["path"]: f["reason"] for f in data["files"]}
    assert reasons["badfm.md"].startswith("badfm.md:4: frontmatter is not valid YAML")
    assert reasons["empty.md"] == "empty note; nothing to compile."
    assert reasons["image.png"].startswith("not a note (.png)")
    assert reasons["sub/warn.md"].split("\n")[1].startswith("sub/warn.md:3: ")
    assert not any(DOUBLED.search(r) for r in reasons.values()), reasons


def test_a_yaml_error_gets_the_hint_of_what_it_is_about(workspace, write_raw):
    write_raw("list.md", "---\ntags: [people\n---\nBob.\n")
    write_raw("map.md", "---\nwho: {name: Bob\n---\nBob.\n")
    write_raw("colon.md", "---\ntitle: Re: the plan\n---\nPlan.\n")
    lines = run("ingest", "-C", str(workspace)).output.splitlines()
    said = {ln.split(":", 1)[0].strip().removeprefix("raw/"): ln for ln in lines
            if "not valid YAML" in ln}
    assert said["list.md"].endswith("a '[' list opened on line 2 is never closed (add ']').")
    assert said["map.md"].endswith("a '{' mapping opened on line 2 is never closed (add '}').")
    assert "quote values that contain ':'" in said["colon.md"]
    assert not any("':'" in said[name] for name in ("list.md", "map.md"))


def test_a_tab_or_a_value_beginning_with_a_reserved_character_is_named_with_its_fix(
        workspace, write_raw):
    """A tab indenting a list and an unquoted '@', '*', '!' or '`' at a value's start were
    "not valid YAML (found character '\\t' that cannot start any token)" and no more."""
    write_raw("tab.md", "---\ntags:\n\t- travel\n---\nTrip.\n")
    write_raw("at.md", "---\ntitle: Trip\nowner: @bob\n---\nTrip.\n")
    write_raw("star.md", "---\nstatus: *draft*\n---\nDraft.\n")
    write_raw("bang.md", "---\nnote: !important\n---\nNote.\n")
    write_raw("tick.md", "---\ncmd: `ls -la`\n---\nList.\n")
    write_raw("quoted.md", "---\nsaid: @bob said \"hi\"\n---\nHi.\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 1
    said = {ln.split(":", 1)[0].strip().removeprefix("raw/"): ln.strip()
            for ln in result.output.splitlines() if "not valid YAML" in ln}
    assert said["tab.md"].startswith("raw/tab.md:3: ")
    assert said["tab.md"].endswith("YAML indents with spaces, not tabs (replace the tab with "
                                   "spaces).")
    assert said["at.md"].startswith("raw/at.md:3: ")
    for name, fix in (("at.md", 'owner: "@bob"'), ("star.md", 'status: "*draft*"'),
                      ("bang.md", 'note: "!important"'), ("tick.md", 'cmd: "`ls -la`"'),
                      ("quoted.md", 'key: "@…"')):
        sign = fix.split('"')[1][0]
        assert said[name].endswith(f"a value that begins with '{sign}' must be in quotes "
                                   f"({fix})."), said[name]


def test_a_dry_run_says_what_it_would_do_with_deleted_notes(workspace, write_raw):
    write_raw("gone.md", "A note to delete.\n")
    write_raw("kept.md", "A note whose page is edited.\n")
    assert run("ingest", "-C", str(workspace)).exit_code == 0
    (workspace / "raw" / "gone.md").unlink()
    (workspace / "raw" / "kept.md").unlink()
    page = workspace / "wiki" / "kept.md"
    page.write_text(page.read_text() + "\nMy own line.\n")
    result = run("ingest", "-C", str(workspace), "--dry-run")
    assert result.exit_code == 0
    assert "  raw/gone.md: raw note deleted; would remove wiki/gone.md." in result.output
    assert "  raw/kept.md: raw note deleted, but wiki/kept.md was edited by hand after mindgraph " \
           "wrote it: would keep it and mark it source_deleted: true." in result.output
    assert "would raw" not in result.output
    assert (workspace / "wiki" / "gone.md").exists()
    # every page would go: the dry run says the run would be held, and it is (guard.py)
    assert "Without --dry-run this run would be held: ingest held" in result.output
    held = run("ingest", "-C", str(workspace))
    assert held.exit_code == 1 and "remove 2 of the 2 wiki pages" in held.output
    assert (workspace / "wiki" / "gone.md").exists()
    result = run("ingest", "-C", str(workspace), "--allow-removals")
    assert "  raw/gone.md: raw note deleted; removed wiki/gone.md." in result.output
    assert "wrote it: kept it and marked it source_deleted: true." in result.output


def test_a_frontmatter_list_past_the_value_limit_fails_its_note_naming_the_field(workspace,
                                                                               write_raw):
    """tags: with 100,000 items said "more than 10,000 values once its YAML aliases are
    expanded, or nests deeper than 50" at line 2, whatever the field and its line."""
    tags = "\n".join(f"  - t{i}" for i in range(100_000))
    write_raw("many.md", f"---\ncreated: 2024-01-01\ntags:\n{tags}\n---\n# Many\n\nBody.\n")
    write_raw("fine.md", "# Fine\n\nA note beside it.\n")
    before = tree_bytes(workspace / "raw")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 1
    assert "  raw/many.md:3: frontmatter field 'tags' holds 100,000 items, past the 10,000-value " \
           "limit for a note's frontmatter. Shorten the list, or move it into the note's " \
           "body." in result.output.splitlines()
    assert "Ingested 1, unchanged 0, skipped 0, failed 1" in result.output    # the other goes on
    assert [p.name for p in (workspace / "wiki").glob("*.md")] == ["fine.md"]
    assert tree_bytes(workspace / "raw") == before                # raw/ untouched
    data = json.loads(run("ingest", "-C", str(workspace), "--json").stdout)
    assert {f["path"]: f["reason"] for f in data["files"] if f.get("reason")}["many.md"] \
        .startswith("many.md:3: frontmatter field 'tags' holds 100,000 items")


# `mindgraph ingest` in a fresh process, noting which process hashes which file
HASHED_BY_PROBE = """
import hashlib, os, sys
from pathlib import Path

real, log = hashlib.file_digest, sys.argv[2]
def noted(handle, name):
    with open(log, "a") as out:
        out.write(f"{os.getpid()} {Path(handle.name).name}\\n")
    return real(handle, name)
hashlib.file_digest = noted
print(os.getpid())
from mindgraph.cli import main
sys.argv = ["mindgraph", "ingest", "-C", sys.argv[1], "--json"]
main()
"""


def test_a_first_ingest_checks_the_dictionaries_hashed_in_a_process_of_their_own(
        workspace, write_raw, tmp_path_factory):
    """UniDic's files are hashed in a process forked as the command starts (on a core its
    start-up leaves idle), not in the run's own; the run still checks them against the pins
    before MeCab loads (a Japanese note compiles), and keeps them for the next run."""
    import subprocess
    import sys

    write_raw("ノート.md", "# ノート\n\nノートを同期する方法。\n")
    log = tmp_path_factory.mktemp("log") / "hashed.txt"
    done = subprocess.run([sys.executable, "-c", HASHED_BY_PROBE, str(workspace), str(log)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    parent = done.stdout.split("\n", 1)[0]
    assert json.loads(done.stdout.split("\n", 1)[1])["ingested"] == 1
    hashed = [line.split() for line in log.read_text().splitlines()]
    by = {name: pid for pid, name in hashed}
    assert sorted(by) == ["char.bin", "dicrc", "matrix.bin", "rjieba.abi3.so", "sys.dic",
                          "unk.dic"]
    assert len(hashed) == len(by) and parent not in by.values()     # once, and not here
    kept = json.loads((workspace / ".mindgraph" / "file-digests.json").read_text())
    assert sorted(Path(p).name for p in kept) == sorted(by)
    log.unlink()
    write_raw("ノート.md", "# ノート\n\nノートを開く方法。\n")
    done = subprocess.run([sys.executable, "-c", HASHED_BY_PROBE, str(workspace), str(log)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not log.exists()           # the next run trusts the kept digests: no process hashes


def test_a_first_ingest_of_english_notes_hashes_no_dictionary(workspace, write_raw,
                                                              tmp_path_factory):
    """A workspace of English notes never loads a segmenter: its first run forked a process
    hashing UniDic's 260 MB for nothing (~0.2 s of CPU), and a short run, which stops that
    process unfinished and keeps no digest, did it again at every start."""
    import subprocess
    import sys

    for i in range(20):
        write_raw(f"notes/note {i}.md", f"# Note {i}\n\nAn English note about topic {i}.\n")
    log = tmp_path_factory.mktemp("log") / "hashed.txt"
    done = subprocess.run([sys.executable, "-c", HASHED_BY_PROBE, str(workspace), str(log)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.split("\n", 1)[1])["ingested"] == 20
    assert not log.exists()


def test_a_japanese_note_behind_english_ones_is_hashed_ahead(workspace, write_raw,
                                                             tmp_path_factory):
    """The look at raw/ samples every folder: a Japanese note named in ASCII, in a folder
    after one of many English notes, still has the dictionaries hashed as the run starts."""
    import subprocess
    import sys

    for i in range(40):
        write_raw(f"a/note {i}.md", f"# Note {i}\n\nAn English note about topic {i}.\n")
    write_raw("b/sync.md", "# 同期\n\nノートを同期する方法。\n")
    log = tmp_path_factory.mktemp("log") / "hashed.txt"
    done = subprocess.run([sys.executable, "-c", HASHED_BY_PROBE, str(workspace), str(log)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    parent = done.stdout.split("\n", 1)[0]
    by = {name: pid for pid, name in (line.split() for line in log.read_text().splitlines())}
    assert "sys.dic" in by and by["sys.dic"] != parent       # in the process forked ahead


def test_the_look_at_raw_reads_the_state_file_ingest_writes():
    from mindgraph.ingest import segmenter_need, state

    assert segmenter_need.STATE_FILENAME == state.STATE_FILENAME


# `mindgraph ingest --dry-run` in a fresh process that waits for the dictionaries' hash_ahead
# child to finish before settling it (a slow start-up would give it that time too)
DRY_RUN_PROBE = """
import os, sys
from mindgraph import fsutil
from mindgraph.cli import ingest_cmd, main

settle = ingest_cmd.settle_ahead
def finished_first(*args, **kwargs):
    for ahead in set(fsutil._AHEAD.values()):
        os.waitpid(ahead.pid, 0)
    settle(*args, **kwargs)
ingest_cmd.settle_ahead = finished_first
sys.argv = ["mindgraph", "ingest", "-C", sys.argv[1], "--dry-run"]
main()
"""


def test_a_dry_run_keeps_no_digests_hashed_ahead(workspace, write_raw):
    """--dry-run writes nothing: the dictionaries hashed ahead as the command starts are not
    kept for the workspace (its state folder is not even made), even when that process was
    done before the run ended."""
    import subprocess
    import sys

    write_raw("note.md", "# Note\n\nAn English note: no dictionary loads.\n")
    done = subprocess.run([sys.executable, "-c", DRY_RUN_PROBE, str(workspace)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "note.md" in done.stdout
    assert sorted(p.name for p in workspace.iterdir()) == ["raw"]


def test_a_state_folder_that_cannot_be_written_is_named_not_a_traceback(workspace, write_raw):
    """Where the state folder cannot be made or written (read-only, or a file in its place),
    ingest says so and what to do (it printed a traceback of the lock file's open)."""
    write_raw("a.md", "# A\n\nA note.\n")
    (workspace / ".mindgraph").write_text("not a folder")
    result = CliRunner().invoke(cli, ["ingest", "-C", str(workspace)])
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"cannot write the state folder {workspace / '.mindgraph'}" in result.output
    assert not (workspace / "wiki").exists()


def test_a_value_yaml_reads_as_a_comment_is_a_warning_with_the_fix(workspace, write_raw):
    """``tags: #project`` (a tag written as in the text) is a YAML comment: the page had no
    tag and nothing said why. A field left empty on purpose says nothing."""
    write_raw("hashtag.md", "---\ntitle: Plan\ntags: #project #q3\n---\nThe plan.\n")
    write_raw("empty.md", "---\ntitle: Empty\ntags:\nstatus: # to do\n---\nLater.\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 0, result.output
    assert ("  raw/hashtag.md:3: frontmatter 'tags' is empty: '#project #q3' after 'tags:' is a "
            "YAML comment, so the value was dropped. Write it without the '#' (tags: project "
            "q3) or in quotes.") in result.output.splitlines()
    assert "empty.md" not in result.output
    check = run("check", "-C", str(workspace)).output
    assert "raw-warning      raw/hashtag.md:3: frontmatter 'tags' is empty" in check


def test_a_frontmatter_key_written_twice_is_a_warning_naming_both_lines(workspace, write_raw):
    """``tags`` twice kept the second list alone, without a word: the first tags were gone
    from the page, its search and its graph edges. Nested and list lines are not keys."""
    write_raw("twice.md", "---\ntags: [garden]\ntitle: Plan\nmeta:\n  tags: x\n"
                          "tags: [compost]\n---\nThe plan.\n")
    write_raw("once.md", "---\ntags:\n  - a\n  - b\nabout: |\n  tags: inside text\n---\nOk.\n")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 0, result.output
    assert ("  raw/twice.md:6: frontmatter 'tags' is written 2 times (lines 2, 6); only the last "
            "value ([compost]) is kept. Remove the others, or merge them into one."
            ) in result.output.splitlines()
    assert "once.md" not in result.output


def test_a_failed_note_is_named_as_check_names_it_in_a_vault_kept_apart(tmp_path):
    """A workspace made as the README says for an Obsidian vault (`init WS --raw VAULT`):
    ingest listed "Broken yaml.md:4" and the watch log "(Broken yaml.md:4: …)", where `check`
    said "../vault/Broken yaml.md:4" — the only one of the three a user in the workspace can
    open. Ingest, its warnings and its dry run name the raw note under paths.raw now."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Broken yaml.md").write_text("---\ntitle: Broken\ntags: [a, b\ndate: x\n---\n")
    (vault / "Odd.md").write_text("---\ntags: 5\n---\n# Odd\n")
    (vault / "Fine.md").write_text("# Fine\n\nA fine note.\n")
    ws = tmp_path / "ws"
    assert run("init", str(ws), "--raw", str(vault)).exit_code == 0
    assert "  would compile ../vault/Fine.md → wiki/Fine.md" in \
        run("ingest", "-C", str(ws), "--dry-run").output
    result = run("ingest", "-C", str(ws))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    failed = next(ln for ln in lines if "not valid YAML" in ln)
    assert failed.startswith("  ../vault/Broken yaml.md:4: frontmatter is not valid YAML")
    assert any(ln.startswith("  ../vault/Odd.md:2: frontmatter 'tags' holds 5") for ln in lines)
    check = run("check", "-C", str(ws)).output
    assert "../vault/Broken yaml.md:4: failed to compile" in check
