"""Lint a workspace: the vault, where its raw notes are, and the LLM judge when asked for."""

from __future__ import annotations

from typing import Literal

from ..config import Settings
from ..errors import InputError
from ..page.vault import Vault
from .findings import LintReport
from .llm import LLMJudge
from .run import lint_vault

JudgeChoice = Literal["auto", "offline", "llm"]


def lint_workspace(vault: Vault, settings: Settings, judge: JudgeChoice = "auto") -> LintReport:
    """Every finding over the wiki. ``judge``: "offline" never calls a model; "llm" needs
    compile.provider set (InputError naming the key otherwise); "auto" uses the LLM when one
    is configured."""
    provider = None
    if judge != "offline":
        from ..providers.llm.factory import make_llm_provider

        provider = make_llm_provider(settings)
        if provider is None and judge == "llm":
            raise InputError(f"judge=llm needs an LLM: set compile.provider (anthropic, gemini or "
                             f"openai) in {settings.source}, or use the offline judge.")
    if provider is None:
        return lint_vault(vault, settings.raw_dir, settings.base_dir)
    llm = LLMJudge(provider)
    return lint_vault(vault, settings.raw_dir, settings.base_dir, judge=llm,
                      judge_name=llm.identity)
