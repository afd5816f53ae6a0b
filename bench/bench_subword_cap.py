"""What a hostile Chinese query costs with and without the cap on its sub-word expansion
(retrieval/subwords.py ``MAX_TERMS`` / ``MAX_PER_WORD``): 1,000 single Han characters, the
most common ones of the vault's Chinese pages, separated by spaces, so that each is a query
word of its own that the vault's words contain.

    python bench/bench_subword_cap.py -C bench-out/oh
    python bench/bench_subword_cap.py -C bench-out/oh --rounds 5 --chars 1000

Side by side in each round, on one workspace (embedded: ``make bench``): the expansion
uncapped (before) and capped (now). Each search is a fresh one (no answer cache), the query
rotated by one character a round so no cache of the vector side answers it either. Reported:
the expansion's term count and the median seconds of a hybrid search and of a keyword-only one.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-C", dest="workspace", default="bench-out/oh")
    parser.add_argument("--chars", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from mindgraph.core import Mindgraph
    from mindgraph.retrieval import keyword
    from mindgraph.retrieval.results import SearchOptions

    mg = Mindgraph.open(Path(args.workspace))
    retriever = mg.hybrid_retriever()
    han = re.compile(r"[\u4e00-\u9fff]")
    counts = Counter(ch for path, page in retriever.pages.items() if path.startswith("zh/")
                     for ch in page.body if han.match(ch))
    common = [ch for ch, _ in counts.most_common(args.chars)]
    if len(common) < args.chars:
        sys.exit(f"the vault's Chinese pages hold {len(common)} distinct Han characters; "
                 f"give --chars {len(common)} or fewer")
    capped = keyword.MAX_TERMS, keyword.MAX_PER_WORD
    ways = {"uncapped (before)": (10 ** 9, 10 ** 9), "capped (now)": capped}
    kinds = {"hybrid": SearchOptions(), "keyword only": SearchOptions(use_vector=False)}
    times: dict[tuple[str, str], list[float]] = {(w, k): [] for w in ways for k in kinds}
    terms: dict[str, int] = {}
    for round_ in range(args.rounds):
        query = " ".join(common[round_:] + common[:round_])
        for way, (total, per_word) in ways.items():
            keyword.MAX_TERMS, keyword.MAX_PER_WORD = total, per_word
            terms[way] = len(retriever._subword_terms(query))
            for kind, options in kinds.items():
                started = time.perf_counter()
                retriever.search(query, options, use_cache=False)
                times[(way, kind)].append(time.perf_counter() - started)
    keyword.MAX_TERMS, keyword.MAX_PER_WORD = capped
    for way in ways:
        line = ", ".join(f"{kind} median {statistics.median(times[(way, kind)]):.3f} s"
                         for kind in kinds)
        print(f"{way}: {terms[way]:,} expansion terms; {line} ({args.rounds} rounds)")
    for kind in kinds:
        before, now = (statistics.median(times[(way, kind)]) for way in ways)
        print(f"{kind}: capped / uncapped = {now / before:.2f}")


if __name__ == "__main__":
    main()
