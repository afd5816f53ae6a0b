"""`mindgraph calibrate`: the recency decay λ (and evergreen pages) the usage log argues for."""

from __future__ import annotations

from pathlib import Path

import click

from ..calibrate.settings_file import set_retrieval_keys
from ..config import CONFIG_FILENAME, load_settings
from ..core import Mindgraph
from ..retrieval.datasets import load_questions
from .common import echo, emit_json, json_option, workspace_options


@click.command("calibrate")
@workspace_options
@click.option("--questions", "questions_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also fit on benchmark questions (JSONL with id, query, relevant).")
@click.option("--write", is_flag=True,
              help="Write the proposed retrieval.recency_lambda into mindgraph.yml (only "
                   "that line changes).")
@click.option("--evergreen", is_flag=True,
              help="With --write, also add the proposed evergreen pages to "
                   "retrieval.evergreen_pages.")
@json_option
def calibrate_command(settings, questions_file: Path | None, write: bool, evergreen: bool,
                      as_json: bool) -> None:
    """Propose the recency decay λ that would have ranked the pages people read after their
    queries (the usage log) highest — and benchmark questions' answers, with --questions —
    showing MRR@10 for each λ tried. Writes nothing unless --write."""
    settings.require_wiki()
    questions = load_questions(questions_file) if questions_file else []
    mg = Mindgraph(settings)
    fit = mg.calibrate_recency(questions)
    written = None
    if write and fit.examples:
        values: dict = {"recency_lambda": fit.proposed}
        if evergreen and fit.evergreen:
            values["evergreen_pages"] = sorted(set(settings.retrieval.evergreen_pages)
                                               | set(fit.evergreen))
        target = Path(settings.source) if Path(settings.source).is_file() \
            else settings.base_dir / CONFIG_FILENAME
        set_retrieval_keys(target, values, lambda path: load_settings(settings.base_dir, path))
        written = str(target)
    if as_json:
        emit_json(fit.to_dict() | {"written": written})
        return
    for note in fit.notes:
        echo(f"note: {note}")
    if not fit.examples:
        return
    echo(f"{fit.examples} queries with pages read after them "
         f"(MRR@10 of those pages under each decay λ):")
    for decay, score in fit.curve:
        marks = [m for m, on in (("current", decay == fit.current),
                                 ("proposed", decay == fit.proposed)) if on]
        echo(f"  λ {decay:<7g} {score:.3f}" + (f"  ← {', '.join(marks)}" if marks else ""))
    change = "keep it" if fit.proposed == fit.current else f"λ {fit.current:g} → {fit.proposed:g}"
    echo(f"proposal: {change} (MRR {fit.mrr(fit.current):.3f} → "
         f"{fit.mrr(fit.proposed):.3f})")
    if fit.evergreen:
        echo(f"evergreen: {', '.join(fit.evergreen)} (MRR {fit.mrr(fit.proposed):.3f} → "
             f"{fit.evergreen_mrr:.3f} with them evergreen)")
    if written:
        echo(f"wrote retrieval.recency_lambda: {fit.proposed:g}"
             + (" and retrieval.evergreen_pages" if evergreen and fit.evergreen else "")
             + f" to {written}")
    elif fit.proposed != fit.current or fit.evergreen:
        echo("write it with: mindgraph calibrate --write"
             + (" --evergreen" if fit.evergreen else ""))


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(calibrate_command)
