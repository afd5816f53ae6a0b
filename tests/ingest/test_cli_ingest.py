"""`mindgraph ingest` and `mindgraph pull` through the CLI: output, JSON and exit codes."""

import json
import shutil

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
    assert "Ingested 0, skipped 1, failed 1" in result.output


def test_text_output_says_when_a_hand_edited_page_was_replaced(workspace, write_raw):
    write_raw("a.md", "A note.")
    run("ingest", "-C", str(workspace))
    page = next((workspace / "wiki").glob("*.md"))
    page.write_text(page.read_text() + "\nMy own line.\n")
    write_raw("a.md", "A changed note.")
    result = run("ingest", "-C", str(workspace))
    assert result.exit_code == 0
    assert "Ingested, with a note:" in result.output
    assert f"replaced wiki/{page.name}, which had been edited by hand" in result.output


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
    assert "would compile a.md → wiki/a.md" in result.output
    assert not (workspace / "wiki").exists()


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
    second run writes exactly what a first run over the same raw/ writes."""
    write_raw("ja/Markdownフォーマットインポーター.md",
              "# Markdownフォーマットインポーター\n\nノートを変換する。\n")
    write_raw("Alpha Beta.md", "# Alpha Beta\n\nThe first letters.\n")
    write_raw("ja/設定.md", "Markdownフォーマットインポーターウィンドウで有効化します。\n\n"
                            "Use Synchttps://example.com/x and www.Alpha Beta Gamma here.\n")
    assert run("ingest", "-C", str(workspace)).exit_code == 0
    write_raw("Markdown.md", "# Markdown\n\nA text format.\n")
    write_raw("Sync.md", "# Sync\n\nSyncing notes.\n")
    write_raw("Beta Gamma.md", "# Beta Gamma\n\nMore letters.\n")
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
