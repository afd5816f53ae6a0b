"""`mindgraph propagate`: a fact edited on one page is found on the others, drafted, queued
as a plan, and written only with the plan's digest — to wiki/ only, with the ledger and the
trust record's freshness to show for it; the LLM drafter on a fake OpenAI server; REST/MCP."""

import datetime as dt
import hashlib
import json
import sys
from pathlib import Path

import anyio
from click.testing import CliRunner
from mcp import Client
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app
from mindgraph.trust.freshness import body_hash
from mindgraph.trust.ledger import read_runs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))
from fake_openai import FakeOpenAI  # noqa: E402 (the fake OpenAI server of the search tests)

PLANS = "# Plans\n\nThe Standard plan keeps the version history of your notes for 30 days.\n"
FAQ_BODY = ("# FAQ\n\nHow long is history kept? The Standard plan keeps the version history "
            "of your notes for 30 days, then deletes it.\n\n## Other\n\nAsk support.\n")
GUIDE = ("# Guide\n\nOn the Standard plan the version history of your notes goes back 30 "
         "days and 30 snapshots.\n")


def faq_with_record() -> str:
    today = dt.date.today()
    record = {"status": "verified", "level": 2, "validator": "offline:v1",
              "last_validated": today.isoformat(),
              "revalidate_after": (today + dt.timedelta(days=90)).isoformat(),
              "body_sha256": body_hash("---\n---\n" + FAQ_BODY), "references": []}
    return "---\nverification: " + json.dumps(record) + "\n---\n" + FAQ_BODY


def make_workspace(root: Path) -> Path:
    (root / "wiki").mkdir()
    (root / "raw").mkdir()
    (root / "raw" / "note.md").write_text("# A raw note\n\nThe Standard plan: 30 days.\n")
    (root / "wiki" / "Plans.md").write_text(PLANS)
    (root / "wiki" / "FAQ.md").write_text(faq_with_record())
    (root / "wiki" / "Guide.md").write_text(GUIDE)
    (root / "wiki" / "Unrelated.md").write_text("# Unrelated\n\nCanvas cards hold 30 notes.\n")
    return root


def run(root, *args):
    return CliRunner().invoke(cli, ["-C", str(root), "propagate", *args])


def raw_digest(root: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted((root / "raw").rglob("*"))
                                   if p.is_file())).hexdigest()


def test_an_edited_fact_is_drafted_queued_and_applied_only_with_its_digest(tmp_path):
    root = make_workspace(tmp_path)
    raw = raw_digest(root)
    first = run(root)
    assert first.exit_code == 0 and "baseline taken" in first.output, first.output
    (root / "wiki" / "Plans.md").write_text(PLANS.replace("30 days", "60 days"))
    planned = json.loads(run(root, "--plan", "--json").output)
    assert [(c["page"], c["new"]) for c in planned["changes"]] == [
        ("Plans.md", "The Standard plan keeps the version history of your notes for 60 days.")]
    hows = {t["path"]: t["how"] for t in planned["targets"]}
    assert hows == {"FAQ.md": "substituted", "Guide.md": "marked"}     # Unrelated: untouched
    before = {p.name: p.read_bytes() for p in (root / "wiki").iterdir()}

    wrong = run(root, "--apply", planned["plan"], "--approve", "0" * 64)
    assert wrong.exit_code != 0 and "is not the digest" in wrong.output
    assert {p.name: p.read_bytes() for p in (root / "wiki").iterdir()} == before

    mg = Mindgraph(load_settings(root))
    assert mg.trust_of(["FAQ.md"])["FAQ.md"]["freshness"] == "fresh"
    applied = run(root, "--apply", planned["plan"], "--approve", planned["digest"])
    assert applied.exit_code == 0 and "SUCCESS / APPLIED; 2 of 2" in applied.output
    faq = (root / "wiki" / "FAQ.md").read_text()
    assert "for 60 days, then deletes it" in faq and "30 days" not in faq
    assert faq.startswith("---\nverification: ")            # the record stays, the body changed
    guide = (root / "wiki" / "Guide.md").read_text()
    assert "> [!warning] Possibly outdated" in guide and "[[Plans]] now says" in guide
    assert guide.startswith(GUIDE.rstrip("\n"))
    assert raw_digest(root) == raw
    stale = Mindgraph(load_settings(root)).trust_of(["FAQ.md"])["FAQ.md"]
    assert stale["freshness"] == "stale" and "content_changed" in stale["stale"]

    again = run(root, "--apply", planned["plan"], "--approve", planned["digest"])
    assert again.exit_code != 0 and "applied already" in again.output
    kinds = [(r["kind"], r["process_status"], r["result_status"]) for r in read_runs(
        root / ".mindgraph")]
    assert kinds == [("propagate-plan", "SUCCESS", "PLANNED"),
                     ("propagate-apply", "FAILED", "DISCARDED"),
                     ("propagate-apply", "SUCCESS", "APPLIED"),
                     ("propagate-apply", "CONSUMED", "DISCARDED")]
    assert json.loads(run(root, "--json").output)["changes"] == []     # the new baseline


def test_a_target_changed_after_planning_is_refused(tmp_path):
    root = make_workspace(tmp_path)
    planned = json.loads(run(root, "--json", "--old", "The Standard plan keeps the version "
                             "history of your notes for 30 days.", "--new", "The Standard "
                             "plan keeps the version history of your notes for 90 days.").output)
    assert {t["path"] for t in planned["targets"]} >= {"FAQ.md", "Plans.md"}
    (root / "wiki" / "FAQ.md").write_text(faq_with_record() + "\nA hand edit.\n")
    refused = run(root, "--apply", planned["plan"], "--approve", planned["digest"])
    assert refused.exit_code != 0 and "FAQ.md changed since the plan was made" in refused.output
    assert "90 days" not in (root / "wiki" / "Plans.md").read_text()


def test_a_tampered_plan_cannot_write_outside_wiki(tmp_path):
    root = make_workspace(tmp_path)
    planned = json.loads(run(root, "--json", "--old", "The Standard plan keeps the version "
                             "history of your notes for 30 days.", "--new", "The Standard "
                             "plan keeps the version history of your notes for 90 days.").output)
    path = Path(planned["plan"])
    data = json.loads(path.read_text())
    data["targets"][0]["path"] = "../raw/note.md"
    data["targets"][0]["sha256"] = hashlib.sha256((root / "raw" / "note.md").read_bytes()
                                                  ).hexdigest()
    path.write_text(json.dumps(data))
    from mindgraph.propagate.plan import load_plan
    digest = load_plan(path).digest
    refused = run(root, "--apply", str(path), "--approve", digest)
    assert refused.exit_code != 0 and "not a page inside wiki/" in refused.output
    assert "90" not in (root / "raw" / "note.md").read_text()


def test_the_llm_drafter_rewrites_the_paragraph(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = make_workspace(tmp_path)

    def answer(prompt):
        paragraph = prompt.split("Paragraph:\n", 1)[1]
        return json.dumps({"paragraphs": [paragraph.replace("30", "90")]})

    with FakeOpenAI(answer) as fake:
        (root / "mindgraph.yml").write_text(
            f"compile:\n  provider: openai\n  model: gpt-4.1-mini\n  base_url: {fake.base_url}\n")
        planned = json.loads(run(root, "--json", "--drafter", "llm", "--old", "The Standard "
                                 "plan keeps the version history of your notes for 30 days.",
                                 "--new", "The Standard plan keeps the version history of "
                                 "your notes for 90 days.").output)
    assert {t["how"] for t in planned["targets"]} == {"rewritten"}
    assert len(fake.requests) == len(planned["targets"])
    applied = run(root, "--apply", planned["plan"], "--approve", planned["digest"])
    assert applied.exit_code == 0, applied.output
    assert "90 days and 90 snapshots" in (root / "wiki" / "Guide.md").read_text()


def test_rest_and_mcp_read_the_queue_and_approve_by_digest(tmp_path):
    root = make_workspace(tmp_path)
    planned = json.loads(run(root, "--json", "--old", "The Standard plan keeps the version "
                             "history of your notes for 30 days.", "--new", "The Standard "
                             "plan keeps the version history of your notes for 45 days.").output)
    mg = Mindgraph(load_settings(root))
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    queue = client.get("/propagate/queue").json()["plans"]
    assert [q["digest"] for q in queue] == [planned["digest"]]
    assert "text" not in queue[0]["targets"][0]
    name = queue[0]["plan"]
    wrong = client.post("/propagate/apply", json={"plan": name, "approve": "f" * 64})
    assert wrong.status_code == 400 and "is not the digest" in wrong.json()["detail"]

    async def main():
        async with Client(create_mcp_server(mg)) as mcp:
            listed = await mcp.call_tool("propagation_queue", {})
            applied = await mcp.call_tool("approve_propagation",
                                          {"plan": name, "approve": planned["digest"]})
            return listed, applied

    listed, applied = anyio.run(main)
    assert json.loads(listed.content[0].text)["plans"][0]["digest"] == planned["digest"]
    assert not applied.is_error, applied.content[0].text
    assert json.loads(applied.content[0].text)["result_status"] == "APPLIED"
    assert "45 days" in (root / "wiki" / "FAQ.md").read_text()
    assert client.get("/propagate/queue").json()["plans"] == []


def test_two_approvals_take_turns_across_processes(tmp_path):
    """Two plans drafted against the same pages, approved at once in two processes (`serve
    --workers`, the CLI beside a server): both passed the "unchanged since planning" check
    before either wrote, and the last write won. An apply now holds the workspace's apply
    lock: one waits while another holds it, then sees the pages changed and is refused."""
    import subprocess
    import time

    from mindgraph.trust.ledger import applying

    root = make_workspace(tmp_path)
    old = "The Standard plan keeps the version history of your notes for 30 days."
    first = json.loads(run(root, "--json", "--old", old, "--new", old.replace("30", "90")).output)
    second = json.loads(run(root, "--json", "--old", old, "--new", old.replace("30", "60")).output)
    plans = root / "wiki" / "Plans.md"
    with applying(root / ".mindgraph"):
        waiting = subprocess.Popen(
            [sys.executable, "-m", "mindgraph", "-C", str(root), "propagate", "--apply",
             first["plan"], "--approve", first["digest"]],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path)
        time.sleep(4)       # started, imported, and at the lock by now
        assert waiting.poll() is None, waiting.communicate()[0]
        assert plans.read_text() == PLANS                  # nothing written while held
    output = waiting.communicate(timeout=60)[0].decode()
    assert waiting.returncode == 0 and "SUCCESS / APPLIED" in output, output
    assert "90 days" in plans.read_text()
    refused = run(root, "--apply", second["plan"], "--approve", second["digest"])
    assert refused.exit_code != 0 and "changed since the plan was made" in refused.output
    assert "60 days" not in plans.read_text()


FILE_SIZE_LIMITED_CLI = """
import resource, sys
limit = int(sys.argv.pop(1))
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))   # a write past it fails (EFBIG)
from mindgraph.cli import cli
cli(prog_name="mindgraph")
"""


def test_an_apply_a_write_failure_cut_short_says_what_it_wrote_and_what_not(tmp_path):
    """The second of two pages could not be written: the run said "1 of 2 page(s) written"
    without naming the page left out, `runs` listed it as "2 page(s)", and the plan stayed in
    the queue as awaiting approval though it could never apply again."""
    import subprocess

    root = make_workspace(tmp_path)
    (root / "wiki" / "Guide.md").write_text(GUIDE + "\nFiller.\n" * 2000)     # ~16 KB
    planned = json.loads(run(root, "--json", "--old", "keeps the version history of your "
                             "notes for 30 days", "--new", "keeps the version history of "
                             "your notes for 60 days").output)
    assert [t["path"] for t in planned["targets"]] == ["FAQ.md", "Guide.md", "Plans.md"]
    args = ["propagate", "-C", str(root), "--apply", planned["plan"], "--approve",
            planned["digest"]]
    limited = [sys.executable, "-c", FILE_SIZE_LIMITED_CLI, "8000", *args]
    text = subprocess.run(limited, capture_output=True, text=True, timeout=120)
    assert text.returncode == 1, text.stderr
    assert "FAILED / PROVISIONAL_RETAIN; 1 of 3 page(s) written, 2 not written\n" in text.stdout
    assert "Error: write failed: [Errno 27] File too large" in text.stderr
    assert "  not written: Guide.md\n  not written: Plans.md\n" in text.stdout
    assert "60 days" in (root / "wiki" / "FAQ.md").read_text()
    assert "60 days" not in (root / "wiki" / "Plans.md").read_text()
    last = list(read_runs(root / ".mindgraph"))[-1]
    assert (last["written"], last["not_written"]) == (["FAQ.md"], ["Guide.md", "Plans.md"])
    listing = CliRunner().invoke(cli, ["-C", str(root), "runs"]).output.splitlines()[-1]
    assert "PROVISIONAL_RETAIN     1 of 3 page(s) written" in listing
    queue = json.loads(run(root, "--queue", "--json").output)
    assert queue == {"plans": []}                       # used: it cannot apply again
    again = run(root, "--apply", planned["plan"], "--approve", planned["digest"], "--json")
    assert again.exit_code == 2 and "applied already in part" in again.output
    assert "did not write Guide.md, Plans.md): run `mindgraph propagate --plan` again" in \
        again.output


def test_an_apply_refuses_a_draft_past_max_page_bytes_and_writes_nothing(tmp_path):
    """A draft over limits.max_page_bytes was written, and no command could read the page."""
    root = make_workspace(tmp_path)
    (root / "wiki" / "Guide.md").write_text(GUIDE + "Filler line.\n" * 65)      # ~950 bytes
    (root / "mindgraph.yml").write_text("compile:\n  max_note_bytes: 1000\nlimits:\n"
                                        "  max_page_bytes: 1000\n")
    planned = json.loads(run(root, "--json", "--old", "keeps the version history of your "
                             "notes for 30 days", "--new", "keeps the version history of "
                             "your notes for 60 days").output)
    assert "Guide.md" in [t["path"] for t in planned["targets"]]
    before = {p.name: p.read_bytes() for p in (root / "wiki").iterdir()}
    refused = run(root, "--apply", planned["plan"], "--approve", planned["digest"])
    assert refused.exit_code == 2
    assert "Guide.md (1,1" in refused.output or "Guide.md (1,0" in refused.output
    assert ("bytes) would be over limits.max_page_bytes (1,000), which no command would "
            "read. Split the page, or raise limits.max_page_bytes in mindgraph.yml and apply "
            "the plan again. Nothing was written.") in refused.output
    assert {p.name: p.read_bytes() for p in (root / "wiki").iterdir()} == before


def _compiled(root: Path, notes: dict[str, str]) -> Path:
    (root / "raw").mkdir()
    (root / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    for name, text in notes.items():
        (root / "raw" / name).write_text(text)
    result = CliRunner().invoke(cli, ["-C", str(root), "ingest"])
    assert result.exit_code == 0, result.output
    return root


def _plan_and_apply(root: Path, *args: str) -> dict:
    planned = json.loads(run(root, "--json", *args).output)
    applied = run(root, "--apply", planned["plan"], "--approve", planned["digest"])
    assert applied.exit_code == 0, applied.output
    return planned


OLD = "Each account may send 40 messages per hour."
NEW = "Each account may send 45 messages per hour."


def test_a_compiled_pages_summary_follows_the_substituted_fact(tmp_path):
    """The offline compiler opens a page with a summary callout copied from its body. The
    draft changed the body only: the page then said 40 above and 45 below, and the callout,
    no longer a copy, was searched as text of its own."""
    root = _compiled(tmp_path, {
        "Quotas.md": f"# Quotas\n{OLD} The limit resets hourly.\n\n## Notes\nMore text.\n"})
    (root / "wiki" / "Own.md").write_text(       # a person's page, a summary of its own
        f"# Own\n\n> [!summary]\n> Sending rules in short.\n\n{OLD} Ask support for more.\n")
    assert "> [!summary]\n> Each account may send 40" in (root / "wiki" / "Quotas.md").read_text()
    planned = _plan_and_apply(root, "--old", OLD, "--new", NEW)
    assert {t["path"]: t["how"] for t in planned["targets"]} == {
        "Own.md": "substituted", "Quotas.md": "substituted"}
    quotas = (root / "wiki" / "Quotas.md").read_text()
    assert "40" not in quotas and f"> [!summary]\n> {NEW}" in quotas
    assert f"\n{NEW} The limit resets hourly." in quotas
    own = (root / "wiki" / "Own.md").read_text()
    assert own == ("# Own\n\n> [!summary]\n> Sending rules in short.\n\n"
                   f"{NEW} Ask support for more.\n")
    search = CliRunner().invoke(cli, ["-C", str(root), "search", "40", "--json"])
    assert json.loads(search.output)["results"] == []


def test_a_rewritten_paragraph_drops_the_summary_that_copied_it(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = _compiled(tmp_path, {
        "Quotas.md": f"# Quotas\n{OLD} The limit resets hourly.\n\n## Notes\nMore text.\n"})

    def answer(prompt):
        return json.dumps({"paragraphs": ["Accounts send up to 45 messages an hour; the "
                                          "limit resets hourly."]})

    with FakeOpenAI(answer) as fake:
        (root / "mindgraph.yml").write_text(
            "embedding:\n  provider: hashing\n"
            f"compile:\n  provider: openai\n  model: m\n  base_url: {fake.base_url}\n")
        planned = _plan_and_apply(root, "--drafter", "llm", "--old", OLD, "--new", NEW)
    assert [t["how"] for t in planned["targets"]] == ["rewritten"]
    quotas = (root / "wiki" / "Quotas.md").read_text()
    assert "[!summary]" not in quotas and "40" not in quotas
    assert "Accounts send up to 45 messages an hour" in quotas
