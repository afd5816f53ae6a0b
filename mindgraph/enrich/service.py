"""``mindgraph enrich``: plan and run summaries and inferred links over a workspace.

``workspace`` is the core (``Mindgraph``): its ``vault()``, ``embedding_provider()``,
``vector_store()``, ``ingest(only=...)`` and ``settings`` (this package sits below the core
and does not import it). What is found is recorded (records.py) and the raw notes of the pages
it changes are recompiled, so the wiki, the graph and every index carry it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..errors import InputError
from ..graph.build import EXTRACTED
from ..page.rawlines import raw_source
from .links import Candidate, judge_pairs, offline_links, similar_pairs, thresholds_for
from .batching import batches
from .records import EnrichRecords, InferredLink, pair_key, source_hash
from .summaries import PROMPT_VERSION as SUMMARY_PROMPT, needs_summary, summarise

Step = Callable[[str, int, int], None]      # (stage, done, total)


@dataclass
class EnrichReport:
    """What a run did (or, dry, would do)."""

    dry_run: bool
    judge: str                       # llm:<identity> or similarity:<embedding model>
    threshold: float = 0.0           # the default model's cut-off (MiniLM's when routed)
    thresholds: dict[str, float] = field(default_factory=dict)    # each model's cut-off
    summaries_needed: int = 0
    summaries_written: int = 0
    summary_failures: list[dict[str, str]] = field(default_factory=list)
    candidates: int = 0
    already_linked: int = 0          # similar pairs a page's own link already joins
    remembered: int = 0
    links: int = 0
    links_by_kind: dict[str, int] = field(default_factory=dict)
    link_failures: list[dict[str, str]] = field(default_factory=list)
    llm_calls: int = 0
    planned_calls: int = 0
    pages_changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


class EnrichService:
    """Enrichment of one workspace with an optional LLM (anything with ``identity`` and
    ``complete``)."""

    def __init__(self, workspace: Any, llm: Any = None, link_llm: Any = None):
        self.mg = workspace
        self.settings = workspace.settings.enrich
        self.llm = llm
        # the same model at enrich.link_temperature (link_llm), or the one LLM
        self.link_llm = link_llm if link_llm is not None else llm
        self.records = EnrichRecords(workspace.settings.state_dir, self.settings.memory)

    def run(self, *, summaries: bool = True, links: bool = True, dry_run: bool = False,
            step: Step | None = None) -> EnrichReport:
        """Find summaries and links; unless ``dry_run``, record them and recompile the pages
        they change."""
        pages = dict(self.mg.vault().pages)
        judge = f"llm:{self.llm.identity}" if self.llm is not None else ""
        report = EnrichReport(dry_run, judge)
        changed: set[str] = set()
        if summaries:
            changed |= self._summaries(pages, report, dry_run, step)
        if links:
            changed |= self._links(pages, report, dry_run, step)
        report.pages_changed = sorted(changed)
        if not dry_run:
            self.records.save()
            self._recompile([pages[p] for p in sorted(changed) if p in pages])
        return report

    def _recompile(self, changed: list[Any]) -> None:
        """Compile the raw notes of ``changed`` pages again, each with the compiler that made
        it: a page the offline compiler wrote stays offline (no LLM call for a recompile that
        only adds enrichment) even when compile.provider names an LLM."""
        offline, other = set(), set()
        for page in changed:
            raw = raw_source(page)
            generator = str((page.frontmatter.get("provenance") or {}).get("generator", "")) \
                if isinstance(page.frontmatter.get("provenance"), dict) else ""
            if raw:
                (offline if generator.startswith("offline:") else other).add(raw)
        if offline:
            from dataclasses import replace

            from ..ingest.pipeline import run_ingest

            settings = self.mg.settings
            run_ingest(replace(settings, compile=replace(settings.compile, provider="offline")),
                       only=tuple(sorted(offline)))
        if other:
            self.mg.ingest(only=tuple(sorted(other)))
        elif offline:
            self.mg.refresh()

    # -- summaries --------------------------------------------------------------------------
    def _summaries(self, pages: dict[str, Any], report: EnrichReport, dry_run: bool,
                   step: Step | None) -> set[str]:
        wanted = [p for path, p in sorted(pages.items())
                  if raw_source(p) and needs_summary(p, self.records.summaries.get(path))]
        report.summaries_needed = len(wanted)
        if self.llm is None:
            if wanted:
                report.notes.append(f"{len(wanted)} page(s) lack a summary; writing one needs "
                                    f"an LLM (compile.provider).")
            return set()
        batch = max(1, self.settings.summary_batch)
        scope = self._scopes(pages)
        calls = len(list(batches(wanted, batch, lambda page: scope.get(page.path))))
        report.planned_calls += calls
        if dry_run or not wanted:
            return set()
        changed = set()
        done = 0
        for outcome in summarise(wanted, self.llm, batch, lambda page: scope.get(page.path)):
            done += 1
            if outcome.error:
                report.summary_failures.append({"page": outcome.page, "error": outcome.error})
            else:
                self.records.summaries[outcome.page] = {
                    "text": outcome.summary, "model": f"llm:{self.llm.identity}:{SUMMARY_PROMPT}",
                    "hash": source_hash(pages[outcome.page])}
                changed.add(outcome.page)
                report.summaries_written += 1
            if step is not None:
                step("summaries", done, len(wanted))
        report.llm_calls += calls
        return changed

    # -- links ------------------------------------------------------------------------------
    def _links(self, pages: dict[str, Any], report: EnrichReport, dry_run: bool,
               step: Step | None) -> set[str]:
        embedder, store = self.mg.embedding_provider(), self.mg.vector_store()
        model = embedder.model_version
        if store.count(model) == 0:
            raise InputError(f"No vectors of {model} in {store.description}: semantic links "
                             f"come from the stored vectors. Run `mindgraph embed` first.")
        report.thresholds = thresholds_for(embedder, self.settings.link_threshold,
                                           self.settings.thresholds)
        report.threshold = next(iter(report.thresholds.values()))
        done = [0]

        def searched(n: int) -> None:
            done[0] += n
            if step is not None:
                step("similar pages", done[0], len(pages))

        candidates = similar_pairs(pages, embedder, store, report.thresholds,
                                   self.settings.links_per_page, searched)
        # a pair a person (or the frontmatter) already links needs no inferred link
        linked = {frozenset((u, v)) for u, v, _, data in self.mg.graph().link_edges()
                  if data["kind"] == EXTRACTED}
        report.already_linked = sum(1 for c in candidates if frozenset((c.a, c.b)) in linked)
        candidates = [c for c in candidates if frozenset((c.a, c.b)) not in linked]
        may_link = self._linkable(pages)
        # a pair neither of whose pages may link the other (another tenant, a personal page
        # seen from a shared one) is never asked about nor written (scopes/linking.py)
        candidates = [c for c in candidates if may_link(c.a, c.b) or may_link(c.b, c.a)]
        report.candidates = len(candidates)
        if self.llm is None:
            report.judge = f"similarity:{model}"
            found = offline_links(candidates, model)
        else:
            found = self._judged(candidates, pages, report, dry_run, step)
            if found is None:
                return set()
        found = _linkable_links(found, may_link)
        report.links = len(found)
        for link in found:
            report.links_by_kind[link.kind] = report.links_by_kind.get(link.kind, 0) + 1
        if dry_run:
            return set()
        by_source: dict[str, list[InferredLink]] = {p: [] for p in
                                                    set(pages) | set(self.records.links)}
        for link in found:
            by_source[link.source].append(link)
        return {p for p, links in sorted(by_source.items())
                if p in pages and self.records.set_links(p, links)}

    def _linkable(self, pages: dict[str, Any]) -> Callable[[str, str], bool]:
        """``may_link(source, target)``: does every reader of page ``source`` see ``target``,
        as the compiler requires of the links it writes?"""
        from ..scopes.linking import LinkableIndexes

        rule = LinkableIndexes(self.mg.scopes)
        scope = self._scopes(pages)
        return lambda source, target: rule.allows(scope.get(source), scope.get(target))

    def _scopes(self, pages: dict[str, Any]) -> dict[str, Any]:
        """Each page's scope (empty when no identities are configured): a call to the LLM
        reads pages of one audience only (batching.py)."""
        scopes = self.mg.scopes
        return {path: scopes.mapping.page_scope(path, page.frontmatter)
                for path, page in pages.items()} if scopes.enabled else {}

    def _judged(self, candidates: list[Candidate], pages: dict[str, Any], report: EnrichReport,
                dry_run: bool, step: Step | None) -> list[InferredLink] | None:
        from .links import PROMPT_VERSION

        judge = f"llm:{self.llm.identity}:{PROMPT_VERSION}"
        todo = [c for c in candidates
                if pair_key(judge, pages[c.a], pages[c.b]) not in self.records.judged]
        batch = max(1, self.settings.pair_batch)
        scope = self._scopes(pages)

        def audience(cand: Candidate) -> frozenset:
            return frozenset((scope.get(cand.a), scope.get(cand.b)))

        report.remembered = len(candidates) - len(todo)
        report.planned_calls += len(list(batches(todo, batch, audience)))
        if dry_run:
            return None
        done = [0]

        def judged(n: int) -> None:
            done[0] += n
            if step is not None:
                step("pairs judged", done[0], len(todo))

        result = judge_pairs(candidates, pages, self.link_llm, self.records, batch, judged,
                             audience)
        report.llm_calls += result.calls
        report.link_failures = [{"pages": f"{c.a} ~ {c.b}", "error": why}
                                for c, why in result.failed]
        failed = {(c.a, c.b) for c, _ in result.failed}
        # a pair that failed keeps what an earlier run found for it
        kept = [InferredLink(p, e["to"], e["kind"], e["score"], e["judge"])
                for p, entries in self.records.links.items() for e in entries
                if (min(p, e["to"]), max(p, e["to"])) in failed]
        return result.links + kept


def _linkable_links(found: list[InferredLink], may_link: Callable[[str, str], bool]
                    ) -> list[InferredLink]:
    """The links ``may_link`` allows; a ``related`` link (which reads both ways) the other way
    round when only that way is allowed."""
    kept = []
    for link in found:
        if may_link(link.source, link.target):
            kept.append(link)
        elif link.kind == "related" and may_link(link.target, link.source):
            kept.append(InferredLink(link.target, link.source, link.kind, link.score,
                                     link.judge))
    return kept


__all__ = ["EnrichReport", "EnrichService"]
