"""Draw the target pages of a fresh question set at random, before any question is written.

    python bench/draw_question_pages.py                  # session 23's draw
    python bench/draw_question_pages.py --seed 7 --per-language 10

The pool of each language (en, ja, zh) is the sorted ``<lang>/**/*.md`` of the Obsidian Help
vault without the pages any earlier set targets (the dev set's, held-out's and agent-cjk's
``relevant`` pages), nor the translations (same ``permalink``) of a page this draw has already
taken, so that no topic is asked twice in the new set. The languages are drawn in the order
en, ja, zh from one ``random.Random(seed)``, ``sample(pool, n)`` each. Prints the drawn pages,
one a line, as ``lang<TAB>path``.
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
EARLIER_SETS = (
    ROOT / "bench" / "questions" / "obsidian-help-heldout.jsonl",
    ROOT / "bench" / "questions" / "obsidian-help-agent-cjk.jsonl",
)
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
    parser.add_argument("--seed", type=int, default=2323)
    parser.add_argument("--per-language", type=int, default=20)
    shared_corpora.add_option(parser)
    args = parser.parse_args()
    corpora = shared_corpora.corpora()
    shared_corpora.require(corpora, "obsidian-help-queries.dev.jsonl", "obsidian-help")
    excluded = targeted_pages([corpora / "obsidian-help-queries.dev.jsonl", *EARLIER_SETS])
    for lang, page in draw(corpora / "obsidian-help", excluded, args.seed, args.per_language):
        print(f"{lang}\t{page}")


if __name__ == "__main__":
    main()
