"""Definition questions over the Obsidian Help vault: does the section naming the term come first?

    python bench/bench_definitions.py -C WS --corpora DIR --bonus 0,0.1,0.2

The dev and held-out sets hold no definition question (`bench_retrieval_levers.py
--definitions`), so this asks them: every heading of the vault's glossary in each language
(en Glossary, ja 用語集, zh 术语表), as "what is X", 「Xとは」 and 「什么是X」. For each
``retrieval.definition_bonus`` (retrieval/definition.py) it prints, per language, how often the
first result is a section that names the term (its heading, or the page's title, is X:
``definition.heading_match``) and how often it is the glossary's own entry for X; then the
questions whose first result changed against the first bonus listed.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval.definition import defined_term, heading_match  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever, SearchOptions  # noqa: E402
import shared_corpora  # noqa: E402

GLOSSARIES = {"en": ("en/Getting started/Glossary.md", "what is {}"),
              "ja": ("ja/はじめに/用語集.md", "{}とは"),
              "zh": ("zh/快速入门/术语表.md", "什么是{}")}


def questions(pages) -> list[tuple[str, str, str]]:
    """(language, question, glossary section id) for every heading of each glossary."""
    out = []
    for lang, (path, form) in GLOSSARIES.items():
        for section in pages[path].sections:
            if section.heading and defined_term(form.format(section.heading)) is not None:
                out.append((lang, form.format(section.heading), section.id))
    return out


def first(retriever: HybridRetriever, query: str) -> tuple[str, str, str]:
    if retriever.vector is not None:
        retriever.vector.forget_queries()
    top = retriever.search(query, SearchOptions(top_k=10), use_cache=False).results[0]
    return top.page, top.section_id or "", top.heading or ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    parser.add_argument("--bonus", default="0,0.1,0.2")
    args = parser.parse_args()
    settings = load_settings(args.workspace)
    base = Mindgraph(settings).hybrid_retriever()
    asked = questions(base.pages)
    print(f"{len(asked)} questions: " + ", ".join(
        f"{lang} {sum(1 for q in asked if q[0] == lang)}" for lang in GLOSSARIES))
    answers: dict[float, list[tuple[str, str, str]]] = {}
    for bonus in [float(b) for b in args.bonus.split(",")]:
        r = HybridRetriever(base.pages, base.keyword, base.graph, base.vector,
                            replace(base.settings, definition_bonus=bonus),
                            expander=base.expander, vector_error=base.vector_error,
                            calibration_file=base._calibration_file)
        answers[bonus] = got = [first(r, query) for _, query, _ in asked]
        cells = []
        for lang, (glossary, _) in GLOSSARIES.items():
            rows = [(q, a) for q, a in zip(asked, got) if q[0] == lang]
            named = sum(1 for (_, query, _), (page, _, heading) in rows
                        if heading_match(heading or base.pages[page].title,
                                         defined_term(query)))  # type: ignore[arg-type]
            entry = sum(1 for (_, _, sid), (page, section, _) in rows
                        if page == glossary and section == sid)
            cells.append(f"{lang} named {named}/{len(rows)} glossary {entry}/{len(rows)}")
        print(f"bonus {bonus:g}: " + " | ".join(cells), flush=True)
    ref, *others = list(answers)
    for bonus in others:
        moved = [f"{q[1]}: {a[0].split('/')[-1]} § {a[2]} → {b[0].split('/')[-1]} § {b[2]}"
                 for q, a, b in zip(asked, answers[ref], answers[bonus]) if a != b]
        print(f"\nfirst result changed, bonus {ref:g} → {bonus:g} ({len(moved)}):")
        for item in moved:
            print("  " + item)


if __name__ == "__main__":
    main()
