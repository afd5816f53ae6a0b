"""One limit story, checked at config load and reported per file when hit (never a crash):
limits.max_page_bytes (what is read as a page), limits.max_indexed_chars (what search
indexes), and compile.max_note_bytes, which may not exceed the page limit."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.page.vault import PageLimits


def _workspace(tmp_path, config=""):
    base = tmp_path / "kb"
    assert CliRunner().invoke(cli, ["init", str(base)]).exit_code == 0
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n" + config)
    return base


def _run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_a_note_limit_above_the_page_limit_is_refused_at_load(tmp_path):
    base = _workspace(tmp_path, "compile:\n  max_note_bytes: 50000000\n")
    result = _run("ingest", "-C", str(base))
    assert result.exit_code == 2
    assert "compile.max_note_bytes" in result.output and "limits.max_page_bytes" in result.output
    assert "Lower" in result.output                                       # the fix
    (base / "mindgraph.yml").write_text("compile:\n  max_note_bytes: 50000000\n"
                                        "limits:\n  max_page_bytes: 60000000\n")
    assert load_settings(base).limits.max_page_bytes == 60_000_000


def test_the_env_override_is_checked_the_same_way(tmp_path, monkeypatch):
    base = _workspace(tmp_path)
    monkeypatch.setenv("MINDGRAPH_LIMITS__MAX_PAGE_BYTES", "1000000")
    result = _run("stats", "-C", str(base))
    assert result.exit_code == 2 and "compile.max_note_bytes" in result.output


def test_a_note_whose_page_would_be_over_the_page_limit_fails_instead_of_ingesting(tmp_path):
    base = _workspace(tmp_path, "compile:\n  max_note_bytes: 5000\n"
                                "limits:\n  max_page_bytes: 5000\n")
    (base / "raw" / "Big.md").write_text("# Big\n\n" + "word " * 990)   # 4957 bytes
    (base / "raw" / "Links.md").write_text("# Links\n\nSee [[Big]].\n")
    result = _run("ingest", "-C", str(base), "--json")
    report = json.loads(result.output)
    failed = {f["path"]: f["reason"] for f in report["files"] if f["status"] == "failed"}
    assert list(failed) == ["Big.md"], report
    assert "limits.max_page_bytes" in failed["Big.md"]
    assert not (base / "wiki" / "Big.md").exists()


def test_a_page_over_the_page_limit_is_reported_and_the_rest_still_answers(tmp_path):
    base = _workspace(tmp_path, "compile:\n  max_note_bytes: 2000\n"
                                "limits:\n  max_page_bytes: 2000\n")
    (base / "raw" / "Small.md").write_text("# Small\n\nA small note about canvas.\n")
    assert _run("ingest", "-C", str(base)).exit_code == 0
    (base / "wiki" / "Huge.md").write_text("# Huge\n\n" + "canvas " * 1000)
    check = json.loads(_run("check", "-C", str(base), "--json").output)
    [finding] = [f for f in check["findings"] if f["path"] == "Huge.md"]
    assert finding["kind"] == "too-large" and "limits.max_page_bytes" in finding["message"]
    search = _run("search", "canvas", "-C", str(base), "--json")
    assert search.exit_code == 0
    assert [hit["page"] for hit in json.loads(search.output)["results"]] == ["Small.md"]


def test_text_past_the_index_limit_is_not_searchable_and_is_reported(tmp_path):
    base = _workspace(tmp_path, "limits:\n  max_indexed_chars: 2000\n")
    filler = "\n".join(f"Line {i} of filler text about nothing much." for i in range(100))
    (base / "wiki").mkdir(exist_ok=True)
    (base / "wiki" / "Long.md").write_text(f"# Long\n\nalpha starts here.\n\n## Middle\n\n"
                                           f"{filler}\n\n## End\n\nomega ends here.\n")
    found = json.loads(_run("search", "alpha", "-C", str(base), "--json").output)["results"]
    assert [hit["page"] for hit in found] == ["Long.md"]
    found = json.loads(_run("search", "omega", "-C", str(base), "--json").output)["results"]
    assert found == []
    check = json.loads(_run("check", "-C", str(base), "--json").output)
    [finding] = [f for f in check["findings"] if f["kind"] == "partly-indexed"]
    assert finding["severity"] == "warning" and finding["path"] == "Long.md"
    assert "limits.max_indexed_chars" in finding["message"]
    page = _run("get", "Long", "-C", str(base))
    assert "omega ends here" in page.output                       # the page itself is whole
    embed = _run("embed", "-C", str(base), "--json")
    assert embed.exit_code == 0, embed.output


def test_ingest_says_when_a_compiled_note_is_past_the_index_limit(tmp_path):
    # ingest compiled it without a word; only `check` said its end was not searchable
    base = _workspace(tmp_path, "limits:\n  max_indexed_chars: 2000\n")
    filler = "\n".join(f"Line {i} of filler text about nothing much." for i in range(100))
    (base / "raw" / "Long.md").write_text(f"# Long\n\nalpha starts here.\n\n{filler}\n\n"
                                          f"## End\n\nomega ends here.\n")
    (base / "raw" / "Short.md").write_text("# Short\n\nA short note.\n")
    ingest = _run("ingest", "-C", str(base))
    assert ingest.exit_code == 0, ingest.output
    assert "Ingested, with a note:\n  raw/Long.md: its page's last " in ingest.output
    assert "index limit (limits.max_indexed_chars)" in ingest.output
    assert "Short.md" not in ingest.output
    data = json.loads(_run("ingest", "-C", str(base), "--force", "--json").stdout)
    [long] = [f for f in data["files"] if f["path"] == "Long.md"]
    assert "limits.max_indexed_chars" in long["reason"]


def test_raising_a_limit_rereads_the_cached_pages(tmp_path):
    base = _workspace(tmp_path, "limits:\n  max_indexed_chars: 1000\n")
    (base / "wiki").mkdir(exist_ok=True)
    (base / "wiki" / "Long.md").write_text("# Long\n\n" + "filler words here. " * 100
                                           + "\n\n## End\n\nomega\n")
    assert json.loads(_run("search", "omega", "-C", str(base), "--json").output)["results"] == []
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    found = json.loads(_run("search", "omega", "-C", str(base), "--json").output)["results"]
    assert [hit["page"] for hit in found] == ["Long.md"]


def test_the_defaults_agree_with_each_other():
    settings = load_settings("/nonexistent-folder-for-defaults")
    assert settings.compile.max_note_bytes <= settings.limits.max_page_bytes
    assert PageLimits.of(settings.limits) == PageLimits()


def test_a_config_over_one_mib_is_refused_unread_naming_the_file_and_the_limit(tmp_path):
    base = _workspace(tmp_path)
    big = tmp_path / "big.yml"
    big.write_text("embedding:\n  provider: hashing\n" + "# padding\n" * 5_300_000)  # ~53 MB
    size = big.stat().st_size
    given = _run("--config", str(big), "stats")                 # given with --config
    big.replace(base / "mindgraph.yml")
    found = _run("stats", "-C", str(base))                      # the workspace's own
    for result, path in ((given, big), (found, base / "mindgraph.yml")):
        assert result.exit_code == 2
        assert (f"Error: Config file {path} is {size:,} bytes, over the 1,048,576-byte "
                f"(1 MiB) limit for a config file; not read.") in result.output
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n"
                                        + "# padding\n" * 100_000)        # ~1 MB: under
    assert _run("stats", "-C", str(base)).exit_code == 0
