"""The usage log: lines, rotation, concurrent writers, summary."""

import json
import threading

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.usage import UsageLog, summarise


def test_record_and_summarise(tmp_path):
    log = UsageLog(tmp_path / "usage.jsonl")
    log.record("cli", "Bookmarks", intent="concept", results=["a.md", "b.md"], result_count=2,
               latency_ms=12.5)
    log.record("rest", "bookmarks ", intent="concept", results=["a.md"], result_count=1,
               latency_ms=400)
    log.record("mcp", "nothing here", intent="default", results=[], result_count=0,
               latency_ms=3)
    summary = summarise(log.lines(), slow_ms=200)
    assert summary["queries"] == 3
    assert summary["top_queries"][0] == {"query": "bookmarks", "count": 2}
    assert summary["zero_result_queries"] == [{"query": "nothing here", "count": 1}]
    assert [s["query"] for s in summary["slow_queries"]] == ["bookmarks "]
    assert summary["interfaces"] == {"cli": 1, "rest": 1, "mcp": 1}
    assert summary["latency_ms"]["median"] == 12.5


def test_rotation_keeps_every_line_readable(tmp_path):
    log = UsageLog(tmp_path / "usage.jsonl", max_bytes=2_000, keep=3)
    for i in range(40):
        log.record("cli", f"query {i}", results=["x.md"], result_count=1)
    assert (tmp_path / "usage.jsonl.1").exists()
    assert sum(f.stat().st_size for f in tmp_path.iterdir()) < 4 * 2_000
    queries = [line["query"] for line in log.lines()]
    assert queries == sorted(queries, key=lambda q: int(q.split()[1]))  # oldest first
    assert queries[-1] == "query 39"


def test_concurrent_writers_never_tear_lines(tmp_path):
    log = UsageLog(tmp_path / "usage.jsonl")
    threads = [threading.Thread(target=lambda n=n: [log.record("rest", f"q{n}-{i}" * 50)
                                                    for i in range(50)]) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raw = (tmp_path / "usage.jsonl").read_text().splitlines()
    assert len(raw) == 400 and all(json.loads(line)["interface"] == "rest" for line in raw)


def test_disabled_log_records_nothing(tmp_path):
    log = UsageLog(None)
    log.record("cli", "x")
    assert list(log.lines()) == []


def test_usage_command(tmp_path):
    UsageLog(tmp_path / ".mindgraph" / "usage.jsonl").record("cli", "canvas", result_count=0)
    result = CliRunner().invoke(cli, ["usage", "-C", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["zero_result_queries"] == [{"query": "canvas", "count": 1}]
    (tmp_path / "fresh" / "wiki").mkdir(parents=True)
    empty = CliRunner().invoke(cli, ["usage", "-C", str(tmp_path / "fresh")])
    assert empty.exit_code == 0 and "No queries logged yet" in empty.output
    outside = CliRunner().invoke(cli, ["usage", "-C", str(tmp_path / "none")])
    assert outside.exit_code == 2 and "does not exist (no such folder)" in outside.output


def test_lookups_are_not_zero_result_queries(tmp_path):
    log = UsageLog(tmp_path / ".mindgraph" / "usage.jsonl")
    log.record("mcp", "", intent="stats", kind="lookup", result_count=1)
    log.record("mcp", "A.md -> B.md", intent="path", kind="lookup", result_count=0)
    log.record("mcp", "no such thing", intent="search", result_count=0)
    with log.path.open("a") as handle:      # a line from before kinds were logged
        handle.write(json.dumps({"query": "old line", "results": 0}) + "\n")
    summary = summarise(log.lines())
    assert [q["query"] for q in summary["zero_result_queries"]] == ["no such thing", "old line"]
    assert (summary["queries"], summary["lookups"]) == (2, 2)
    assert summary["kinds"] == {"lookup": 2, "query": 2}
    text = CliRunner().invoke(cli, ["usage", "-C", str(tmp_path)])
    assert text.exit_code == 0 and "2 queries and 2 lookups" in text.output


def test_one_query_and_one_lookup_are_counted_in_the_singular(tmp_path):
    log = UsageLog(tmp_path / ".mindgraph" / "usage.jsonl")
    log.record("cli", "trunks", intent="search", result_count=1)
    log.record("rest", "Packing.md", intent="page", kind="lookup", result_count=1)
    (tmp_path / "wiki").mkdir()
    text = CliRunner().invoke(cli, ["usage", "-C", str(tmp_path)])
    assert text.exit_code == 0 and "1 query and 1 lookup;" in text.output


ROTATING_WRITER = """
import sys
from pathlib import Path
from mindgraph.usage import UsageLog
log = UsageLog(Path(sys.argv[1]), max_bytes=3000, keep=500)
for i in range(int(sys.argv[3])):
    log.record("rest", f"{sys.argv[2]} query {i}", result_count=1)
"""


def test_serve_processes_sharing_a_log_never_lose_a_line_when_it_rotates(tmp_path):
    """Two processes past max_bytes at once both rotated: the second rename found no file (its
    line lost) or pushed the fresh log aside as well."""
    import subprocess
    import sys
    log = tmp_path / "usage.jsonl"
    writers = [subprocess.Popen([sys.executable, "-c", ROTATING_WRITER, str(log), name, "400"])
               for name in ("a", "b", "c")]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0]
    lines = [line for path in tmp_path.glob("usage.jsonl*") if not path.name.endswith(".lock")
             for line in path.read_text().splitlines()]
    assert len(lines) == 1200
    assert all(len(path.read_bytes()) <= 3000 for path in tmp_path.glob("usage.jsonl*"))


def test_the_log_of_what_agents_asked_is_private_to_its_owner(tmp_path):
    """usage.jsonl names every question asked: it was created 0644 (readable by every local
    user) where the rest of the state folder is 0600."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Kayak.md").write_text("# Kayak\n\nA boat.\n", encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "-C", str(tmp_path)]).exit_code == 0
    result = runner.invoke(cli, ["search", "kayak", "-C", str(tmp_path)])
    assert result.exit_code == 0, result.output
    log = tmp_path / ".mindgraph" / "usage.jsonl"
    assert log.stat().st_mode & 0o777 == 0o600
    log.chmod(0o644)            # written by an older version: narrowed on the next query
    runner.invoke(cli, ["search", "boat", "-C", str(tmp_path)])
    assert log.stat().st_mode & 0o777 == 0o600
    assert [line["query"] for line in UsageLog(log).lines()] == ["kayak", "boat"]
