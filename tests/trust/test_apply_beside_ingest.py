"""An approved plan's apply and an ingest of the same workspace take turns on each page: an
ingest started between the apply's check and its write waits for the write (its recompile then
keeps the record), and an apply started while an ingest is rewriting a page waits for it and is
refused as changed since planning. Each race is forced in one test through the CLI: the second
command is a real process, started at the racy moment; the first goes on once that process has
finished (the race lost) or waits on the apply lock (/proc/locks lists it as blocked)."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from trust_support import plan_of

from mindgraph.ingest.wikifs import WikiWriter
from mindgraph.trust import service as trust_service
from mindgraph.trust.service import TrustService
from mindgraph.trust.writeback import set_record_keys

pytestmark = pytest.mark.skipif(not Path("/proc/locks").exists(),
                                reason="needs /proc/locks to see a process wait on a lock")

EDIT = "Sync also keeps deleted files for a year.\n"


def _start(base: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mindgraph", *args, "-C", str(base)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _finished_or_waiting(process: subprocess.Popen, lock: Path) -> str:
    """Wait until ``process`` ends ("finished") or waits on ``lock`` ("waiting")."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return "finished"
        if lock.exists() and _waited_on(lock.stat().st_ino, process.pid):
            return "waiting"
        time.sleep(0.02)
    process.terminate()
    raise AssertionError(f"{process.args} neither finished nor waited on {lock} in 120 s")


def _waited_on(inode: int, pid: int) -> bool:
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and str(pid) in fields and \
                any(f.count(":") == 2 and f.rsplit(":", 1)[1] == str(inode) for f in fields):
            return True
    return False


def _done(process: subprocess.Popen) -> str:
    try:
        output, _ = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.terminate()
        process.communicate()
        raise
    assert process.returncode is not None
    return f"{process.returncode}:{output}"


def _without_record(data: bytes) -> bytes:
    clear = {"verification": None, "evidence": None}
    return set_record_keys(data.decode("utf-8"), clear).encode("utf-8")


def test_an_ingest_between_the_apply_check_and_write_waits_for_the_write(compiled, mg,
                                                                         monkeypatch):
    plan = plan_of(mg, compiled)
    planned = {t["path"]: t for t in json.loads(Path(plan["plan"]).read_text())["targets"]}
    note = compiled / "raw" / "Sync.md"
    note.write_text(note.read_text() + EDIT, encoding="utf-8")
    lock = compiled / ".mindgraph" / "trust" / "apply.lock"
    ingest: list[subprocess.Popen] = []
    checked = TrustService._refusal

    def refusal_then_ingest(self, plan_, approve):
        why = checked(self, plan_, approve)
        if not why:     # checked: the ingest starts before the pages are read to be written
            ingest.append(_start(compiled, "ingest"))
            _finished_or_waiting(ingest[0], lock)
        return why

    written: dict[str, bytes] = {}
    write = trust_service.atomic_write_bytes

    def recorded(path, data):
        written[Path(path).relative_to(compiled / "wiki").as_posix()] = data
        write(path, data)

    monkeypatch.setattr(TrustService, "_refusal", refusal_then_ingest)
    monkeypatch.setattr(trust_service, "atomic_write_bytes", recorded)
    result = mg(compiled, "verify", "--apply", plan["plan"], "--approve", plan["digest"])
    ingested = _done(ingest[0])
    assert ingested.startswith("0:"), ingested
    assert result.exit_code == 0 and "SUCCESS / APPLIED" in result.output, result.output
    # the record went on the page that was judged, not on the one the ingest wrote meanwhile
    assert hashlib.sha256(_without_record(written["Sync.md"])).hexdigest() == \
        planned["Sync.md"]["sha256"]
    page = (compiled / "wiki" / "Sync.md").read_bytes()
    assert EDIT.strip().encode() in page                # the recompile came after, not lost
    assert b"verification:" in page                      # and kept the record


def test_an_apply_during_an_ingest_page_write_waits_and_is_refused(compiled, mg, monkeypatch):
    plan = plan_of(mg, compiled)
    note = compiled / "raw" / "Sync.md"
    note.write_text(note.read_text() + EDIT, encoding="utf-8")
    lock = compiled / ".mindgraph" / "trust" / "apply.lock"
    apply: list[subprocess.Popen] = []
    write = WikiWriter.write

    def apply_then_write(self, wiki_path, data, current=b""):
        if wiki_path == "Sync.md" and not apply:   # the page read, its record carried
            apply.append(_start(compiled, "verify", "--apply", plan["plan"],
                                "--approve", plan["digest"]))
            _finished_or_waiting(apply[0], lock)
        write(self, wiki_path, data, current)

    monkeypatch.setattr(WikiWriter, "write", apply_then_write)
    assert mg(compiled, "ingest").exit_code == 0
    applied = _done(apply[0])
    runs = [json.loads(line) for line in
            (compiled / ".mindgraph" / "trust" / "runs.jsonl").read_text().splitlines()]
    last = runs[-1]
    page = (compiled / "wiki" / "Sync.md").read_bytes()
    assert EDIT.strip().encode() in page
    # never APPLIED with the record gone: the apply saw the recompiled page and wrote nothing
    assert applied.startswith("1:") and "changed since planning (Sync.md)" in applied, applied
    assert (last["kind"], last["result_status"]) == ("apply", "DISCARDED")
    assert b"verification:" not in page


def test_an_ingest_between_the_propagate_check_and_write_is_not_overwritten(tmp_path, mg,
                                                                            monkeypatch):
    from mindgraph.propagate import service as propagate_service

    old = "The Standard plan keeps the version history of your notes for 30 days."
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "FAQ.md").write_text(f"# FAQ\n\n{old}\n", encoding="utf-8")
    assert mg(tmp_path, "ingest").exit_code == 0
    planned = mg(tmp_path, "propagate", "--json", "--old", old, "--new",
                 old.replace("30", "90"))
    plan = json.loads(planned.output)
    assert [t["path"] for t in plan["targets"]] == ["FAQ.md"], planned.output
    note = tmp_path / "raw" / "FAQ.md"
    note.write_text(note.read_text() + EDIT, encoding="utf-8")
    lock = tmp_path / ".mindgraph" / "trust" / "apply.lock"
    ingest: list[subprocess.Popen] = []
    limit = propagate_service.over_page_limit

    def checked_then_ingest(pages, max_bytes):     # after the hashes, before the writes
        ingest.append(_start(tmp_path, "ingest"))
        _finished_or_waiting(ingest[0], lock)
        return limit(pages, max_bytes)

    monkeypatch.setattr(propagate_service, "over_page_limit", checked_then_ingest)
    applied = mg(tmp_path, "propagate", "--apply", plan["plan"], "--approve", plan["digest"])
    ingested = _done(ingest[0])
    assert applied.exit_code == 0 and "SUCCESS / APPLIED" in applied.output, applied.output
    assert ingested.startswith("0:"), ingested
    # the recompile of the edited note came after the apply: its page is not lost under it
    assert EDIT.strip() in (tmp_path / "wiki" / "FAQ.md").read_text(encoding="utf-8")


def _stderr_line(process: subprocess.Popen, wanted: str, seconds: float = 60) -> str:
    """The first line of ``process``'s stderr holding ``wanted`` ("" if none came in time)."""
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if selector.select(timeout=deadline - time.monotonic()):
                line = process.stderr.readline()
                if not line:
                    return ""
                if wanted in line:
                    return line
    return ""


@pytest.mark.parametrize("command", [["ingest"], ["watch", "--no-embed", "--polling"]])
def test_an_ingest_waiting_for_an_apply_says_on_stderr_which_lock_and_why(compiled, command):
    """ingest (and watch's ingest) waited silently while an approved plan held the apply
    lock: after a second it says so, once."""
    from mindgraph.trust.ledger import applying

    note = compiled / "raw" / "Sync.md"
    note.write_text(note.read_text() + EDIT, encoding="utf-8")
    lock = compiled / ".mindgraph" / "trust" / "apply.lock"
    with applying(compiled / ".mindgraph"):         # as `verify --apply` holds it
        process = subprocess.Popen([sys.executable, "-m", "mindgraph", *command,
                                    "-C", str(compiled)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            assert _finished_or_waiting(process, lock) == "waiting"
            said = _stderr_line(process, "apply lock")
        except BaseException:
            process.terminate()
            raise
    assert f"waiting for the apply lock ({lock})" in said, said
    assert "verify --apply" in said and "propagate --apply" in said
    if command[0] == "watch":       # its run finishes after the lock is free; then stop it
        assert "compiled 1" in process.stdout.readline()
        process.send_signal(signal.SIGTERM)
    output, errors = process.communicate(timeout=120)
    assert process.returncode == 0, errors
    assert "apply lock" not in errors                  # once: not again for the next pages
    assert EDIT.strip() in (compiled / "wiki" / "Sync.md").read_text(encoding="utf-8")
