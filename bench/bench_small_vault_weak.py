"""Whether hybrid search's summary names a best match it should not, on small real vaults:
nonsense and off-topic questions (no page has their words) against real questions, on the
first --sizes pages of the English Help vault (the pages that answer the English dev and
fresh questions first, then others spread over the vault).

    python bench/bench_small_vault_weak.py --tree /work/main --tree .
    python bench/bench_small_vault_weak.py --sizes 10 20 40 60

For each size and question: whether no page had the query's words (results by meaning
alone), whether the summary names a best match ("The best match is ...") or calls it weak
("Nothing matched the query's words; ..."), and for a real question whether its page came
first. A rule is honest when nonsense is called weak and no real question whose page came
first is. Each --tree (a checkout with its own .venv) answers in a process of its own;
the vault is embedded with the local model once, by this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import shared_corpora  # bench/: on sys.path when a script runs
from programs import add_tree_option, checkouts, python_of

ROOT = Path(__file__).resolve().parents[1]
CORPORA = shared_corpora.corpora()
NONSENSE = ("qwertzuiop flibbertigibbet", "zxqv blorf snargle", "blargle fnord wibble",
            "lorem ipsum dolor sit amet", "asdf jkl hjkl", "purple monkey dishwasher",
            "how do I bake sourdough bread", "the capital of mongolia",
            "quantum chromodynamics gluon", "best pizza toppings",
            "football world cup winners", "how to change a car tire",
            "symptoms of influenza in toddlers", "stock price of banana republic")
SOURCES = ("obsidian-help-queries.dev.jsonl", "questions/obsidian-help-fresh23.jsonl",
           "questions/obsidian-help-fresh24.jsonl")

WORKER = r"""
import json, sys
from mindgraph.core import Mindgraph
mg = Mindgraph.open(sys.argv[1])
for line in sys.stdin:
    query = json.loads(line)
    answer = mg.smart_search(query, 5)
    # were it by meaning alone: its best page's cosine against the summary's noise level
    h = mg.hybrid_retriever()
    noise = h._summary_noise(query) if hasattr(h, "_summary_noise") else None
    if noise is None and (zero := h._background(query)) is not None:   # a calibrated vault
        noise = zero + 0.5 * h._levels(query).gap
    best = h.vector.search(query, 1)
    under = None if noise is None or not best else best[0].score < noise
    print(json.dumps({"query": query, "summary": answer.interpretation, "under": under,
                      "meaning_only": any("by meaning alone" in d for d in answer.degradation),
                      "top": answer.results[0].page if answer.results else None}), flush=True)
"""


def questions() -> list[dict]:
    """The English questions with the page that answers them, dev set first."""
    found = []
    for name in SOURCES:
        path = CORPORA / name if not name.startswith("questions/") else ROOT / "bench" / name
        if path.exists():
            found += [q for line in path.read_text(encoding="utf-8").splitlines()
                      if line.strip() and (q := json.loads(line)).get("lang") == "en"
                      and q["relevant"] and q["relevant"][0].startswith("en/")]
    return found


def vault_pages(size: int, asked: list[dict]) -> list[str]:
    """``size`` pages (relative to en/): half answer questions, the rest spread over the vault."""
    every = sorted(p.relative_to(CORPORA / "obsidian-help" / "en").as_posix()
                   for p in (CORPORA / "obsidian-help" / "en").rglob("*.md"))
    chosen = list(dict.fromkeys(q["relevant"][0][3:] for q in asked))[:size // 2]
    rest = [p for p in every if p not in chosen]
    step = max(1, len(rest) // (size - len(chosen)))
    return chosen + rest[::step][:size - len(chosen)]


def build(base: Path, pages: list[str]) -> None:
    for rel in pages:
        target = base / "wiki" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPORA / "obsidian-help" / "en" / rel, target)
    (base / "mindgraph.yml").write_text("paths:\n  wiki: wiki\n  state: state\n")
    subprocess.run([sys.executable, "-m", "mindgraph", "-C", str(base), "embed"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ask(tree: Path, base: Path, queries: list[str]) -> dict[str, dict]:
    # each tree measures its own levels: the calibration file is its own
    shutil.rmtree(base / "state" / "calibration.json", ignore_errors=True)
    for stale in (base / "state").glob("*calibration*"):
        stale.unlink()
    out = subprocess.run([str(python_of(tree)), "-c", WORKER, str(base)], cwd=tree,
                         input="".join(json.dumps(q) + "\n" for q in queries), text=True,
                         capture_output=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(tree)}).stdout
    return {(got := json.loads(line))["query"]: got for line in out.splitlines()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_option(parser)
    shared_corpora.add_option(parser)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40])
    args = parser.parse_args()
    trees, every = checkouts(args.tree), questions()
    for size in args.sizes:
        pages = vault_pages(size, every)
        real = [q for q in every if q["relevant"][0][3:] in pages]
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            build(base, pages)
            print(f"{size} pages: {len(NONSENSE)} nonsense/off-topic, {len(real)} real "
                  f"questions")
            for tree in trees:
                got = ask(tree, base, list(NONSENSE) + [q["query"] for q in real])
                named = [q for q in NONSENSE if got[q]["summary"].startswith("The best")]
                only = [q for q in NONSENSE if got[q]["meaning_only"]]
                right = [q for q in real if got[q["query"]]["top"] ==
                         q["relevant"][0][3:]]
                hidden = [q for q in right
                          if got[q["query"]]["summary"].startswith("Nothing matched")]
                weak_real = [q for q in real
                             if got[q["query"]]["summary"].startswith("Nothing matched")]
                alone = [q for q in real if got[q["query"]]["meaning_only"]]
                under = [q for q in right if got[q["query"]]["under"]]
                print(f"  {tree}: nonsense by meaning alone {len(only)}, named a best match "
                      f"{len(named)}; real: by meaning alone {len(alone)}, right page first "
                      f"{len(right)}, called weak {len(weak_real)} (of them right first "
                      f"{len(hidden)}), right first but under the summary's noise level "
                      f"{len(under)}")
                for q in named:
                    print(f"      named for {q!r}: {got[q]['summary'][:90]}")
                for q in weak_real:
                    print(f"      weak for real {q['query'][:70]!r}")


if __name__ == "__main__":
    main()
