"""The workspace's services beyond queries: ingest, stats, check, lint, coverage, timeline,
recency calibration, fact propagation, trust and the usage log (mixed into ``Mindgraph``;
each imports its package when called)."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..errors import InputError
from ..fsutil import writing_nothing
from .indexes import WarmIndexes, query

if TYPE_CHECKING:
    from ..calibrate.recency_fit import Fit
    from ..coverage.report import CoverageReport
    from ..ingest.report import IngestReport
    from ..lint.findings import LintReport
    from ..page.check import CheckReport
    from ..page.model import Page
    from ..propagate.service import PropagationService
    from ..quotas import Quotas
    from ..scopes import Scopes
    from ..timeline.build import Timeline
    from ..trust.service import TrustService
    from ..usage import UsageLog


class Services(WarmIndexes):
    """Each method builds its package's service over the warm state and calls it (the
    vectors and scopes it uses come from the ``Mindgraph`` it is mixed into)."""

    _raw_visible: Callable[[str], bool] | None = None    # a view's filters (scopes/views.py)
    _note_visible: Callable[[str, Page], bool] | None = None
    scopes: Scopes
    embedding_provider: Callable[[], Any]
    vector_store: Callable[[], Any]
    hybrid_retriever: Callable[[], Any]

    @functools.cached_property
    def trust(self) -> TrustService:
        """Verification, audit and the run ledger (mindgraph/trust/)."""
        from ..trust.service import TrustService

        return TrustService(self.settings)

    @functools.cached_property
    def quotas(self) -> Quotas:
        """What each server identity may spend: LLM calls, documents (mindgraph/quotas/)."""
        from ..quotas import Quotas

        return Quotas(self.settings.limits, self.settings.state_dir)

    @property
    def usage_log(self) -> UsageLog:
        """Where queries are logged (serve.usage_log under the state folder; "" = off)."""
        from ..usage import UsageLog

        name = self.settings.serve.usage_log
        return UsageLog(self.settings.state_dir / name if name else None,
                        max_bytes=self.settings.serve.usage_log_max_bytes)

    def ingest(self, *, provider: Any = None, dry_run: bool = False, force: bool = False,
               only: tuple[str, ...] = (), progress: Any = None,
               phases: Any = None, session: Any = None,
               changed: Iterable[str] | None = None,
               allow_removals: bool = False, notice: Any = None) -> IngestReport:
        """Compile raw/ into wiki/ (offline or with the configured LLM), then re-sync indexes.
        ``session`` and ``changed``: a long-lived caller's targeted run (ingest/targeted.py);
        ``allow_removals``: apply a run the removal guard would hold (ingest/guard.py);
        ``notice``: hears, once, when the run has waited a second for the apply lock.

        Two ingests of one workspace must not run at once (the REST API refuses a second)."""
        from ..ingest.pipeline import run_ingest

        # Outside the core lock: ingest only writes wiki/ (each file atomically) and its own
        # state, so queries go on meanwhile and see pages as they land.
        with writing_nothing() if dry_run else contextlib.nullcontext():
            report = run_ingest(self.settings, provider=provider, dry_run=dry_run,
                                force=force, only=only, progress=progress, phases=phases,
                                session=session, changed=changed,
                                allow_removals=allow_removals, notice=notice)
        with self._lock:
            if self._cache is not None and not dry_run:
                self.sync()
        return report

    @query
    def stats(self) -> dict[str, Any]:
        """Counts: pages, sections, links by kind and resolution, tags, raw files by state."""
        from ..ingest.counts import workspace_stats

        vault = self.vault()
        return workspace_stats(vault, self.settings.state_dir, self._raw_visible,
                               trust=self.trust.mix(vault.pages.values()),
                               raw_dir=self.settings.raw_dir)

    @query
    def attachment(self, target: str, page: str = "") -> tuple[Path, str]:
        """(real path, content type) of the attachment file in raw/ that an embed of
        ``target`` in ``page`` (path, title, alias or file name; "" for the vault root)
        names: images, pdf, audio and video only, never a file outside raw/
        (dashboard/attachments.py). NotFoundError for anything else."""
        from ..dashboard.attachments import attachment_file, missing_attachment
        from ..errors import NotFoundError

        source = self.page(page).path if page else ""    # type: ignore[attr-defined]
        found = attachment_file(self.settings.raw_dir, target, source, self._raw_visible)
        if found is None:
            raise NotFoundError(missing_attachment(target, source))
        return found

    def attachment_locator(self) -> Callable[[str, str], Path | None]:
        """``locate(target, page path)``: the real path of the file an attachment embed in
        that page finds, as ``attachment`` finds it, or None; for the many embeds of one page
        view, which this view's notes and raw/'s folders are read for once, not per embed,
        and each (target, page) found once (``attachment`` per embed read every page's
        sources and stat'ed every folder of raw/: a page of 7,500 embeds of one picture took
        6 s a view on a workspace of 15 pages)."""
        from ..dashboard.attachment_index import attachment_index
        from ..dashboard.attachments import attachment_file

        raw_dir, visible = self.settings.raw_dir, self._raw_visible
        by_name = attachment_index(raw_dir).locator(visible)
        found: dict[tuple[str, str], Path | None] = {}

        def locate(target: str, source: str) -> Path | None:
            key = (target, source)
            if key not in found:
                hit = attachment_file(raw_dir, target, source, visible, by_name)
                found[key] = hit[0] if hit is not None else None
            return found[key]

        return locate

    def attachment_finder(self) -> Callable[[str, str], bool]:
        """``exists(target, page path)``: whether an attachment embed finds its file in raw/
        (for this view; from the process's index of raw/, dashboard/attachment_index.py:
        built once, then kept current by its folders' change stamps, not by a walk)."""
        from ..dashboard.attachment_index import attachment_index

        return attachment_index(self.settings.raw_dir).finder(self._raw_visible)

    @query
    def check(self) -> CheckReport:
        """Lint the wiki, its trust records included (the mix, disputed pages), and the raw
        notes that failed or warned (ingest/raw_findings.py); with scopes configured, also the
        pages no folder rule places."""
        from ..ingest.raw_findings import raw_note_findings
        from ..page.check import check_vault
        from ..scopes.check import unscoped_findings

        vault = self.vault()
        report = raw_note_findings(check_vault(vault, self.settings.raw_dir, self._raw_visible,
                                               raw_folder=self.settings.paths.raw,
                                               attachments=self._check_attachments(vault),
                                               unresolved=self.settings.check.unresolved_links),
                                   self.settings.state_dir, self._raw_visible,
                                   raw_dir=self.settings.raw_dir,
                                   raw_folder=self.settings.paths.raw)
        return unscoped_findings(self.trust.with_trust(report, vault), self.scopes, vault.pages)

    def _check_attachments(self, vault: Any) -> Callable[[str, str], bool]:
        """``exists(target, page path)`` over the wiki's and raw/'s files as `check` counts
        them (symlinks too), from the process's indexes of the two folders: a server's
        GET /check walked both on every call (dashboard/attachment_index.py)."""
        from ..dashboard.attachment_index import attachment_index

        finders = [attachment_index(root).finder(self._raw_visible, links=True)
                   for root in (vault.root, self.settings.raw_dir)]
        return lambda target, source: any(found(target, source) for found in finders)

    def calibrate_recency(self, questions: Iterable[Any] = ()) -> Fit:
        """The recency λ (and evergreen pages) the usage log and ``questions`` argue for."""
        from ..calibrate.service import calibrate_recency

        return calibrate_recency(self.hybrid_retriever(), self.usage_log.lines(), questions,
                                 self.settings.retrieval.recency_lambda)

    @property
    def propagation(self) -> PropagationService:
        """Fact propagation behind approval (mindgraph/propagate/)."""
        from ..propagate.service import PropagationService

        return PropagationService(self.vault, self.settings)

    def lint(self, judge: str = "auto", rules: Iterable[str] = (),
             phases: Any = None) -> LintReport:
        """What a careful editor would flag in the wiki (mindgraph/lint/), read-only: the
        findings of ``rules`` only (all when none are given), only those rules run;
        ``phases`` hears of the pages each phase has done (lint/run.py)."""
        from ..lint.service import lint_workspace

        return lint_workspace(self.vault(), self.settings, judge, self._raw_visible, rules,
                              phases)

    def coverage(self, codebase: str | Path, *, service_level: bool = False,
                 excludes: tuple[str, ...] = (), default_excludes: bool = True,
                 min_mentions: int = 1, semantic: bool = False,
                 semantic_threshold: float | None = None) -> CoverageReport:
        """How much of ``codebase`` the wiki refers to; with ``semantic`` (or a
        ``semantic_threshold``, else each model's own), also which units' docstrings are that
        close (cosine) to a section's stored vector."""
        from ..coverage.report import measure_coverage
        from ..coverage.semantic import find_semantic_links
        from ..coverage.units import DEFAULT_EXCLUDES, discover_units

        patterns = tuple(excludes) + (DEFAULT_EXCLUDES if default_excludes else ())
        units = discover_units(Path(codebase), patterns, service_level, skipped := list[str]())
        if not units:   # a gate over nothing would pass: 0/0 is not 100%
            raise InputError(f"{codebase} holds no source files to measure (.py, .ts, .go, "
                             f".rs, ... outside the excludes). Pass the folder of the code, "
                             f"e.g. `mindgraph coverage src`.")
        with self._lock:    # only now: a slow read of the code must not hold every query
            pages = dict(self.vault().pages)
            found = None if not semantic and semantic_threshold is None else find_semantic_links(
                units, self.embedding_provider(), self.vector_store(), semantic_threshold,
                pages=pages)
        return measure_coverage(units, pages.values(), codebase=str(codebase),
                                level="service" if service_level else "module",
                                min_mentions=min_mentions,
                                semantic=found.links if found else None,
                                semantic_model=found.model_version if found else "",
                                semantic_threshold=found.threshold if found else None,
                                semantic_thresholds=found.thresholds if found else None,
                                notes=(*skipped, *(found.notes if found else ())))

    def timeline(self, concept: str, *, since: dt.date | None = None,
                 until: dt.date | None = None, newest_first: bool = False,
                 limit: int | None = None, use_git: bool = True) -> Timeline:
        """Dated notes (raw and wiki) that mention ``concept``, in date order."""
        from ..page.vault import PageLimits
        from ..timeline.build import build_timeline

        s = self.settings
        return build_timeline(concept, [("raw", s.raw_dir), ("wiki", s.wiki_dir)], since=since,
                              until=until, newest_first=newest_first, limit=limit, use_git=use_git,
                              limits=PageLimits.of(s.limits), state_dir=s.state_dir,
                              visible=self._note_visible)
