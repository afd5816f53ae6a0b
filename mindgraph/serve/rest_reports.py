"""REST routes that report on the whole wiki, each on the slow lane (they read every page,
so they cannot starve searches): GET /check (broken links, orphans, duplicates), GET /lint
(what a careful editor would flag), GET /calibrate (the recency decay the usage log argues
for; writes nothing), GET /timeline (dated notes mentioning a concept) and GET /coverage (how
much of a codebase the wiki knows: a folder inside the workspace, never raw/, wiki/ or the
state folder for an agent other than the local identity)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from fastapi import Query

from ..core import Mindgraph
from ..lint.findings import RULES
from ..scopes import Identity
from . import schemas as s
from .lanes import ServerLanes
from .params import folder_inside
from .rest_params import Day
from .rest_routing import Caller

_RULE = "(" + "|".join(RULES) + ")"
RULE_LIST = f"^{_RULE}(,{_RULE})*$"


def add_report_routes(route: Callable[..., Callable], mg: Mindgraph, fresh: Callable[[], None],
                      lanes: ServerLanes) -> None:
    """Register the routes with rest.py's ``route`` helper."""

    @route("get", "/check", s.CheckOut, "Broken links, pages without backlinks, duplicates",
           lane=lanes.slow)
    def check(who: Caller) -> dict[str, Any]:
        fresh()
        return mg.as_identity(who).check().to_dict()

    @route("get", "/lint", s.LintOut, "What a careful editor would flag: summaries, dangling "
           "references, conflicting facts, deprecated-but-current, near-duplicates", 400,
           lane=lanes.slow)
    def lint(who: Caller, judge: Literal["offline", "llm", "auto"] = Query(
                 "offline", description="Who decides which similar statements contradict: "
                                        "offline rules, the configured LLM, or the LLM when "
                                        "one is configured"),
             limit: int = Query(200, ge=1, le=10000, description="At most this many findings "
                                                                 "(counts cover all)"),
             rule: str | None = Query(None, pattern=RULE_LIST, description="Only these rules, "
                                      "comma-separated (" + ", ".join(RULES) + "; default: all but "
                                      "unresolved-link)")
             ) -> dict[str, Any]:
        fresh()
        asked = rule.split(",") if rule else ()
        report = mg.as_identity(who).lint(judge, asked).to_dict()   # only those rules run
        return report | {"findings": report["findings"][:limit]}

    @route("get", "/calibrate", s.CalibrateOut, "The recency decay the usage log argues for: "
           "MRR@10 of the pages read after each logged query under each λ (writes nothing)",
           lane=lanes.slow)
    def calibrate(who: Caller) -> dict[str, Any]:
        fresh()
        return mg.as_identity(who).calibrate_recency().to_dict()

    @route("get", "/timeline", s.TimelineOut, "Dated notes mentioning a concept", 400,
           lane=lanes.slow, prepare=_window)
    def timeline(who: Caller,
                 concept: str = Query(..., min_length=1, max_length=200, pattern=r"\w",
                                      description="A phrase or a page name (with a word in "
                                                  "it)"),
                 limit: int = Query(50, ge=1, le=1000), newest_first: bool = False,
                 since: Day | None = None, until: Day | None = None
                 ) -> dict[str, Any]:
        # reads raw/ and wiki/ from disk itself: no refresh needed
        return mg.as_identity(who).timeline(concept, since=since, until=until,
                                            newest_first=newest_first, limit=limit).to_dict()

    @route("get", "/coverage", s.CoverageOut, "How much of a codebase the wiki knows", 400, 404,
           lane=lanes.slow)
    def coverage(who: Caller, codebase: str = Query(..., min_length=1, max_length=1000,
                                       description="Folder inside the workspace"),
                 service_level: bool = False,
                 min_mentions: int = Query(1, ge=1, le=1000)) -> dict[str, Any]:
        fresh()
        folder = folder_inside(mg.settings.base_dir, codebase, _private(mg, who))
        return mg.as_identity(who).coverage(folder, service_level=service_level,
                                            min_mentions=min_mentions).to_dict()


def _window(since: Any = None, until: Any = None, **_: Any) -> None:
    """A backwards window is a 400 at once, not after waiting for the slow lane and reading
    every note."""
    from ..timeline.build import check_window      # (as core/services.py: on first use)

    check_window(since, until)


def _private(mg: Mindgraph, who: Identity) -> tuple[Path, ...]:
    """The folders whose file names an agent may not list (coverage of raw/ would name other
    scopes' notes): raw/, wiki/ and the state folder; none for the local identity."""
    s = mg.settings
    return () if who.is_local else (s.raw_dir, s.wiki_dir, s.state_dir)


__all__ = ["add_report_routes"]
