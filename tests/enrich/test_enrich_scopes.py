"""`mindgraph enrich` with tenants: an inferred link is written only where the compiler may
write one (scopes/linking.py), so no agent's page names another tenant's page, or a personal
page another agent cannot see, through /page, /check or the wiki files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.page.markdown import split_frontmatter
from mindgraph.serve.rest import create_app

SYNC = Path("/work/shared/corpora/obsidian-help/en/Obsidian Sync")
NOTES = ["Headless Sync.md", "Set up Obsidian Sync.md", "Security and privacy.md"]
# the same notes in both tenants, and one in an agent's personal folder: every pair is similar
FOLDERS = ["acme/shared", "globex/shared", "acme/personal/alice"]
TOKENS = {"MG_TOKEN_ALICE": "a" * 40, "MG_TOKEN_BOB": "b" * 40, "MG_TOKEN_CAROL": "c" * 40}
CONFIG = """\
embedding: {provider: hashing, dimension: 256}
enrich: {link_threshold: 0.3}
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, token_env: MG_TOKEN_ALICE}
    - {name: bob, tenant: acme, agent: bob, token_env: MG_TOKEN_BOB}
    - {name: carol, tenant: globex, agent: carol, token_env: MG_TOKEN_CAROL}
"""


def run(root: Path, *args: str):
    result = CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_inferred_links_stay_inside_what_every_reader_sees(tmp_path, monkeypatch):
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    for folder in FOLDERS:
        (tmp_path / "raw" / folder).mkdir(parents=True)
        for name in NOTES:
            shutil.copy(SYNC / name, tmp_path / "raw" / folder / name)
    (tmp_path / "mindgraph.yml").write_text(CONFIG, encoding="utf-8")
    run(tmp_path, "ingest")
    run(tmp_path, "embed")
    data = json.loads(run(tmp_path, "enrich", "--judge", "offline", "--json").output)
    assert data["links"] > 0

    written = {}
    for page in (tmp_path / "wiki").rglob("*.md"):
        meta = yaml.safe_load(split_frontmatter(page.read_text("utf-8"))[0])
        path = page.relative_to(tmp_path / "wiki").as_posix()
        written[path] = [link["to"] for link in meta.get("inferred_links") or []]
    links = [(source, target) for source, targets in written.items() for target in targets]
    assert links, written
    for source, target in links:
        assert source.split("/")[0] == target.split("/")[0], (source, target)
        if "/shared/" in source:
            assert "/personal/" not in target, (source, target)
    # a personal page may still link the tenant's shared pages (alice sees both)
    assert any(s.startswith("acme/personal/") and t.startswith("acme/shared/")
               for s, t in links), links

    client = TestClient(create_app(Mindgraph.open(tmp_path)), base_url="http://127.0.0.1:8765")
    for token, other in ((TOKENS["MG_TOKEN_ALICE"], "globex/"),
                         (TOKENS["MG_TOKEN_CAROL"], "acme/"),
                         (TOKENS["MG_TOKEN_BOB"], "personal/alice")):
        auth = {"Authorization": f"Bearer {token}"}
        for page in written:
            answer = client.get("/page", params={"page": page}, headers=auth)
            if answer.status_code == 200:
                assert other not in answer.text, (page, answer.text)
        assert other not in client.get("/check", headers=auth).text


def test_an_llm_call_reads_pages_of_one_audience_only(tmp_path, monkeypatch):
    """A summary batch or a pair batch mixing tenants would let one tenant's note steer what
    the model writes about another's: each call holds pages of one scope (pairs: one pair of
    scopes)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))
    from fake_openai import FakeOpenAI

    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for folder in FOLDERS:
        (tmp_path / "raw" / folder).mkdir(parents=True)
        for name in NOTES:
            shutil.copy(SYNC / name, tmp_path / "raw" / folder / name)
        # a note of headings only needs a summary from the LLM
        (tmp_path / "raw" / folder / "Checklist.md").write_text(
            "# Checklist\n\n## Before you start\n\n## Set up\n", encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(CONFIG, encoding="utf-8")
    run(tmp_path, "ingest")
    run(tmp_path, "embed")

    def answer(prompt: str) -> str:
        if prompt.startswith("Page: "):
            pages = [line[6:] for line in prompt.split("\n") if line.startswith("Page: ")]
            return json.dumps({"summaries": [{"page": p, "summary": f"What {p} covers, briefly."}
                                             for p in pages]})
        return json.dumps({"pairs": [{"n": n, "kind": "extends", "direction": "a_to_b"}
                                     for n in range(1, prompt.count("Pair ") + 1)]})

    with FakeOpenAI(answer) as fake:
        with (tmp_path / "mindgraph.yml").open("a", encoding="utf-8") as config:
            config.write(f"compile:\n  provider: openai\n  model: gpt-4.1-mini\n"
                         f"  base_url: {fake.base_url}\n")
        data = json.loads(run(tmp_path, "enrich", "--json").output)
        prompts = [r["body"]["messages"][1]["content"] for r in fake.requests]
    assert data["summaries_written"] == 3 and data["links"] > 0
    summary_calls = [p for p in prompts if p.startswith("Page: ")]
    assert len(summary_calls) == 3 == data["llm_calls"] - (len(prompts) - 3)
    for prompt in prompts:
        tenants = {folder.split("/")[0] for folder in FOLDERS if f"{folder}/" in prompt}
        assert len(tenants) == 1, prompt[:300]
    for prompt in summary_calls:
        assert sum(f"{folder}/" in prompt for folder in FOLDERS) == 1, prompt[:300]
