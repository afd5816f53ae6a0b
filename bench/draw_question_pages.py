"""Draw the target pages of a fresh question set at random, before any question is written.

    python bench/draw_question_pages.py                  # session 24's draw (fresh24)
    python bench/draw_question_pages.py --set fresh23    # session 23's draw
    python bench/draw_question_pages.py --seed 7 --per-language 10

The pool of each language (en, ja, zh) is the sorted ``<lang>/**/*.md`` of the Obsidian Help
vault without the pages any earlier set targets (the dev set's ``relevant`` pages and those of
the sets in ``DRAWS[set]``), nor the translations (same ``permalink``) of a page this draw has
already taken, so that no topic is asked twice in the new set. The languages are drawn in the
order en, ja, zh from one ``random.Random(seed)``, ``sample(pool, n)`` each. Prints the drawn
pages, one a line, as ``lang<TAB>path``.

The draws made so far, each committed with its rule before it ran:

- fresh23 (session 23): seed 2323, 20 a language, without the dev, held-out and agent-cjk
  pages.
- fresh24 (session 24): seed 2424, 20 a language, without the dev, held-out, agent-cjk and
  fresh23 pages (translations of those pages stay in the pools, as for fresh23).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

import shared_corpora  # bench/: on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]

LANGUAGES = ("en", "ja", "zh")
QUESTIONS = ROOT / "bench" / "questions"
# each draw's seed and the sets (besides the dev set) whose pages its pools leave out
DRAWS = {
    "fresh23": (2323, ("obsidian-help-heldout.jsonl", "obsidian-help-agent-cjk.jsonl")),
    "fresh24": (2424, ("obsidian-help-heldout.jsonl", "obsidian-help-agent-cjk.jsonl",
                       "obsidian-help-fresh23.jsonl")),
}
PERMALINK = re.compile(r"^permalink:\s*(\S+)", re.M)


def targeted_pages(question_files: list[Path]) -> set[str]:
    """Every page named relevant by a question in these JSONL files."""
    pages: set[str] = set()
    for path in question_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                pages.update(json.loads(line)["relevant"])
    return pages


def permalink(page: Path) -> str:
    """The page's permalink (its translations share it), or its path when it has none."""
    found = PERMALINK.search(page.read_text(encoding="utf-8"))
    return found.group(1) if found else str(page)


def draw(vault: Path, excluded: set[str], seed: int, per_language: int) -> list[tuple[str, str]]:
    """``per_language`` pages of each language, drawn as the module docstring says."""
    rng = random.Random(seed)
    drawn: list[tuple[str, str]] = []
    taken_topics: set[str] = set()
    for lang in LANGUAGES:
        pages = sorted(p.relative_to(vault).as_posix() for p in (vault / lang).glob("**/*.md"))
        pool = [p for p in pages
                if p not in excluded and permalink(vault / p) not in taken_topics]
        for page in rng.sample(pool, per_language):
            drawn.append((lang, page))
            taken_topics.add(permalink(vault / page))
    return drawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(DRAWS), default="fresh24",
                        help="which set's draw: its seed and its earlier sets (default fresh24)")
    parser.add_argument("--seed", type=int, help="another seed than the set's")
    parser.add_argument("--per-language", type=int, default=20)
    shared_corpora.add_option(parser)
    args = parser.parse_args()
    corpora = shared_corpora.corpora()
    shared_corpora.require(corpora, "obsidian-help-queries.dev.jsonl", "obsidian-help")
    seed, earlier_sets = DRAWS[args.set]
    excluded = targeted_pages([corpora / "obsidian-help-queries.dev.jsonl",
                               *(QUESTIONS / name for name in earlier_sets)])
    seed = seed if args.seed is None else args.seed
    for lang, page in draw(corpora / "obsidian-help", excluded, seed, args.per_language):
        print(f"{lang}\t{page}")


if __name__ == "__main__":
    main()
