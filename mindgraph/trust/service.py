"""The trust service: plan a verification, apply an approved plan, audit, list runs.

Built by the composition root from the settings; it reads wiki/ and raw/ (a page's cited files
only where its scope reaches: reach.py), writes only plans and the ledger under the state
folder, and (on apply, with the approved digest) only the ``verification`` and ``evidence``
keys of the planned pages.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..config import Settings
from ..errors import InputError, ProviderError
from ..fsutil import atomic_write_bytes, page_inside, sha256_bytes
from ..page.parse import parse_page
from ..page.vault import iter_markdown_files
from ..scopes.identities import Scopes, load_scopes
from .audit import AuditReport, PageTrust, audit
from .evidence import EvidenceCollector
from .evidence_drift import EvidenceFiles
from .fetch.cache import CachedUrls, EvidenceCache
from .fetch.files import FileFetcher
from .freshness import Freshness, freshness, references, utc_today
from .ledger import Run, append_run, applying, read_runs
from .llm import LLMValidator
from .offline import IDENTITY
from .plan import Plan, Target, load_plan, now_iso, save_plan
from .reach import EvidenceReach, Refusal
from .record import TrustRecord, read_record
from .scope import changed_paths, decoded, outside_scope, over_page_limit, snapshot
from .targets import resolve_targets
from .validate import PageVerdict, offline_judge, validate_page
from .writeback import WritebackError, needs_record_keys, set_record_keys

DUE_WITHIN_DAYS = 7
Writer = Callable[[Path, bytes], None]


@dataclass(frozen=True)
class WikiPage:
    """A wiki page as read for verification: its text and trust record."""

    path: str
    data: bytes
    text: str
    record: TrustRecord
    frontmatter: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanResult:
    """What ``verify`` planned: the plan, where it is, the verdicts and skipped pages."""

    plan: Plan
    path: Path | None          # None: nothing to write, no plan saved
    verdicts: tuple[PageVerdict, ...]
    skipped: tuple[tuple[str, str], ...] = ()   # (page, why)
    unchanged: int = 0         # pages that already hold exactly the records planned
    evidence: dict[str, int] = field(default_factory=dict)  # "url lacked": n (see collector)
    refused: tuple[Refusal, ...] = ()   # cited files out of their page's reach (reach.py)

    def to_dict(self) -> dict:
        """JSON form."""
        return {"plan": str(self.path) if self.path else None,
                "digest": self.plan.digest if self.path else None,
                "targets": len(self.plan.targets), "unchanged": self.unchanged,
                "evidence": self.evidence,
                "refused": [r.to_dict() for r in self.refused],
                "verdicts": [v.to_dict() for v in self.verdicts],
                "skipped": [{"path": p, "reason": r} for p, r in self.skipped]}


@dataclass(frozen=True)
class ApplyResult:
    """What an apply did (its ledger entry)."""

    run: Run
    applied: bool = field(default=False)


class TrustService:
    """Verification, audit and the run ledger of one workspace."""

    def __init__(self, settings: Settings, today: Callable[[], dt.date] | None = None,
                 transport: Any = None, scopes: Scopes | None = None):
        self.settings = settings
        self.today = today or utc_today
        self.transport = transport      # an httpx transport for URL fetches (tests fake it)
        self._scopes = scopes

    @property
    def scopes(self) -> Scopes:
        """The workspace's identities and folder mapping (what each page's evidence may
        reach), from the settings unless given."""
        if self._scopes is None:
            self._scopes = load_scopes(self.settings)
        return self._scopes

    # -- reading ----------------------------------------------------------------------------

    def pages(self, only: Iterable[str] = ()) -> Iterator[WikiPage | tuple[str, str]]:
        """Each wiki page (or (path, why it cannot be read)), optionally only some paths or
        folders (wiki-relative) or pages named by title, alias or file name (targets.py)."""
        self.settings.require_wiki()
        wiki = self.settings.wiki_dir
        wanted = resolve_targets(wiki, only)
        found = set()
        for file in iter_markdown_files(wiki):
            rel = file.relative_to(wiki).as_posix()
            match = next((w for w in wanted if rel == w or rel.startswith(w + "/")
                          or rel == w + ".md"), None)
            if wanted and match is None:
                continue
            found.add(match)
            yield self._read(file, rel)
        missing = [w for w in wanted if w not in found]
        if missing:
            raise InputError(f"no wiki page or folder {', '.join(missing)} under "
                             f"{wiki}. Give paths relative to wiki/, e.g. Folder/Page.md.")

    def _read(self, file: Path, rel: str) -> WikiPage | tuple[str, str]:
        try:
            data = file.read_bytes()
            text = data.decode("utf-8")
        except OSError as exc:
            return rel, f"cannot read ({exc.strerror or exc})"
        except UnicodeDecodeError:
            return rel, "not valid UTF-8; re-save it as UTF-8"
        page = parse_page(text.replace("\r\n", "\n"), rel)
        if page.frontmatter_error:
            return rel, page.frontmatter_error
        return WikiPage(rel, data, text, read_record(page.frontmatter), page.frontmatter)

    def freshness(self, page: WikiPage) -> Freshness:
        """How current a page's verification is today."""
        return freshness(page.record.verification, page.text.replace("\r\n", "\n"),
                         page.record.provenance, self.today(),
                         self.evidence_files.changed(page.path, page.record))

    @functools.cached_property
    def evidence_files(self) -> EvidenceFiles:
        """The local evidence files, re-hashed for freshness (evidence_drift.py)."""
        s = self.settings
        return EvidenceFiles(s.raw_dir, s.wiki_dir, s.trust.fetch_max_bytes)

    # -- planning ---------------------------------------------------------------------------

    def plan(self, only: Iterable[str] = (), due: bool = False, llm: Any = None,
             fetch: bool | None = None) -> PlanResult:
        """Validate the pages (all, ``only`` some, or with ``due`` those stale or due within
        7 days, and those whose record holds evidence they may not read) and save a plan of the records to write; nothing else is written but the
        plan and the evidence cache. With ``llm`` (an LLMProvider) the model judges the
        claims instead of the offline validator; a provider fault skips that page and says
        why. ``fetch`` (default: trust.fetch_urls) fetches cited URLs live; without it they
        are read from the evidence cache."""
        fetch = self.settings.trust.fetch_urls if fetch is None else fetch
        live = self._url_fetcher() if fetch else None
        try:
            return self._plan(only, due, llm, self._collector(live))
        finally:
            if live is not None:
                live.close()
            trust = self.settings.trust          # bounded: what this run read is the newest
            EvidenceCache(self.settings.state_dir).prune(
                trust.evidence_cache_max_days, trust.evidence_cache_max_bytes, self.today())

    def _url_fetcher(self) -> Any:
        from .fetch.url import UrlFetcher      # httpx is imported only when URLs are fetched

        trust = self.settings.trust
        return UrlFetcher(timeout_s=trust.fetch_timeout_s, max_bytes=trust.fetch_max_bytes,
                          max_redirects=trust.fetch_max_redirects, transport=self.transport,
                          allow_private=trust.fetch_private_hosts)

    def _collector(self, live: Any) -> EvidenceCollector:
        s = self.settings
        files = FileFetcher((s.raw_dir, s.wiki_dir), s.trust.fetch_max_bytes)
        return EvidenceCollector(s.raw_dir, s.wiki_dir, files,
                                 CachedUrls(EvidenceCache(s.state_dir), live),
                                 EvidenceReach(s, self.scopes))

    def _plan(self, only: Iterable[str], due: bool, llm: Any,
              collector: EvidenceCollector) -> PlanResult:
        judge: Any = offline_judge if llm is None else LLMValidator(llm)
        identity = IDENTITY if llm is None else judge.identity
        started = now_iso()
        today = self.today()
        trust = self.settings.trust
        verdicts, targets, skipped, unchanged = [], [], [], 0
        for page in self.pages(only):
            if isinstance(page, tuple):
                skipped.append(page)
                continue
            if due and not (self._due(page) or collector.out_of_reach(
                    page.path, page.record, page.frontmatter)):
                continue
            found = collector.collect(page.path, page.text.replace("\r\n", "\n"),
                                      page.record.provenance, page.frontmatter)
            try:
                verdict = validate_page(page.path, page.text.replace("\r\n", "\n"),
                                        page.record, found, today, trust.revalidate_after_days,
                                        trust.primary_sources, judge, identity)
            except ProviderError as exc:     # 429, 5xx, timeouts, garbage: this page only
                skipped.append((page.path, str(exc)))
                continue
            target = Target(page.path, sha256_bytes(page.data), verdict.verification.to_yaml(),
                            verdict.evidence.to_yaml(), verdict.verdict)
            try:
                if not needs_record_keys(page.text, _record_keys(target), page.path):
                    unchanged += 1      # already holds exactly these records: nothing to do
                    continue
            except WritebackError as exc:
                skipped.append((page.path, str(exc)))
                continue
            verdicts.append(verdict)
            targets.append(target)
        plan = Plan(tuple(targets), started, identity)
        faults = tuple(f"{path}: {why}" for path, why in skipped)
        if not targets:
            if faults:      # a run that judged nothing because of faults is on record too
                append_run(self.settings.state_dir, Run(
                    "plan", "FAILED", "DISCARDED", "", started, now_iso(), 0, skipped=faults,
                    reason=f"{len(faults)} page(s) skipped, nothing planned"))
            return PlanResult(plan, None, (), tuple(skipped), unchanged, collector.summary(),
                              tuple(collector.refused))
        path = save_plan(plan, self.settings.state_dir)
        append_run(self.settings.state_dir, Run(
            "plan", "SUCCESS", "PLANNED", plan.digest, started, now_iso(), len(targets),
            skipped=faults, plan=str(path),
            reason=f"{len(faults)} page(s) skipped" if faults else ""))
        return PlanResult(plan, path, tuple(verdicts), tuple(skipped), unchanged,
                          collector.summary(), tuple(collector.refused))

    def _due(self, page: WikiPage) -> bool:
        state = self.freshness(page)
        return state.state != "fresh" or (state.due_in_days is not None
                                          and state.due_in_days <= DUE_WITHIN_DAYS)

    # -- applying ---------------------------------------------------------------------------

    def apply(self, plan_path: Path, approve: str,
              write: Writer = lambda p, d: atomic_write_bytes(p, d)) -> ApplyResult:
        """Write an approved plan: only when ``approve`` is its digest, it was not applied
        before and no target changed since planning; then check the scope. One approval at
        a time per workspace (``applying``), across processes."""
        with applying(self.settings.state_dir):
            return self._apply(plan_path, approve, write)

    def _apply(self, plan_path: Path, approve: str, write: Writer) -> ApplyResult:
        started = now_iso()
        plan = load_plan(plan_path)
        digest = plan.digest
        refusal = self._refusal(plan, approve)
        if refusal:
            status = "CONSUMED" if refusal.startswith("plan already applied") else "FAILED"
            return self._record(Run("apply", status, "DISCARDED", digest, started, now_iso(),
                                    len(plan.targets), reason=refusal, plan=str(plan_path)))
        wiki = self.settings.wiki_dir
        roots = (wiki, self.settings.raw_dir)
        try:        # every page rendered before any is written: a refusal writes nothing
            staged = [(target, wiki / target.path,
                       _write_back(_as_planned(wiki / target.path, target).decode("utf-8"),
                                   target).encode("utf-8")) for target in plan.targets]
        except (OSError, UnicodeDecodeError, WritebackError) as exc:
            return self._record(Run("apply", "FAILED", "DISCARDED", digest, started, now_iso(),
                                    len(plan.targets), reason=f"stopped at a page: {exc}",
                                    plan=str(plan_path)))
        too_large = over_page_limit([(t.path, data) for t, _, data in staged],
                                    self.settings.limits.max_page_bytes)
        if too_large:
            return self._record(Run("apply", "FAILED", "DISCARDED", digest, started, now_iso(),
                                    len(plan.targets), reason=too_large, plan=str(plan_path)))
        before = snapshot(roots)
        written: list[str] = []
        try:
            for target, file, data in staged:
                write(file, data)
                written.append(target.path)
        except OSError as exc:
            return self._record(Run("apply", "FAILED", "PROVISIONAL_RETAIN" if written
                                    else "DISCARDED", digest, started, now_iso(),
                                    len(plan.targets), tuple(written),
                                    reason=f"stopped at a page: {exc}", plan=str(plan_path),
                                    not_written=tuple(t.path for t in
                                                      plan.targets[len(written):])))
        changed = changed_paths(before, snapshot(roots))
        outside = outside_scope(changed, [decoded((wiki / t).as_posix()) for t in written])
        if outside:
            return self._record(Run(
                "apply", "FAILED", "PROVISIONAL_RETAIN", digest, started, now_iso(),
                len(plan.targets), tuple(written), tuple(outside),
                reason=f"scope check failed: {len(outside)} file(s) outside the plan changed",
                plan=str(plan_path)))
        return self._record(Run("apply", "SUCCESS", "APPLIED", digest, started, now_iso(),
                                len(plan.targets), tuple(written), plan=str(plan_path)))

    def _refusal(self, plan: Plan, approve: str) -> str:
        """Why a plan may not be applied ("" when it may)."""
        if approve.strip().lower() != plan.digest:
            return (f"the approved digest {approve.strip()[:16]}… is not this plan's digest "
                    f"{plan.digest[:16]}…; approve the digest `mindgraph verify` printed")
        for run in read_runs(self.settings.state_dir):
            if run.get("kind") == "apply" and run.get("digest") == plan.digest \
                    and run.get("result_status") in ("APPLIED", "PROVISIONAL_RETAIN"):
                return (f"plan already applied (run {run.get('run_id')}); run `mindgraph "
                        f"verify` again for a new plan")
        outside = [t.path for t in plan.targets
                   if page_inside(self.settings.wiki_dir, t.path) is None]
        if outside:
            return (f"{outside[0][:200]!r} is not a page inside wiki/: verification writes "
                    f"the records of wiki pages only (was the plan edited after it was "
                    f"printed?); run `mindgraph verify` again")
        changed = []
        for target in plan.targets:
            file = self.settings.wiki_dir / target.path
            try:
                current = sha256_bytes(file.read_bytes())
            except OSError:
                current = "missing"
            if current != target.sha256:
                changed.append(target.path)
        if changed:
            return (f"{len(changed)} target(s) changed since planning ({', '.join(changed[:5])}"
                    f"{', …' if len(changed) > 5 else ''}); run `mindgraph verify` again")
        return ""

    def _record(self, run: Run) -> ApplyResult:
        append_run(self.settings.state_dir, run)
        return ApplyResult(run, run.result_status == "APPLIED")

    def audit(self) -> AuditReport:
        """The trust audit of every page (read-only)."""
        items, unreadable = [], []
        for page in self.pages():
            if isinstance(page, tuple):
                unreadable.append(page[0])
                continue
            fresh = self.freshness(page)
            capable = bool(references(page.text.replace("\r\n", "\n"),
                                      page.record.provenance))
            items.append(PageTrust(page.path, page.record, fresh, capable))
        return audit(items, self.settings.trust.coverage_threshold_pct, unreadable)

    def mix(self, pages: Iterable[Any]) -> dict[str, Any]:
        """The trust mix of parsed pages (levels, statuses, freshness), for `stats`."""
        from .mix import trust_mix
        return trust_mix(pages, self.today(), self.evidence_files)

    def with_trust(self, report: Any, vault: Any) -> Any:
        """`check`'s report with the trust mix and the disputed pages added."""
        from .mix import with_trust
        return with_trust(report, vault.pages.values(), self.today(), self.evidence_files)

    def runs(self) -> list[dict]:
        """The run ledger, oldest first."""
        return list(read_runs(self.settings.state_dir))


def _record_keys(target: Target) -> dict[str, Any]:
    return {"verification": target.verification, "evidence": target.evidence}


def _write_back(text: str, target: Target) -> str:
    return set_record_keys(text, _record_keys(target), target.path)


def _as_planned(file: Path, target: Target) -> bytes:
    """The page's bytes, read once for the write, when they are still those the plan judged
    (WritebackError naming the page otherwise: a writer that does not take ``applying``, a
    person in an editor, changed it after the check)."""
    data = file.read_bytes()
    if sha256_bytes(data) != target.sha256:
        raise WritebackError(f"{target.path} changed since planning; run `mindgraph verify` "
                             f"again")
    return data
