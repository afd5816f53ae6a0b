"""`mindgraph bench QUERIES`: retrieval quality and speed per method, language, intent and style."""

from __future__ import annotations

from pathlib import Path

import click

from ..bench.corpora import beir_retriever, wiki_retriever
from ..bench.crosslingual import cross_lingual_questions, language_pages, language_retriever
from ..bench.runner import METHODS, NATIVE_METHODS, format_table, run_methods
from ..core import Mindgraph
from ..errors import InputError
from ..retrieval.datasets import Question, load_beir, load_questions
from .common import echo, emit_json, is_terminal, json_option, workspace_options
from .progress import Progress


@click.command("bench")
@click.argument("queries", type=click.Path(exists=True, path_type=Path))
@workspace_options
@click.option("--methods", default=None,
              help=f"Comma-separated methods: {', '.join(METHODS)} (default keyword,vector,"
                   f"hybrid, and native when an adapter offers its own search).")
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@click.option("--no-embed", is_flag=True, help="Do not embed first (vector methods degrade). "
              "Methods without vectors (keyword) never embed.")
@click.option("--misses", is_flag=True, help="List the questions each method missed.")
@click.option("--cross-lingual", "cross_lingual", type=click.Choice(["en", "ja", "zh"]),
              help="Ask the questions in other languages over the wiki's pages in this "
                   "language only; the answer is the counterpart of each relevant page "
                   "(same frontmatter permalink).")
@json_option
def bench_command(settings, queries: Path, methods: str | None, split: str, no_embed: bool,
                  misses: bool, cross_lingual: str | None, as_json: bool) -> None:
    """Score retrieval methods on QUERIES: a JSONL question file (over this workspace's wiki)
    or a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)."""
    chosen = [m.strip() for m in (methods or DEFAULT_METHODS).split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise click.BadParameter(f"unknown method(s) {unknown}; choose from "
                                 f"{', '.join(METHODS)}.", param_hint="--methods")
    # only methods that use vectors need the corpus embedded (SciFact: 11 minutes)
    embed = not no_embed and any(METHODS[m].use_vector for m in chosen)
    progress = Progress("embedding", "chunks") if not (as_json and is_terminal()) else None
    advance = progress.advance if progress else None
    graded = None
    if queries.is_dir():
        data = load_beir(queries, split)
        retriever = beir_retriever(settings, data, queries.name, embed, advance)
        questions = [Question(qid, text, tuple(d for d, g in data.qrels[qid].items() if g > 0))
                     for qid, text in data.queries.items()]
        graded = {q: {f"{d}.md": g for d, g in rel.items()} for q, rel in data.qrels.items()}
        questions = [Question(q.id, q.query, tuple(f"{d}.md" for d in q.relevant))
                     for q in questions]
        label = f"{queries} ({len(data.documents)} documents)"
    else:
        questions = load_questions(queries)
        if not questions:
            raise InputError(f"{queries} holds no questions. Each line is one JSON object "
                             f"with id, query and relevant.")
        retriever = wiki_retriever(Mindgraph(settings), embed, advance)
        unknown_pages = sorted({p for q in questions for p in q.relevant
                                if p not in retriever.pages})
        if unknown_pages:
            shown = ", ".join(unknown_pages[:5]) + (" ..." if len(unknown_pages) > 5 else "")
            echo(f"warning: {len(unknown_pages)} relevant page(s) of {queries} are not "
                 f"in the wiki and can never be found: {shown}. Paths are relative to "
                 f"{settings.wiki_dir}.", err=True)
        label = f"{queries} over {settings.wiki_dir} ({len(retriever.pages)} pages)"
        if cross_lingual:
            questions, retriever, label = _cross_lingual(settings, questions, retriever,
                                                         cross_lingual, queries)
    if progress:
        progress.close()
    chosen = _native_methods(chosen, retriever, methods is None)
    # warm up caches, the model (when used) and each language's dictionary (a first Japanese
    # question loads MeCab's: ~0.3 s once per process, not per question)
    firsts = {q.lang: q for q in reversed(questions)}
    for question in dict.fromkeys([*questions[:3], *firsts.values()]):
        for method in chosen:
            retriever.search(question.query, METHODS[method])
    reports = run_methods(retriever, questions, chosen, graded)
    if as_json:
        emit_json({"queries": str(queries), "questions": len(questions),
                   "methods": [r.to_dict() for r in reports]})
        return
    echo(f"{len(questions)} questions: {label}")
    echo(format_table(reports))
    if misses:
        for report in reports:
            echo(f"\nmissed by {report.method} (no relevant page in the top 10):")
            for miss in report.misses:
                echo(f"  {miss['id']}: {miss['query']}")


DEFAULT_METHODS = "keyword,vector,hybrid"


def _native_methods(chosen: list[str], retriever, by_default: bool) -> list[str]:
    """Add the native method by default when an adapter offers its own search; refuse it
    when none does."""
    if retriever.native is None:
        asked = [m for m in chosen if m in NATIVE_METHODS]
        if asked:
            raise click.BadParameter(f"{', '.join(asked)}: no configured adapter offers its own "
                                     f"search (search_by_query); drop it or configure one.",
                                     param_hint="--methods")
        return chosen
    return [*chosen, *NATIVE_METHODS] if by_default else chosen


def _cross_lingual(settings, questions, retriever, lang: str, queries: Path):
    """The questions not in ``lang``, over the wiki's ``lang`` pages only."""
    target = language_pages(retriever.pages, lang)
    kept, left_out = cross_lingual_questions(questions, retriever.pages, target, lang)
    if not kept:
        raise InputError(f"{queries}: no question has a {lang} counterpart of its pages in "
                         f"{settings.wiki_dir} (pages are matched by frontmatter permalink). "
                         f"Check that the wiki holds translated pages with permalinks.")
    if left_out:
        echo(f"warning: {left_out} question(s) left out: none of their pages has a "
             f"{lang} counterpart with the same permalink.", err=True)
    label = (f"{queries}, questions not in {lang}, over the {len(target)} {lang} pages of "
             f"{settings.wiki_dir} (cross-lingual)")
    return kept, language_retriever(settings, retriever, target), label


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(bench_command)
