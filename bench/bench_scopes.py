"""What scoping costs: a search as the owner (every page) and as one agent (its view), side by
side in one run, and what building and refreshing a view costs.

    python bench/bench_scopes.py [--corpora DIR] [--json]

The Obsidian help vault goes into a two-tenant workspace: the English pages become tenant
acme (one third in alice's personal folder, one third in team ops, which alice is not in, the
rest shared), the Japanese and Chinese pages tenant globex's shared folder. Offline compile,
hashing embeddings (the model is not what is measured). Per query of
obsidian-help-queries.dev.jsonl (the first 30), one keyword and one hybrid search as the owner
and as alice, indexes warm (a hybrid answer is cached per query, so each query is asked once
per identity); the medians over queries. Also: building alice's view (its keyword index and
graph, first search), and following a change of one page, for the owner and for alice.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from mindgraph.core import Mindgraph  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()

CONFIG = """\
embedding: {provider: hashing, dimension: 256}
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: BENCH_TOKEN_A}
    - {name: carol, tenant: globex, agent: carol, token_env: BENCH_TOKEN_C}
"""


def make_workspace(root: Path, corpora: Path) -> Path:
    """The two-tenant copy of the help vault under ``root``."""
    help_vault = corpora / "obsidian-help"
    english = sorted(p for p in (help_vault / "en").rglob("*.md"))
    for i, file in enumerate(english):
        folder = ("acme/personal/alice", "acme/team/ops", "acme/shared")[i % 3]
        target = root / "raw" / folder / file.relative_to(help_vault / "en")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(file, target)
    for lang in ("ja", "zh"):
        shutil.copytree(help_vault / lang, root / "raw" / "globex" / "shared" / lang)
    (root / "mindgraph.yml").write_text(CONFIG, encoding="utf-8")
    return root


def took_ms(run) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1e3


def follow_ms(core, file: Path) -> float:
    """How long a search takes right after ``file`` changed (the sync included)."""
    file.write_text(file.read_text(encoding="utf-8") + "\nbench edit\n", encoding="utf-8")
    return took_ms(lambda: core.search("bench edit"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ["BENCH_TOKEN_A"] = "a" * 40
    os.environ["BENCH_TOKEN_C"] = "c" * 40
    queries = [json.loads(line)["query"] for line in
               (CORPORA / "obsidian-help-queries.dev.jsonl").read_text().splitlines()
               if line.strip()][:30]
    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(Path(tmp), CORPORA)
        owner = Mindgraph.open(root)
        owner.ingest()
        owner.embed()
        pages = len(owner.vault().pages)
        owner.smart_search("warm up")
        started = time.perf_counter()
        alice = owner.as_identity(owner.scopes.identity("alice"))
        seen = len(alice.vault().pages)
        alice.smart_search("warm up")
        build_ms = (time.perf_counter() - started) * 1e3
        figures: dict[str, list[float]] = {"owner keyword": [], "alice keyword": [],
                                           "owner hybrid": [], "alice hybrid": []}
        for q in queries:
            figures["owner keyword"].append(took_ms(lambda: owner.search(q)))
            figures["alice keyword"].append(took_ms(lambda: alice.search(q)))
            figures["owner hybrid"].append(took_ms(lambda: owner.smart_search(q)))
            figures["alice hybrid"].append(took_ms(lambda: alice.smart_search(q)))
        shared = [p for p in sorted(alice.vault().pages) if p.startswith("acme/shared/")]
        wiki = owner.settings.wiki_dir
        owner_follow = statistics.median(follow_ms(owner, wiki / p) for p in shared[:5])
        alice_follow = statistics.median(follow_ms(alice, wiki / p) for p in shared[5:10])
        owner.close()
    result = {"pages": pages, "alice_pages": seen, "queries": len(queries),
              "view_build_ms": round(build_ms, 1),
              "owner_follow_one_change_ms": round(owner_follow, 1),
              "alice_follow_one_change_ms": round(alice_follow, 1),
              **{k: round(statistics.median(v), 2) for k, v in figures.items()}}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>22}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
