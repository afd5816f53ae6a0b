"""Why a question misses: for every dev and held-out question whose first relevant page is not
first (or a relevant page is not in the first 5), each relevant page's rank by the hybrid
method of `mindgraph bench` (top 10, as the bench asks) and by each retriever in the first
60 (keyword, vector, twin; 0: not there), the ranks of its translations on the vector side
(a multilingual model ranks a page's twins too), the question's index terms, how many pages
of its language hold each, which of them the relevant page holds, and the five pages above.

    python bench/bench_question_misses.py -C WS [--langs ja,zh] [--all] [--also FILE]

``--also`` adds another question file over the same vault (session 22:
bench/questions/obsidian-help-agent-cjk.jsonl, the agent set).

WS: a workspace whose wiki is the Obsidian Help vault, embedded (`make bench`'s bench-out/oh).
Session 18 used it for issue 13's Japanese and Chinese gap (README, "Retrieval levers for
issue 13's open targets").
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_fusion import HELD_OUT  # noqa: E402
from mindgraph.bench.corpora import wiki_retriever  # noqa: E402
from mindgraph.bench.runner import DEPTH  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.retrieval.analyzer import analyze  # noqa: E402
from mindgraph.retrieval.datasets import load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import SearchOptions  # noqa: E402
from mindgraph.retrieval.twins import Twins  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
WIDE = 60


def page_terms(page) -> Counter[str]:
    text = "\n".join([page.title, *(f"{s.heading}\n{s.text}" for s in page.sections)])
    return Counter(analyze(text, lang=page_language(page)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    parser.add_argument("--langs", default="ja,zh", help="question languages (en,ja,zh)")
    parser.add_argument("--all", action="store_true", help="every question, first or not")
    parser.add_argument("--also", action="append", default=[], type=Path,
                        help="another question file over the same vault (repeatable)")
    args = parser.parse_args()
    shared_corpora.require(CORPORA, "obsidian-help-queries.dev.jsonl")
    langs = args.langs.split(",")
    wiki = wiki_retriever(Mindgraph(load_settings(args.workspace)), embed=False)
    twins = Twins(wiki.pages)
    terms: dict[str, Counter[str]] = {}
    df: dict[str, Counter[str]] = {}
    for path, page in wiki.pages.items():
        lang = page_language(page)
        if lang in langs:
            terms[path] = page_terms(page)
            df.setdefault(lang, Counter()).update(set(terms[path]))
    for path in (CORPORA / "obsidian-help-queries.dev.jsonl", HELD_OUT, *args.also):
        for q in load_questions(path):
            if q.lang not in langs:
                continue
            wiki.vector.forget_queries()
            top = [r.page for r in wiki.search(q.query, SearchOptions(top_k=DEPTH),
                                               use_cache=False).results]
            ranks = [top.index(p) + 1 if p in top else 0 for p in q.relevant]
            if not args.all and ranks[0] == 1 and all(0 < r <= 5 for r in ranks):
                continue
            wide = wiki.search(q.query, SearchOptions(top_k=WIDE), use_cache=False).results
            by_page = {r.page: r for r in wide}
            vector = [h.path for h in wiki.vector.search(q.query, 300)]
            asked = list(dict.fromkeys(analyze(q.query, query=True)))
            print(f"== {q.id} hybrid {'/'.join(map(str, ranks))}  {q.query}")
            print("   terms (pages of its language holding each):",
                  " ".join(f"{t}:{df.get(q.lang, Counter())[t]}" for t in asked))
            for rel in q.relevant:
                hit = by_page.get(rel)
                sources = {k: v.get("rank") for k, v in (hit.sources if hit else {}).items()
                           if isinstance(v, dict)}
                twin_ranks = " ".join(
                    f"{lang} {vector.index(t) + 1 if t in vector else 0}"
                    for lang in ("ja", "zh", "en") if (t := twins.twin(rel, lang)))
                shared = {t: terms[rel][t] for t in asked if terms.get(rel, Counter())[t]}
                print(f"   {rel}: {sources or 'none in the first 60'}; vector rank of its "
                      f"twins (of 300): {twin_ranks or '-'}; holds {shared}")
            for i, page in enumerate(top[:5], 1):
                hit = by_page.get(page)
                sources = {k: v.get("rank") for k, v in (hit.sources if hit else {}).items()
                           if isinstance(v, dict)}
                print(f"   {i}. {'*' if page in q.relevant else ' '} {page} {sources}")


if __name__ == "__main__":
    main()
