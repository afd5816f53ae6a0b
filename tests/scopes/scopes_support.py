"""A workspace of two tenants, several agents and teams, and what each identity may see.

Every note carries a word no other note has, so a leak shows as that word (or the note's
path) anywhere in an answer: results, snippets, counts, links, errors.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Iterable

NOTES = {
    "acme/personal/alice/Alice Diary.md":
        "# Alice Diary\n\nAlice tests the zebrafish protocol with the Search Plan and the "
        "Handbook. She once read [[Ops Runbook]] and [[Bob Notes]].\n\n## Later\n\n"
        "More zebrafish results, see [[Search Plan]].\n",
    "acme/personal/bob/Bob Notes.md":
        "# Bob Notes\n\nBob keeps walrusinfo figures here, next to the Ops Runbook and the "
        "Handbook.\n",
    "acme/team/search/Search Plan.md":
        "---\ncreated: 2026-03-02\n---\n# Search Plan\n\nThe search team plans quokka ranking; "
        "the Handbook applies.\n\n```json\n{\"ranking\": \"quokka\"}\n```\n",
    "acme/team/ops/Ops Runbook.md":
        "---\ncreated: 2026-03-05\n---\n# Ops Runbook\n\nRestart the narwhal service; follow "
        "the Handbook and the Search Plan.\n",
    "acme/shared/Handbook.md":
        "---\ncreated: 2026-03-01\n---\n# Handbook\n\nThe acme handbook: pangolin policy for "
        "every agent. See the Roadmap.\n",
    "acme/shared/Roadmap.md":
        "# Roadmap\n\nAcme roadmap: pangolin first, then the Handbook again.\n",
    "globex/personal/carol/Carol Notes.md":
        "# Carol Notes\n\nCarol studies the axolotl merger, per the Roadmap and the "
        "Deal Memo. [[Handbook]] is not ours.\n",
    "globex/team/deals/Deal Memo.md":
        "---\ncreated: 2026-03-04\n---\n# Deal Memo\n\nThe deals team memo on the axolotl "
        "merger and its capybara terms.\n\n```json\n{\"terms\": \"capybara\"}\n```\n",
    "globex/shared/Roadmap.md":
        "# Roadmap\n\nGlobex roadmap: the axolotl merger, then the Deal Memo.\n",
    "loose/Unplaced.md":
        "# Unplaced\n\nAn okapi note that no folder rule places.\n",
}

# (name, tenant, agent, teams)
IDENTITIES = [("alice", "acme", "alice", ["search"]), ("bob", "acme", "bob", ["ops"]),
              ("dave", "acme", "dave", []), ("carol", "globex", "carol", ["deals"]),
              ("erin", "globex", "erin", [])]

VISIBLE = {
    "alice": {"acme/personal/alice/Alice Diary.md", "acme/team/search/Search Plan.md",
              "acme/shared/Handbook.md", "acme/shared/Roadmap.md"},
    "bob": {"acme/personal/bob/Bob Notes.md", "acme/team/ops/Ops Runbook.md",
            "acme/shared/Handbook.md", "acme/shared/Roadmap.md"},
    "dave": {"acme/shared/Handbook.md", "acme/shared/Roadmap.md"},
    "carol": {"globex/personal/carol/Carol Notes.md", "globex/team/deals/Deal Memo.md",
              "globex/shared/Roadmap.md"},
    "erin": {"globex/shared/Roadmap.md"},
    "local": set(NOTES),
}

# the word only each note has (a note's path may also not show up where it is not visible)
WORDS = {"acme/personal/alice/Alice Diary.md": "zebrafish",
         "acme/personal/bob/Bob Notes.md": "walrusinfo",
         "acme/team/search/Search Plan.md": "quokka",
         "acme/team/ops/Ops Runbook.md": "narwhal",
         "acme/shared/Handbook.md": "pangolin policy",
         "acme/shared/Roadmap.md": "acme roadmap",
         "globex/personal/carol/Carol Notes.md": "carol studies",
         "globex/team/deals/Deal Memo.md": "capybara",
         "globex/shared/Roadmap.md": "globex roadmap",
         "loose/Unplaced.md": "okapi"}

TOKENS = {name: f"{name}-token-" + "x" * 32 for name, *_ in IDENTITIES}
SERVER_TOKEN = "local-owner-token-" + "y" * 32


def token_env(name: str) -> str:
    """The environment variable of ``name``'s token."""
    return f"MG_TEST_TOKEN_{name.upper()}"


def config_text(store: str = "embedded", table: str = "") -> str:
    """mindgraph.yml of the two-tenant workspace (hashing embeddings: fast, offline)."""
    lines = ["embedding:", "  provider: hashing", "  dimension: 64", "scopes:", "  identities:"]
    for name, tenant, agent, teams in IDENTITIES:
        lines.append(f"    - {{name: {name}, tenant: {tenant}, agent: {agent}, "
                     f"teams: [{', '.join(teams)}], token_env: {token_env(name)}}}")
    if store == "pgvector":
        lines += ["store:", "  backend: pgvector", "  dsn_env: MG_TEST_TENANTS_DSN",
                  f"  table: {table or 'mg_tenants_' + uuid.uuid4().hex[:10]}"]
    return "\n".join(lines) + "\n"


def write_workspace(root: Path, store: str = "embedded") -> Path:
    """The raw notes and mindgraph.yml under ``root`` (not compiled yet)."""
    for path, text in NOTES.items():
        file = root / "raw" / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    (root / "code").mkdir(exist_ok=True)
    (root / "code" / "handbook.py").write_text("def read():\n    pass\n")
    (root / "mindgraph.yml").write_text(config_text(store), encoding="utf-8")
    return root


def set_tokens(monkeypatch, dsn: str | None = None) -> None:
    """Every identity's token in its variable (and the pgvector DSN, when given)."""
    for name, token in TOKENS.items():
        monkeypatch.setenv(token_env(name), token)
    if dsn:
        monkeypatch.setenv("MG_TEST_TENANTS_DSN", dsn)


def forbidden(name: str) -> list[str]:
    """What must never appear in an answer to ``name``: the paths and words of the notes it
    does not see."""
    hidden = set(NOTES) - VISIBLE[name]
    return sorted({*hidden, *(p.removesuffix(".md") for p in hidden),
                   *(WORDS[p] for p in hidden)})


def leaks(name: str, answer: Any, asked: Iterable[str] = ()) -> list[str]:
    """The forbidden strings found in ``answer`` (any JSON-able value), case-insensitively,
    once what the caller ``asked`` (its own query words, repeated back) is taken out."""
    text = json.dumps(answer, ensure_ascii=False, default=str).lower()
    for said in sorted(asked, key=len, reverse=True):
        text = text.replace(said.lower(), " ")
    return [f for f in forbidden(name) if f.lower() in text]


def embedded_core(root: Path, monkeypatch) -> Any:
    """The two-tenant workspace under ``root``, compiled and embedded (embedded store): the
    open core (close it)."""
    from mindgraph.core import Mindgraph

    write_workspace(root)
    set_tokens(monkeypatch)
    core = Mindgraph.open(root)
    assert core.ingest().ok
    core.embed()
    return core
