"""`mindgraph search QUERY`: keyword (BM25) search, or hybrid search with --hybrid."""

from __future__ import annotations

import time
from typing import Any

import click

from ..config import Settings
from ..trust.answer import (TrustCriteria, keyword_answer, trust_line, trusted_hybrid,
                            with_trust)
from .common import echo, emit_json, json_option, open_core, trust_options, workspace_options
from .whole_number import WholeNumber


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", type=WholeNumber(1, 1000), default=10, show_default=True,
              help="How many pages to return.")
@click.option("--hybrid", is_flag=True,
              help="Hybrid search: intent router, keyword + vector fusion, graph boost, "
                   "query expansion; falls back to keywords when vectors are unavailable.")
@trust_options
@json_option
@workspace_options
def search_command(settings: Settings, query: tuple[str, ...], limit: int, hybrid: bool,
                   as_json: bool, trust: TrustCriteria) -> None:
    """Find pages matching QUERY (English, Japanese, Chinese, code tokens)."""
    text = " ".join(query).strip()
    if not text:
        raise click.UsageError("QUERY is empty. Give the words to search for, e.g. "
                               "`mindgraph search \"sync settings\"`.")
    mg = open_core(settings)
    started = time.perf_counter()
    if hybrid:
        # (here: keyword search must not import the providers; tests/cli/test_start_imports.py)
        from ..page.language import query_language
        from ..providers.embedding.load_notice import load_notices

        # a slow first load (the multilingual model) is said on stderr, never on stdout, in
        # the question's language as its letters say (Han alone: Chinese; which of ja and zh
        # the pages make it is known only once they are read, while the model loads)
        with load_notices(lambda line: echo(line, err=True),
                          settings.embedding.load_notice_after_s, query_language(text)):
            mg.start_model(text)    # loads while the page cache, keyword index and graph do
            response = trusted_hybrid(mg, text, limit, trust)
        trusts = mg.trust_of(r.page for r in response.results)
        mg.usage_log.record("cli", text, intent=response.intent.name,
                            results=[r.page for r in response.results],
                            result_count=len(response.results),
                            latency_ms=(time.perf_counter() - started) * 1e3)
        # raw/'s notes never compiled: "No page matches." alone read as "the notes do not say"
        empty = None
        if not response.results and not len(mg.keyword_index()):
            from .no_pages import why_no_pages
            empty = why_no_pages(settings)
        if as_json:
            payload = response.to_dict()
            emit_json({**payload, "results": with_trust(payload["results"], trusts),
                       # the operator's own terminal: the provider's or app's words too
                       "degradation": [getattr(note, "detail", note)
                                       for note in response.degradation],
                       **({"note": empty} if empty else {})})
        else:
            _print_hybrid(response, trusts)
            if empty:
                echo(empty)
        return
    changes = mg.sync()
    # the text's "matched … in …" in the question's language; the JSON's stays English
    results, notes = keyword_answer(mg, text, limit, trust, localized=not as_json)
    elapsed = time.perf_counter() - started
    mg.usage_log.record("cli", text, intent="keyword", results=[r["page"] for r in results],
                        result_count=len(results), latency_ms=elapsed * 1e3)
    if as_json:
        payload: dict[str, Any] = {"query": text, "retriever": "keyword",
                                   "count": len(results), "results": results,
                                   "degradation": notes,
                                   "index": {"pages": len(mg.keyword_index()),
                                             "updated": changes.to_dict()},
                                   "seconds": round(elapsed, 4)}
        if not mg.keyword_index().query_terms(text):
            payload["note"] = "the query has no searchable terms (only stop words or symbols)"
        elif not payload["index"]["pages"]:
            from .no_pages import why_no_pages      # (not imported by a search that finds)
            payload["note"] = why_no_pages(settings)
        emit_json(payload)
        return
    lang = mg.query_language(text) if notes else "en"
    for note in notes:
        echo(_note(getattr(note, "detail", note), lang))   # the operator's own terminal
    if not results:
        shown = text if len(text) <= 80 else f"{text[:77]}…"     # a 10,000-character query
        echo(f"No page matches '{shown}'." if not notes else
             f"No page matching '{shown}' meets {trust.label()}.")
        if not len(mg.keyword_index()):
            from .no_pages import why_no_pages
            echo(why_no_pages(settings))
        return
    for r in results:
        where = f"  § {r['heading']}" if r["heading"] else ""
        echo(f"{r['rank']:2}. {r['page']}  ({r['score']:.3f}){where}"
             f"{_marked(r['trust'])}")
        echo(f"    {r['snippet']}")
        echo(f"    {r['why']['summary']}")


def _note(detail: str, lang: str) -> str:
    """``note: detail``, labelled in the question's language ``lang`` (text/answer_labels.py)."""
    from ..text.answer_labels import label, localized

    return label(lang, "note", note=detail) if localized(lang) else f"note: {detail}"


def _marked(info: dict[str, Any] | None) -> str:
    """`  [L2 verified, fresh]` for a page that was ever verified ("" for L0 unverified, the
    default: JSON output always carries it)."""
    if not info or (info["level"] == 0 and info["status"] == "unverified"):
        return ""
    return f"  [{trust_line(info)}]"


def _print_hybrid(response, trusts: dict[str, dict[str, Any]]) -> None:
    """The answer as a reader sees it, labelled in the question's language (the summary
    line's, ``response.language``: text/answer_labels.py) or, without a table, English."""
    from ..retrieval.definition import WHY
    from ..text.answer_labels import INTENT_WORDS
    from ..text.answer_labels import WHY as WHY_IN
    from ..text.answer_labels import label, localized, name

    lang = response.language if localized(response.language) else "en"

    def say(key: str, english: str, **fields: Any) -> str:
        return english if lang == "en" else label(lang, key, **fields)

    intent = response.intent
    also = ", ".join(response.expanded_queries)
    echo(say("intent", f"intent: {intent.name} ({intent.confidence:.1f})",
             intent=INTENT_WORDS.get(lang, {}).get(intent.name, intent.name),
             confidence=f"{intent.confidence:.1f}")
         + (say("also_searched", f"; also searched: {also}", queries=also)
            if response.expanded_queries else ""))
    for note in response.degradation:
        detail = getattr(note, "detail", note)    # the operator's own terminal
        echo(say("note", f"note: {detail}", note=detail))
    if not response.results:
        echo(response.interpretation)
        return
    for rank, r in enumerate(response.results, 1):
        where = f"  § {r.heading}" if r.heading else ""
        found = say("joiner", ", ").join((f"{name(lang, key)} #{v['rank']}" if lang == "en" else
                           label(lang, "ranked", name=name(lang, key), rank=v["rank"]))
                          if "rank" in v else name(lang, key)
                          for key, v in sorted(r.sources.items()))
        boosts = "".join(f" +{name(lang, k)}" for k in r.boosts)
        echo(f"{rank:2}. {r.page}  ({r.score:.3f}){where}{_marked(trusts.get(r.page))}")
        echo(f"    {r.snippet}")
        echo("    " + say("found_by", f"found by {found}{boosts}", found=found, boosts=boosts))
        for boost in r.boosts:
            if boost in WHY:
                why = WHY_IN.get(lang, {}).get(boost, WHY[boost])
                echo("    " + say("why", f"why: {why}", why=why))
    echo(response.interpretation)
    if response.follow_ups:
        queries = " | ".join(response.follow_ups)
        echo(say("next", "next: " + queries, queries=queries))
    echo(f"({response.timings_ms.get('total', 0):.1f} ms)")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(search_command)
