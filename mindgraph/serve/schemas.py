"""Response models of the REST API, so the OpenAPI document says what each route returns.

They mirror the ``to_dict()`` forms of the core's results; FastAPI validates every response
against them (a drift between core and API fails loudly in tests and in schemathesis).
Deep, open-ended parts (frontmatter, coverage units, stats breakdowns) stay ``dict[str, Any]``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer


class ErrorOut(BaseModel):
    """Every error: its kind, a message that says how to fix it, field errors for a 422."""

    error: str
    detail: str
    errors: list[dict[str, Any]] | None = None
    candidates: list[str] | None = Field(None, description="A 409 for a name several pages "
                                         "have: their paths, to name one by")
    setting: str | None = Field(None, description="A 429 for a used-up quota: the setting "
                                "that sets it (e.g. limits.llm_calls_per_hour)")


class HealthOut(BaseModel):
    """Liveness."""

    status: Literal["ok"]
    version: str
    pages: int | None = Field(None, description="Pages the caller sees (null without a "
                              "valid token when the server needs one)")
    token: Literal["not needed", "accepted", "missing", "not bearer", "not recognised"] = Field(
        "not needed", description="What became of the bearer token sent: why 'pages' is null")


class SectionRef(BaseModel):
    """A section of a page, without its text."""

    id: str
    heading: str
    level: int
    path: list[str]
    lines: list[int]


class OutgoingLink(BaseModel):
    """A link written on the page and what it resolves to."""

    target: str
    heading: str | None
    block: str | None
    line: int
    syntax: str
    relation: str
    status: str
    page: str | None
    candidates: list[str]
    stale: str | None = Field(None, description="Set when the link names a page's old name: "
                              "it resolves to the page that moved, and says so")
    fix: str | None = Field(None, description="For a stale link: how to write it now")
    score: float | None = Field(None, description="Inferred links (syntax inferred, made by "
                                "mindgraph enrich): the pages' cosine")
    judge: str | None = Field(None, description="Inferred links: the model that typed it, or "
                              "similarity:<embedding model> when none did")


class Backlink(BaseModel):
    """A link from another page to this one."""

    page: str
    line: int
    section: str | None
    relation: str


class PageOut(BaseModel):
    """A page: metadata, section outline, links out and in, and a stable address."""

    path: str
    title: str
    aliases: list[str]
    tags: list[str]
    url: str
    frontmatter: dict[str, Any]
    sections: list[SectionRef]
    outgoing: list[OutgoingLink]
    backlinks: list[Backlink]
    trust: "TrustOut" = Field(description="Its verification level, status and freshness (the "
                                          "records themselves are in frontmatter)")
    sections_total: int | None = Field(None, description="Only when 'sections' is not all of "
                                       "them (past sections_limit, or from sections_offset): "
                                       "how many the page has")

    @model_serializer(mode="wrap")
    def _whole_pages_unchanged(self, handler: Any) -> dict[str, Any]:
        """``sections_total`` is left out when every section is listed: such a page's
        answer is what it was before sections were paged."""
        data = handler(self)
        if data.get("sections_total") is None:
            data.pop("sections_total", None)
        return data


class SectionOut(BaseModel):
    """One section with its text."""

    page: str
    id: str
    heading: str
    path: list[str]
    text: str
    lines: list[int]


class ExtractOut(BaseModel):
    """A page's parsed data block."""

    page: str
    block: int
    data: Any


class TrustOut(BaseModel):
    """A page's trust: verification level and status, and whether it is still current."""

    level: int = Field(description="0 unverified, 1 machine review, 2 claims checked against "
                                   "the evidence, 3 every claim on a primary source")
    status: Literal["unverified", "reviewed", "verified", "disputed"]
    freshness: Literal["fresh", "stale", "unverified"]
    stale: list[str] = Field(description="What made it stale: content_changed, "
                                         "references_changed, age_expired")


class KeywordResult(BaseModel):
    """One keyword hit, explained."""

    rank: int
    page: str
    title: str
    section_id: str | None
    heading: str
    snippet: str
    score: float = Field(description="Page and best-section BM25, each divided by the top "
                                     "hit's, mixed half and half: 1 = the best hit.")
    scores: dict[str, float]
    matched_terms: list[str]
    retrievers: list[str] = Field(description="Which retrievers found the page: always "
                                              "['keyword'] here.")
    why: dict[str, Any]
    url: str | None = Field(None, description="The deep link into the note app the page was "
                                              "pulled from (null for other pages)")
    trust: TrustOut | None = None


class KeywordSearchOut(BaseModel):
    """Keyword search results."""

    query: str
    retriever: Literal["keyword"]
    count: int
    results: list[KeywordResult]
    degradation: list[str] = Field(default_factory=list,
                                   description="What --min-trust / --fresh left out")
    latency_ms: float


class IntentOut(BaseModel):
    """What the intent router decided."""

    name: str
    confidence: float
    rules: list[str]


class HybridResultOut(BaseModel):
    """One page of a hybrid answer, with the retrievers and boosts behind it."""

    rank: int
    page: str
    title: str
    section_id: str | None
    heading: str
    snippet: str
    score: float = Field(description=(
        "Each retriever's score divided by its top score, weighted (the weights sum to 1: 1 = "
        "ranked first by every retriever), plus boosts (graph, troubleshooting: +0.1 each), "
        "times recency and language factors. Above 1 only through a boost; compare scores "
        "within one answer."))
    sources: dict[str, dict[str, int | float | str]] = Field(description=(
        "Retriever (keyword, vector, native: a note app's own search, twin: BM25 of a "
        "Japanese question's English translation over the page's English translation) → its "
        "own rank (an integer) and score for the page; with one embedding model per "
        "language, vector also names the model whose vectors answered (model, e.g. "
        "use-multilingual-v3); graph → linked, how many other candidates the page "
        "links with (the graph ranks nothing)."))
    boosts: dict[str, float]
    found_by: list[str]
    retrievers: list[str]
    url: str | None = Field(None, description="The deep link into the note app the page was "
                                              "pulled from (null for other pages)")
    trust: TrustOut | None = None


class SmartSearchOut(BaseModel):
    """A hybrid answer: results, intent, interpretation, follow-ups, degradation, timings."""

    query: str
    language: str
    intent: IntentOut
    results: list[HybridResultOut]
    expanded_queries: list[str]
    interpretation: str
    follow_ups: list[str]
    degradation: list[str]
    timings_ms: dict[str, float]


class ContextOut(BaseModel):
    """A markdown block for a situation; empty (status says why) on an error, and on a
    timeout unless the keyword matches came in time (then the block holds them alone)."""

    markdown: str
    sources: list[str]
    status: Literal["ok", "empty", "timeout", "error"]
    detail: str
    trust: dict[str, TrustOut] = Field(default_factory=dict,
                                       description="Each source page's trust")


class NeighborOut(BaseModel):
    """A page reached from another, and how."""

    path: str
    title: str
    distance: int
    via: str
    relation: str = Field(description="The strongest edge's relation: a link before a shared tag")
    kind: str = Field(description="extracted (a written link) or inferred")
    direction: str = Field(description="out, in, or both (each links the other, or inferred)")
    also: list[str] = Field(default=[], description="The other relations between the pages")


class RelatedOut(BaseModel):
    """Pages within ``depth`` links of a page."""

    page: str
    depth: int
    related: list[NeighborOut]


class PathStep(BaseModel):
    """One step of a path: links are followed either way, so which page links which."""

    from_: str = Field(alias="from")
    to: str
    direction: Literal["out", "in", "both", "tag"] = Field(description=(
        "out: 'from' links to 'to'; in: 'to' links to 'from' (the chain walks that link "
        "backwards); both: each links the other; tag: they only share a tag (via_tags)"))


class PathOut(BaseModel):
    """The shortest chain of page paths, source first, and how each step is joined."""

    path: list[str]
    steps: list[PathStep]


class CommunityOut(BaseModel):
    """A group of densely connected pages."""

    id: int
    name: str
    center: str
    size: int
    members: list[str]


class CommunitiesOut(BaseModel):
    """Communities, largest first (``count`` is before the limit)."""

    count: int
    communities: list[CommunityOut]


class TimelineEntryOut(BaseModel):
    """One dated note mentioning the concept."""

    date: str
    date_source: str
    path: str
    folder: str
    title: str
    matched: str
    snippet: str
    page: str | None


class TimelineOut(BaseModel):
    """Dated notes mentioning a concept, in date order."""

    concept: str
    terms: list[str]
    count: int            # entries shown (at most the limit)
    total: int            # dated notes that mention the concept, before the limit
    undated: int = 0      # notes that mention the concept but carry no real date
    entries: list[TimelineEntryOut]


class CoverageOut(BaseModel):
    """How much of a codebase the wiki refers to; ``units`` has the per-unit detail."""

    codebase: str
    level: str
    min_mentions: int
    total: int
    covered: int
    uncovered: int
    percent: float
    units: list[dict[str, Any]]


class FindingOut(BaseModel):
    """One lint finding."""

    severity: str
    kind: str
    path: str
    line: int
    message: str
    raw_path: str = ""   # the raw note of a compiled page, where the fix goes
    raw_line: int = 0


class TrustMixOut(BaseModel):
    """The trust mix: pages per level (L0-L3) and status, fresh, stale (by trigger), never
    verified."""

    by_level: dict[str, int]
    by_status: dict[str, int]
    fresh: int
    stale: int
    unverified: int
    stale_by_trigger: dict[str, int]


class CheckOut(BaseModel):
    """Lint report of the wiki (disputed pages among the findings) and its trust mix."""

    pages: int
    errors: int
    warnings: int
    counts: dict[str, int]
    findings: list[FindingOut]
    trust: TrustMixOut


class LintFindingOut(BaseModel):
    """One lint finding: where, what, and the fix."""

    rule: str
    page: str
    section: str
    line: int
    message: str
    fix: str
    other_page: str = ""   # the page it disagrees with or duplicates
    other_line: int = 0
    judged_by: str = "offline"


class LintOut(BaseModel):
    """What a careful editor would flag in the wiki."""

    pages: int
    counts: dict[str, int]
    findings: list[LintFindingOut]
    notes: list[str]


class CurvePoint(BaseModel):
    """MRR@10 of the used pages under one decay λ."""

    model_config = ConfigDict(populate_by_name=True)
    lambda_: float = Field(alias="lambda")
    mrr: float


class CalibrateOut(BaseModel):
    """The recency decay λ the usage log argues for (nothing is written)."""

    current: float
    proposed: float
    examples: int
    curve: list[CurvePoint]
    evergreen: list[str]
    evergreen_mrr: float | None
    notes: list[str]


class PropagationTargetOut(BaseModel):
    """One page a queued plan would update."""

    path: str
    sha256: str
    how: Literal["substituted", "marked", "rewritten"]
    changed_page: str
    old: str
    new: str


class PropagationPlanOut(BaseModel):
    """A plan awaiting approval."""

    plan: str = Field(description="Its name in the queue (approve it by this name)")
    digest: str
    created: str
    drafter: str
    version: int
    targets: list[PropagationTargetOut]


class PropagationQueueOut(BaseModel):
    """The propagation plans awaiting approval, oldest first."""

    plans: list[PropagationPlanOut]


class ApproveIn(BaseModel):
    """Which queued plan to apply, and its digest as the approval."""

    model_config = ConfigDict(extra="forbid")

    plan: str = Field(pattern=r"^[0-9a-f]{16}(\.json)?$", description="The plan's name in "
                      "the queue")
    approve: str = Field(pattern=r"^[0-9a-f]{64}$", description="The plan's digest")


class RunOut(BaseModel):
    """One run of the ledger."""

    run_id: str
    kind: str
    process_status: str
    result_status: str
    digest: str
    started: str
    finished: str
    targets: int
    written: list[str]
    not_written: list[str] = []
    outside_scope: list[str]
    reason: str
    plan: str


class StatsOut(BaseModel):
    """Counts over the wiki and the raw notes."""

    wiki: str
    pages: int
    sections: int
    links: dict[str, Any]
    tags: dict[str, Any]
    problems: int
    trust: TrustMixOut
    raw: dict[str, Any]


class ReindexIn(BaseModel):
    """Options of a reindex, as a JSON body (the same names work as query parameters)."""

    model_config = ConfigDict(extra="forbid", strict=True)   # 0.0 is not false

    embed: bool | None = Field(None, description="Also embed the changed sections (default "
                                                 "true)")
    dry_run: bool | None = Field(None, description="Say what would change; write nothing "
                                                   "(default false)")


class ReindexOut(BaseModel):
    """What a reindex did: the ingest report (null without a raw folder) and the embed one."""

    ingest: dict[str, Any] | None
    embed: dict[str, Any] | None
    notes: list[str]
    seconds: float


class ValidateIn(BaseModel):
    """A text to judge and the evidence texts to judge it against."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=200_000, description="Markdown to check; its "
                      "claims are its sentences and list items outside code and callouts")
    evidence: list[Annotated[str, Field(max_length=1_000_000)]] = Field(
        max_length=20, description="The evidence texts (e.g. the raw note, a fetched page)")


class ClaimCheckOut(BaseModel):
    """One claim and what the evidence said about it."""

    claim: str
    verdict: Literal["supported", "unsupported", "contradicted"]
    quote: str = Field(description="The evidence sentence that supports or contradicts it")
    source: str = Field(description="Which evidence text (evidence[i]); empty when none")


class ValidateOut(BaseModel):
    """The verdict: pass (every claim supported), warn, fail (one contradicted) or
    unverifiable (no evidence or no claim)."""

    validator: str
    verdict: Literal["pass", "warn", "fail", "unverifiable"]
    claims: int
    supported: int
    checks: list[ClaimCheckOut]


class SyncRunOut(BaseModel):
    """One run of the watcher (mindgraph/sync/): what changed, what was redone, time taken."""

    event: Literal["change"]
    started: str
    trigger: Literal["start", "change"]
    changes: list[str]
    touches: int
    compiled: list[str]
    moved: list[dict[str, str]] = Field(default_factory=list, description='raw notes moved or '
                                        'renamed, their pages with them: {"from", "to"}')
    removed: list[str]
    failed: list[str] = Field(description='this run\'s failures, "note:line: why"')
    reindexed: list[str]
    embedded: int
    vectors_removed: int
    seconds: float
    error: str | None
    ingest: str = Field("", description='"targeted", or "full: " and why (as in '
                                        '`watch --json`)')
    still_failing: int = Field(0, description="notes that failed before, did not change and "
                                              "failed the same way again (not in failed)")
    warnings: list[str] = Field(default_factory=list, description='compile warnings new in '
                                'this run, "note:line: what and the fix"')
    held: bool = Field(False, description="the run would have removed every wiki page or "
                                          "most of them (raw/ empty, unmounted or wrong): "
                                          "nothing was applied")


class SyncStatusOut(BaseModel):
    """What the watcher has pending or running (``state`` "off" without --watch)."""

    watching: bool = False
    state: Literal["off", "starting", "idle", "pending", "running", "held", "stopped",
                   "failed"] = "off"
    backend: str = ""
    since: str | None = None
    pending: list[str] = Field(default_factory=list)
    pending_count: int = 0
    running: dict[str, Any] | None = None
    last_run: SyncRunOut | None = None
    runs: int = 0
    touches_ignored: int = 0
    errors: int = 0
    error: str | None = None
    raw_failures: list[str] = Field(default_factory=list, description='raw notes that fail to '
                                    'compile, "note:line: why" (the first 100)')
    raw_failures_count: int = 0
    raw_warnings: list[str] = Field(default_factory=list, description="compile warnings of "
                                    "the raw notes (the first 100; `mindgraph check` lists all)")
    raw_warnings_count: int = 0
    held: str | None = Field(None, description="why the last run was held (it would have "
                                               "removed most pages; retried until it is not, "
                                               "or `mindgraph ingest --allow-removals`)")
