"""`mindgraph context "SITUATION"`: top knowledge for an agent, never failing the agent."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..config import load_settings
from ..providers.embedding.load_notice import load_notices, load_seconds
from ..retrieval.context import ContextBlock
from ..trust.answer import TrustCriteria, trusted_context
from .common import (config_option, dir_option, echo, emit_json, json_option, open_core,
                     trust_options, workspace_location)
from .whole_number import WholeNumber


@click.command("context")
@click.argument("situation", nargs=-1, required=True)
@dir_option
@config_option
@click.option("--limit", "-n", type=WholeNumber(1, 20), default=3, show_default=True,
              help="How many notes to include.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.01), default=None,
              help="Time limit in seconds for answering (default: "
                   "serve.context_timeout_s, 5), not counting opening the indexes nor the "
                   "embedding model's one-time load.")
@trust_options
@json_option
def context_command(situation: tuple[str, ...], base_dir: Path | None, config_path: Path | None,
                    limit: int, timeout_s: float | None, as_json: bool,
                    trust: TrustCriteria) -> None:
    """Print the notes most relevant to SITUATION as a compact markdown block with sources.

    Made to be called by agents and hooks: it always exits 0, and prints an empty block when
    it fails or finds nothing; when the vectors time out, the keyword matches alone (the
    reason goes to stderr, or to --json). The limit covers answering: the time this process
    spends opening the wiki's indexes and vector store (--json: open_ms) and loading the
    embedding model (seconds for the multilingual one, once) is not counted against it; a
    running `serve` or `mcp` has them open, and its limit is the whole limit.
    """
    text = " ".join(situation).strip()
    started = time.perf_counter()
    trusts: dict = {}
    open_ms: float | None = None
    try:
        settings = load_settings(*workspace_location(base_dir, config_path))
        mg = open_core(settings)
        # stderr: never in the block
        with load_notices(lambda line: echo(line, err=True),
                          settings.embedding.load_notice_after_s):
            # a one-shot process: opening the pages, keyword index, graph and vector store
            # (a server has them open) and the model's load are not the answer's slowness;
            # the limit covers answering
            mg.hybrid_retriever()
            open_ms = (time.perf_counter() - started) * 1e3
            block = trusted_context(mg, text, limit, trust, timeout_s, excluded=load_seconds)
        trusts = mg.trust_of(block.sources) if as_json and block.sources else {}
        if settings.not_a_workspace(settings.wiki_dir) is None:
            # outside a workspace (a mistyped -C) nothing is logged: no state folder appears
            mg.usage_log.record("cli", text, intent="context", results=block.sources,
                                result_count=len(block.sources),
                                latency_ms=(time.perf_counter() - started) * 1e3,
                                status=block.status)
    except BaseException as exc:  # noqa: BLE001 - the contract is "never break the caller"
        block = ContextBlock("", (), "error", f"{type(exc).__name__}: {exc}")
    if as_json:
        emit_json({**block.to_dict(), "trust": trusts,
                   "open_ms": None if open_ms is None else round(open_ms, 1)})
    else:
        echo(block.markdown, nl=False)
        if block.status != "ok":
            echo(f"mindgraph context: {block.status}: {block.detail}{_hint(block.status)}",
                 err=True)


def _hint(status: str) -> str:
    """What to do about a timeout."""
    if status != "timeout":
        return ""
    return " (give more with --timeout SECONDS or serve.context_timeout_s)"


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(context_command)
