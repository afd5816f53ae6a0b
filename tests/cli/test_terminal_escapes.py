"""Text that came from agents, notes or the network reaches the owner's terminal with its
control characters written out (``\\x1b``), never as the escape sequences they would be:
an agent's query in `usage`, a note's title and text in `search`, `get` and `check`, a name
quoted in an error. --json stays JSON (which escapes them itself) and the data is unchanged.
"""

from __future__ import annotations

import json

from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

TOKEN = "owner-token-" + "z" * 32
# SGR red, an OSC window title ended by BEL, an OSC 52 clipboard write, a C1 CSI
QUERY = "zzqqxx\x1b[31mRED\x1b]0;PWNED\x07"
TITLE = "Evil \x1b]52;c;aGVsbG8=\x07Trunk"
RAW = ("\x1b", "\x07", "\x9b", "\r")


def raw_controls(text: str) -> list[str]:
    return [c for c in RAW if c in text]


def run(*args: str):
    """The command's result and all it printed (stdout and stderr, as a terminal shows)."""
    result = CliRunner().invoke(cli, list(args))
    return result, result.output


def workspace(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Evil.md").write_text(   # YAML writes ESC as \e and BEL as \a
        '---\ncreated: 2026-03-01\ntitle: "Evil \\e]52;c;aGVsbG8=\\aTrunk"\n---\n'
        "Trunks packed \x1b[2Jcleared\x9b31m and \x1b[1Aup.\rover\n\nSee [[Gone\x9b5m\x07Blink]].\n")
    (tmp_path / "wiki" / "Home.md").write_text("# Home\n\nTrunks and [[Evil]].\n")
    return tmp_path


def test_an_agents_query_in_the_usage_log_is_shown_escaped(tmp_path, monkeypatch):
    base = workspace(tmp_path)
    monkeypatch.setenv("MG_OWNER_TOKEN", TOKEN)
    (base / "mindgraph.yml").write_text("serve: {token_env: MG_OWNER_TOKEN}\n")
    mg = Mindgraph.open(base)
    client = TestClient(create_app(mg, TOKEN), base_url="http://127.0.0.1:8765",
                        headers={"Authorization": f"Bearer {TOKEN}"})
    assert client.get("/search", params={"q": QUERY}).status_code == 200
    assert client.get("/search", params={"q": "trunk\x9b31mC1"}).status_code == 200
    forged = "qq\n      99  forged top query \u202eevil"
    assert client.get("/search", params={"q": forged}).status_code == 200
    mg.close()
    result, shown = run("usage", "-C", str(base))
    assert result.exit_code == 0, shown
    assert raw_controls(shown) == [], repr(shown)
    assert "qq\\x0a      99  forged top query \\u202eevil" in shown    # one row, as asked
    assert "\u202e" not in shown and "\n      99  forged" not in shown
    assert "zzqqxx\\x1b[31mred\\x1b]0;pwned\\x07" in shown     # summarise lower-cases
    assert "trunk\\x9b31mc1" in shown
    # --json is JSON: the query comes back as it was asked, control characters and all
    # (C1 written \u009b as well, which JSON is without being asked)
    result, shown = run("usage", "-C", str(base), "--json")
    assert raw_controls(result.output) == [], repr(result.output)
    queries = {q["query"] for q in json.loads(result.output)["top_queries"]}
    assert {QUERY.lower(), "trunk\x9b31mc1"} <= queries
    stored = [json.loads(line)["query"]
              for line in (base / ".mindgraph" / "usage.jsonl").read_text().splitlines()]
    assert QUERY in stored                       # the log itself keeps what was asked


def test_a_notes_title_and_text_are_shown_escaped(tmp_path):
    base = str(workspace(tmp_path))
    for args in (("search", "trunks"), ("get", "Evil"), ("links", "Evil"), ("check",),
                 ("graph", "hubs"), ("get", "Evil", "--section", "lead"), ("timeline", "trunks"),
                 ("context", "packing trunks")):
        result, shown = run(*args, "-C", base)
        assert raw_controls(shown) == [], (args, repr(shown))
        assert "\\x1b" in shown or "\\x9b5m\\x07" in shown or args[0] == "graph", (args, shown)
    result, shown = run("get", "Evil", "-C", base)
    assert "Trunks packed \\x1b[2Jcleared\\x9b31m and \\x1b[1Aup." in shown
    result, shown = run("context", "packing trunks", "-C", base)
    assert "**Evil \\x1b]52;c;aGVsbG8=\\x07Trunk** (Evil.md)" in shown
    result, shown = run("graph", "communities", "-C", base)
    assert "Evil \\x1b]52;c;aGVsbG8=\\x07Trunk" in shown and raw_controls(shown) == []
    # --json: the title as the note has it
    result, _ = run("search", "trunks", "-C", base, "--json")
    assert "\x1b" not in result.output
    assert TITLE in {r.get("title") for r in json.loads(result.output)["results"]}


def test_an_error_quoting_a_name_shows_it_escaped(tmp_path):
    base = str(workspace(tmp_path))
    result, shown = run("get", "nope\x1b]0;PWNED\x07", "-C", base)
    assert result.exit_code == 1
    assert raw_controls(shown) == [], repr(shown)
    assert "nope\\x1b]0;PWNED\\x07" in shown


def test_a_query_cannot_fake_rows_or_reorder_a_line_in_the_usage_summary():
    """Line breaks, tabs and bidirectional overrides in a logged query are written out."""
    from mindgraph.cli.common import one_line, terminal_safe

    forged = "qq\n      99  forged top query\t\u202eevil"
    assert one_line(forged) == "qq\\x0a      99  forged top query\\x09\\u202eevil"
    assert "\n" not in one_line(forged) and "\u202e" not in terminal_safe(forged)
    assert terminal_safe("line one\nline two") == "line one\nline two"


def test_a_tab_or_line_break_in_a_file_name_is_written_out_by_check_and_lint(tmp_path):
    """`usage` wrote a tab in a query as ``\\x09``; `check` and `lint` printed one in a file
    name raw (and a line break split a finding over two lines). --json keeps the name."""
    (tmp_path / "wiki").mkdir()
    for name in ("odd\tname.md", "two\nlines.md"):
        (tmp_path / "wiki" / name).write_text("# Odd\n\nSee [[Gone]].\n")
    result, shown = run("check", "-C", str(tmp_path))
    assert "error   broken-link      odd\\x09name.md:3: [[Gone]]" in shown
    assert "error   broken-link      two\\x0alines.md:3: [[Gone]]" in shown
    assert "\t" not in shown and "two\nlines" not in shown
    result, _ = run("check", "-C", str(tmp_path), "--json")
    assert {"odd\tname.md", "two\nlines.md"} <= {f["path"] for f in
                                                 json.loads(result.stdout)["findings"]}
    result, shown = run("lint", "-C", str(tmp_path), "--rule", "no-summary")
    assert "no-summary             odd\\x09name.md:1: " in shown
    assert "Fix: Start odd\\x09name.md with" in shown
    assert "\t" not in shown and "two\nlines" not in shown
    result, _ = run("lint", "-C", str(tmp_path), "--json")
    assert "odd\tname.md" in {f["page"] for f in json.loads(result.stdout)["findings"]}
