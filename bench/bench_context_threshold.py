"""Does ``serve.context_min_similarity`` fit each language's model? For the Japanese and
Chinese (and, with ``--lang en``, English) dev and held-out questions: the cosine of the page
that answers each one (and whether a keyword matched it too, which the threshold never
filters), against the best cosine of nonsense questions in the same languages.

    python bench/bench_context_threshold.py -C WS [--lang ja,zh]

WS: a workspace whose wiki is the Obsidian Help vault, embedded (``mindgraph embed``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.bench.corpora import wiki_retriever  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval.datasets import load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import SearchOptions  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
SETS = (CORPORA / "obsidian-help-queries.dev.jsonl",
        ROOT / "bench" / "questions" / "obsidian-help-heldout.jsonl")
# questions about nothing in the vault, five per language
NONSENSE = {
    "en": ["zebrafrobnicate", "what do penguins on Mars eat", "yesterday's closing share price",
           "how to cook good ramen", "which country won the football world cup"],
    "ja": ["ゼブラフロブニケート", "火星のペンギンは何を食べますか", "昨日の株価の終値",
           "ラーメンの美味しい作り方", "サッカーのワールドカップ優勝国"],
    "zh": ["火星上的企鹅吃什么", "昨天的股票收盘价", "怎么做好吃的拉面", "世界杯冠军是哪个国家",
           "量子力学的基本原理"],
}


def vector_scores(retriever, query: str) -> list[tuple[str, float | None, bool]]:
    """Each result of a hybrid search: its page, vector cosine (None: not found by meaning)
    and whether a keyword matched it."""
    response = retriever.search(query, SearchOptions(top_k=30), use_cache=False)
    return [(r.page, r.sources.get("vector", {}).get("score"), "keyword" in r.sources)
            for r in response.results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", "--dir", type=Path, required=True)
    parser.add_argument("--lang", default="ja,zh")
    args = parser.parse_args()
    languages = args.lang.split(",")
    mg = Mindgraph(load_settings(args.dir))
    retriever = wiki_retriever(mg, False, None)
    threshold = mg.settings.serve.context_min_similarity
    for lang in languages:
        answering, keyword = [], 0
        for path in SETS:
            for q in load_questions(path):
                if q.lang != lang:
                    continue
                found = [r for r in vector_scores(retriever, q.query) if r[0] in q.relevant]
                if found and found[0][1] is not None:
                    answering.append(found[0][1])
                keyword += bool(found and found[0][2])
        nonsense = [max([s for _, s, _ in vector_scores(retriever, q) if s is not None],
                        default=0.0) for q in NONSENSE[lang]]
        answering.sort()
        below = sum(s < threshold for s in answering)
        print(f"{lang}: answering pages {len(answering)} (keyword too: {keyword}), cosine "
              f"min {answering[0]:.2f} p10 {answering[len(answering) // 10]:.2f} median "
              f"{statistics.median(answering):.2f}, {below} below {threshold:g}; nonsense best "
              f"{min(nonsense):.2f}–{max(nonsense):.2f}")


if __name__ == "__main__":
    main()
