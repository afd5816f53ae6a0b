"""Lint a workspace: the vault, where its raw notes are, and the LLM judge when asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Literal

from ..config import Settings
from ..errors import InputError
from ..page.vault import Vault
from .findings import LLM_RULES, RULES, LintReport
from .llm import LLMJudge
from .run import Phases, lint_vault

JudgeChoice = Literal["auto", "offline", "llm"]


def lint_workspace(vault: Vault, settings: Settings, judge: JudgeChoice | str = "auto",
                   visible: Callable[[str], bool] | None = None,
                   rules: Iterable[str] = (), phases: Phases | None = None) -> LintReport:
    """Every finding over the wiki. ``judge``: "offline" never calls a model; "llm" needs
    compile.provider set (InputError naming the key otherwise); "auto" uses the LLM when one
    is configured. ``visible``: a scoped view's (which files of raw/ and wiki/ it sees, by
    their path there); a file it does not see is one that does not exist. ``rules``: only
    these are run (all when none are given): the LLM judges only conflicting-fact, so
    without it no LLM is looked for, even with judge "llm". ``phases``: progress
    (lint/run.py)."""
    seen = None if visible is None else files_seen(settings, visible)
    rules = tuple(rules)
    provider = None
    if judge != "offline" and set(rules or RULES) & set(LLM_RULES):
        from ..providers.llm.factory import make_llm_provider

        provider = make_llm_provider(settings)
        if provider is None and judge == "llm":
            raise InputError(f"judge=llm needs an LLM: set compile.provider (anthropic, gemini or "
                             f"openai) in {settings.source}, or use the offline judge.")
    if provider is None:
        return lint_vault(vault, settings.raw_dir, settings.base_dir, seen=seen,
                          raw_label=settings.paths.raw, rules=rules,
                          unresolved=settings.check.unresolved_links, phases=phases)
    llm = LLMJudge(provider)
    return lint_vault(vault, settings.raw_dir, settings.base_dir, judge=llm,
                      judge_name=llm.identity, seen=seen, raw_label=settings.paths.raw,
                      rules=rules, unresolved=settings.check.unresolved_links, phases=phases)


def files_seen(settings: Settings, visible: Callable[[str], bool]) -> Callable[[Path], bool]:
    """Does a scoped view see the file at this (resolved) path? In raw/ and wiki/, the files
    ``visible`` accepts (by their path there); in the state folder none; elsewhere in the
    workspace any (as `coverage` reads them)."""
    state = settings.state_dir.resolve()
    roots = (settings.raw_dir.resolve(), settings.wiki_dir.resolve())

    def seen(path: Path) -> bool:
        if path.is_relative_to(state):
            return False
        root = next((r for r in roots if path.is_relative_to(r)), None)
        return root is None or visible(path.relative_to(root).as_posix())
    return seen
