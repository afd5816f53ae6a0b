"""Snippets find the query's words without a Python step per word of the section (at 10,000
notes snippets were half of a hybrid query's time: most sections the vector side finds do not
have the query's words, and each word was stemmed and merged in order to learn that)."""

import json
import re

import mindgraph.retrieval.analyzer as analyzer
from mindgraph.page.parse import parse_page
from mindgraph.retrieval.analyzer import _CJK_RUN, analyze, iter_highlights, iter_term_spans
from mindgraph.retrieval.present import snippet_for


def _plain_walk(text, terms, lang):
    """Every piece of the text in order, kept when it gives a wanted term."""
    wanted = set(terms)
    cjk = any(_CJK_RUN.search(t) for t in wanted)
    return [(s, e) for s, e, found in iter_term_spans(text, lang, cjk, wanted)
            if not wanted.isdisjoint(found)]


def test_highlights_come_in_the_order_and_spans_of_the_plain_walk(corpora):
    questions = [json.loads(line)["query"] for line in
                 (corpora / "obsidian-help-queries.dev.jsonl").read_text().splitlines()
                 if line.strip()]
    questions += ["obsidian://open?vault=my", "core.async_open", "==highlight== ![[embed]]",
                  "Ctrl+P command-palette", "™ symbols", "Settings settings SETTINGS"]
    pages = [(p.read_text(encoding="utf-8"), lang) for lang in ("en", "ja", "zh")
             for p in sorted((corpora / "obsidian-help" / lang).rglob("*.md"))[:12]]
    lit = 0
    for query in questions:
        terms = list(dict.fromkeys(analyze(query, query=True)))
        for text, lang in pages:
            walk = _plain_walk(text, terms, lang)
            assert list(iter_highlights(text, terms, lang)) == walk, query
            lit += bool(walk)
    assert lit > len(questions) * len(pages) // 10


def test_a_snippet_of_a_section_without_the_query_words_takes_no_step_per_word(monkeypatch):
    steps = []
    word_spans = analyzer._word_spans

    def counted(lowered):
        for span in word_spans(lowered):
            steps.append(span)
            yield span

    monkeypatch.setattr(analyzer, "_word_spans", counted)
    body = " ".join(f"The weather report {i} covers rain, wind and sun." for i in range(400))
    page = parse_page(f"# Weather\n\n{body}\n\n## Boats\n\nA kayak trip.\n", "w.md")
    lead = snippet_for(page, page.sections[0].id, analyze("kayak trips", query=True))
    assert lead.startswith("The weather report 0") and "**" not in lead
    boats = snippet_for(page, page.sections[-1].id, analyze("kayak trips", query=True))
    assert "**kayak**" in boats and "**trip**" in boats
    assert steps == []
    assert re.search(r"\*\*report\*\* 0", snippet_for(page, page.sections[0].id,
                                                      analyze("reports", query=True)))
