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
