"""mindgraph.yml → typed, validated settings.

Every section is a frozen dataclass with defaults, so an empty file (or none) gives the
embedded offline defaults. Validation is strict: an unknown key, a wrong type or a bad value
raises ConfigError naming the key and the fix. Environment variables override the file:
``MINDGRAPH_<SECTION>__<KEY>`` (for example ``MINDGRAPH_COMPILE__PROVIDER=anthropic``).
Secrets are never stored in the file: settings hold the *name* of an environment variable
(``api_key_env``, ``dsn_env``) and ``Settings.secret()`` reads it when needed.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml

from .errors import ConfigError, NotFoundError
from .fsutil import UnreadableFile, read_text
from .notes_home import holds_notes, notes_top, workspace_compiling
from .local_models import (DEFAULT_LOCAL_MODEL, LANGUAGES, LOCAL_MODELS, local_dimension,
                           routed_languages)
from .yamlfile import DuplicateKeyError, line_of, load_strict

CONFIG_FILENAME = "mindgraph.yml"
ENV_PREFIX = "MINDGRAPH_"


class BadValue(ConfigError):
    """A bad value of one key ("embedding.model", "adapters[0].cache_ttl_s"), with the message
    beginning "<file>: "; ``load_settings`` makes it "<file>:<line>: " when the file writes
    that key, and names the environment variable instead when one set it."""

    def __init__(self, message: str, key: str, also: tuple[str, ...] = ()):
        super().__init__(message)
        self.key = key
        self.also = also        # other keys the message is about (their line, if not key's)

    @property
    def path(self) -> tuple[str | int, ...]:
        """The key as the steps into the YAML document: ("adapters", 0, "cache_ttl_s")."""
        return key_path(self.key)

    @property
    def paths(self) -> list[tuple[str | int, ...]]:
        """``path``, then those of the other keys the message is about."""
        return [self.path, *map(key_path, self.also)]


def key_path(key: str) -> tuple[str | int, ...]:
    """A dotted key as the steps into the YAML document: ("adapters", 0, "cache_ttl_s")."""
    steps: list[str | int] = []
    for part in key.split("."):
        name, _, index = part.partition("[")
        steps.append(name)
        if index.rstrip("]").isdigit():
            steps.append(int(index.rstrip("]")))
    return tuple(steps)


@dataclass(frozen=True)
class PathsSettings:
    """Where raw notes, the compiled wiki and derived state live (relative to the base dir)."""

    raw: str = "raw"
    wiki: str = "wiki"
    state: str = ".mindgraph"


@dataclass(frozen=True)
class CompileSettings:
    """How raw notes are compiled into wiki pages: offline, or through an LLM provider."""

    provider: Literal["offline", "anthropic", "gemini", "openai"] = "offline"
    model: str = ""
    api_key_env: str = ""
    base_url: str = ""
    language: str = "auto"   # auto: each note's own; or a name or code (English, ja, ...)
    domain: str = ""
    concurrency: int = 4
    processes: int = 0       # offline: worker processes for a large run (0: one per core)
    temperature: float = 0.2
    max_retries: int = 4
    timeout_s: float = 120.0
    max_note_bytes: int = 2_000_000
    max_note_headings: int = 10_000     # more: the note fails, named (never truncated)


@dataclass(frozen=True)
class EmbeddingSettings:
    """Which model turns sections into vectors (independent of the compile provider)."""

    provider: Literal["local", "gemini", "openai", "hashing"] = "local"
    model: str = ""
    # language → local model for its sections and queries (routed.py), e.g.
    # {ja: multilingual-e5-small, zh: multilingual-e5-small}; other languages get ``model``.
    # None (not set): local_models.DEFAULT_LANGUAGES with the default model, {} otherwise
    languages: dict | None = None
    dimension: int = 0
    api_key_env: str = ""
    base_url: str = ""
    batch_size: int = 64
    max_retries: int = 4
    timeout_s: float = 60.0
    # `search --hybrid` and `context` say on stderr that a multilingual model is loading when
    # its load is still running this long after it started (providers/embedding/load_notice.py)
    load_notice_after_s: float = 0.5
    # With one model per language: the multilingual model (USE for ja/zh by default) also
    # embeds every other page's sections, a second vector each, so a Japanese or Chinese
    # question meets English pages by that model's meaning (vectors/chunking.py). Off: such
    # a question meets them through MiniLM's vectors, weighed down, or not at all
    cross_lingual_vectors: bool = False


@dataclass(frozen=True)
class StoreSettings:
    """Where section vectors are kept: the embedded store or PostgreSQL + pgvector."""

    backend: Literal["embedded", "pgvector"] = "embedded"
    dsn_env: str = "MINDGRAPH_PG_DSN"
    table: str = "mindgraph_sections"
    # pgvector's HNSW search and build (an index keeps the build values it was made with).
    # At 100,000 notes' 458,907 chunk vectors (bench_pg_hybrid.py --recall-only), queries far
    # from every row land on isolated rows a graph built with ef_construction 128 rarely
    # links to (recall@10 of heading queries 0.855 at ef_search 400, 0.921 at 1,000); built
    # with 256 it gives 0.956 at ef_search 800 (questions 0.989) for 15.7 ms of backend CPU
    ef_search: int = 800
    tenant: str = "default"
    hnsw_m: int = 16
    hnsw_ef_construction: int = 256
    # The index keeps its vectors as halfvec (16-bit floats): about half the index's memory
    # and pages at the same recall; answers are re-scored at full precision. "vector" keeps
    # 32-bit floats (pgvector before 0.7 has no halfvec).
    index_type: Literal["halfvec", "vector"] = "halfvec"
    # `embed --rebuild-index` waits this long for another process's rebuild of the same index
    # (a build at 100,000 notes takes minutes), then gives up with the fix
    rebuild_wait_s: float = 3600.0


@dataclass(frozen=True)
class AdapterSettings:
    """One data source: a built-in adapter name or a dotted path to a custom adapter class."""

    name: str
    type: str = "filesystem"
    target: str = ""
    options: dict = field(default_factory=dict)
    # a remote adapter (a note app) keeps its listing under <state>/apps/ this long (0: off)
    cache_ttl_s: float = 300.0
    # identities (scopes.identities names) that may create and update its items over REST
    # and MCP besides the local one (the app is the workspace owner's)
    writers: tuple = ()


@dataclass(frozen=True)
class GraphSettings:
    """Knowledge-graph construction."""

    generic_tag_share: float = 0.2
    tag_fanout_cap: int = 30
    seed: int = 42


@dataclass(frozen=True)
class EnrichSettings:
    """``mindgraph enrich``: summaries and typed links between similar pages (mindgraph/enrich/).

    ``thresholds``: embedding model name part → the cosine a pair needs, over the measured
    defaults (providers/embedding/cutoffs.py ``LINK_CUTOFFS``: e5 0.94, use-multilingual
    0.69; e5's cosines sit in a narrow high band); a model neither names (MiniLM) uses
    ``link_threshold``. Under ``embedding.languages`` each model's hits need its own.
    ``after_ingest``: run the offline part (similarity links, no LLM calls) after every
    ``mindgraph ingest``/``watch`` run; ``llm_after_ingest`` adds the LLM.
    """

    summary_batch: int = 5
    pair_batch: int = 10
    link_threshold: float = 0.7
    thresholds: dict = field(default_factory=dict)
    links_per_page: int = 5
    memory: int = 50_000          # judged pairs remembered (oldest forgotten first)
    # the LLM types links at this temperature (summaries take compile.temperature, 0.2): a
    # choice among seven kinds wants the least variation (the design's 0.1)
    link_temperature: float = 0.1
    after_ingest: bool = False
    llm_after_ingest: bool = False


@dataclass(frozen=True)
class RetrievalSettings:
    """Hybrid retrieval: fusion, graph boost, thresholds, recency, query expansion, intents.

    ``intents`` overrides the router's rules per intent: ``{failure: {patterns: [...],
    keyword: 0.3, vector: 0.7, graph: 0.1}}``; patterns are regular expressions, matched on
    word boundaries for Latin text and anywhere in CJK text.
    """

    fusion: Literal["weighted", "rrf"] = "weighted"
    keyword_weight: float = 0.6
    vector_weight: float = 0.4
    # all-MiniLM-L6-v2 knows English only: its Japanese and Chinese vectors are close to
    # noise (vector-only MRR@10 0.03-0.29), kept as a tie-breaker (0.1 was best of 0 / 0.1 /
    # 0.25 / 0.5 on both question sets, see README)
    unsupported_language_vector_factor: float = 0.1
    # With one model per language (embedding.languages), the vector side's weight × this when
    # a multilingual model (USE under the default) serves the query, whatever its language.
    # 1 (off): 1.5 raised four cross-lingual MRR@10s but lowered English dev questions over the
    # Japanese pages 0.759 → 0.747 (tests/retrieval/test_hybrid_quality_real.py's floor 0.75)
    multilingual_vector_factor: float = 1.0
    # BM25's weight × this for a query none of whose words a dictionary translates for pages
    # that are almost none of them in its language (a Japanese question over a Chinese vault:
    # BM25 matches only the Han words the two languages happen to share), when a model that
    # knows the query's language serves the vector side (1 = off).
    untranslated_keyword_factor: float = 0.1
    # A keyword hit the vector side did not rank, though the page has vectors, loses this share
    # of its fused score after the reserved places are given (retrieval/weakvector.py; 0 off).
    # 0.1: dev R@5 0.929 → 0.942, held-out MRR@10 0.926 → 0.931, SciFact 0.724 → 0.725, no
    # set lower. Not applied when the fusion fills in missing scores (a compressed-cosine
    # model's: the page's own cosine is already weighed)
    keyword_only_penalty: float = 0.1
    # A page in another language than the query's gets its score times this (1 = off). No
    # effect on the question sets (their answers already won; 1 / 0.95 / 0.9 / 0.8 / 0.6 all
    # equal); it puts the English page above its Chinese twin for "headless sync".
    other_language_factor: float = 0.8
    # A Han word of the query of at most ``subword_chars`` characters that no page has as a
    # word of its own (霜, where the pages say 霜冻: Chinese and Japanese are indexed as
    # dictionary words) is also searched as the vault's words that contain it, all of them as
    # one term at this weight (retrieval/subwords.py; 0: off), when at least a tenth of the
    # pages are in the query's language. Moves no dev, held-out or agent question (README,
    # "Chinese and Japanese words inside longer ones").
    subword_weight: float = 0.5
    subword_chars: int = 4
    # Intent weights blended with the default mix by router confidence (see router.weights).
    blend_intent_weights: bool = True
    # A page one retriever found and the other did not gets the other's actual score for it
    # (its BM25 score, its best section's cosine) instead of 0.
    fill_missing_scores: bool = False
    normalization: Literal["max", "calibrated", "minmax", "meanmax", "zscore"] = "max"
    # a query embedded by a model whose cosines crowd into a narrow band (multilingual-e5-small)
    # is fused with both of those on: under ``max`` such a model's whole candidate pool scores
    # nearly its top, so being among its 30 pages counted, not its order (README, Fusion options)
    compressed_cosine_fusion: bool = True
    # each retriever's weight scaled by how far its scores fall from its first to its tenth
    # page (fusion.spread_weights): a flat list tells little about the order of its pages
    spread_weights: bool = True
    # a page only the vector side found, less than halfway from the model's zero point to a
    # typical match on this vault (measured per model, retrieval/calibration.py), is dropped
    drop_vector_noise: bool = True
    # an English query over pages almost none of which are in English (a Japanese or Chinese
    # vault) also looks for its words' dictionary translations in BM25 (retrieval/translate.py)
    translate_queries: bool = True
    # a question in one of these languages, in a vault of translated pages (same frontmatter
    # permalink), is also searched in English over the English pages, each credited to its
    # twin in the question's language with this weight against BM25's 1 (retrieval/twins.py;
    # ja and zh only: the dictionaries translate those into English); {}: off
    twin_weights: dict = field(default_factory=lambda: {"ja": 0.3})
    rrf_k: int = 60
    # each retriever's top pages stay within the first results (see HybridRetriever._reserve)
    reserve_top: int = 2
    reserve_within: int = 5
    # a retriever's top page in another language than the query's is not reserved (when at
    # least a tenth of the pages are in the query's language and other_language_factor is
    # below 1): the reserve lifted a Chinese twin the vector side ranked first above the
    # Chinese question's own page (fresh23-zh-08 5th → 3rd; no other question of any set moved)
    reserve_same_language: bool = True
    graph_boost: float = 0.1
    # on a definition question ("what is a vault", 保管庫とは, 什么是保管库) a candidate page
    # whose section heading (or title) is the defined term gains this, half for a "What is X"
    # heading, and keeps a place among the first (retrieval/definition.py; 0: off). No dev,
    # held-out or SciFact question is one (figures unchanged); the Help vault's glossary terms
    # asked so: first result naming the term en/ja/zh 9/10/8 → 25/22/24 of 25/24/25 (README)
    definition_bonus: float = 0.2
    # a note app's own search (an adapter's search_by_query), fused beside keyword and vector
    # with this weight; what it has not answered this long after the search began is dropped
    native_weight: float = 0.2
    native_timeout_s: float = 1.0
    min_score: float = 0.15
    overfetch: int = 15
    expansion: Literal["auto", "off", "always"] = "auto"
    expansion_threshold: float = 0.5
    expansion_timeout_s: float = 3.0
    # pass 2 asks compile.provider's LLM for extra queries when one is configured
    expansion_llm: bool = True
    # "llm": compile.provider's LLM reorders the first rerank_top results (off by default: its
    # value is not measured yet)
    rerank: Literal["off", "llm"] = "off"
    rerank_top: int = 10
    rerank_timeout_s: float = 5.0
    recency: Literal["auto", "on", "off"] = "auto"
    recency_lambda: float = 0.003
    # a page whose frontmatter type (or, failing that, a tag) is named here decays at its own
    # λ: decisions go stale fast, reference knowledge slowly (the design's 0.005 / 0.001);
    # none of the offline compiler's types (note, index, troubleshooting) is named. {}: off
    recency_lambdas: dict = field(default_factory=lambda: {"decision": 0.005,
                                                           "reference": 0.001})
    evergreen_tags: tuple = ("evergreen",)
    evergreen_pages: tuple = ()
    intents: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ServeSettings:
    """The REST and MCP servers."""

    host: str = "127.0.0.1"
    port: int = 8765
    token_env: str = "MINDGRAPH_API_TOKEN"
    usage_log: str = "usage.jsonl"       # under the state folder; "" turns logging off
    usage_log_max_bytes: int = 5_000_000
    context_timeout_s: float = 5.0
    # A page in the context block that none of the situation's words are on must be at least
    # this close in meaning (cosine). For all-MiniLM-L6-v2 on the vault's questions, 99% of
    # relevant pages scored above 0.36 and nonsense queries' best matches 0.21-0.32.
    context_min_similarity: float = 0.35
    # Long-running processes follow wiki/ through inotify (Linux) instead of scanning it
    # before every query; off, or where inotify is missing, they scan.
    watch_wiki: bool = True
    # Pages that change under a process whose vector search is open are embedded before the
    # next query, up to this many sections at a time (more: run `mindgraph embed`); 0 = never.
    embed_changes_max_chunks: int = 256
    # Who may call the HTTP servers (serve/guard.py): on a loopback address the Host header
    # must name a loopback address, localhost or one of allowed_hosts; a browser's Origin must
    # be the server's own or one of cors_origins (only those get CORS headers).
    allowed_hosts: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 1_048_576      # a JSON request body; larger is 413 unread
    # POST /upload only (multipart, streamed to disk): files per upload, bytes per file, and
    # the time the whole body may take to arrive.
    upload_max_files: int = 50
    upload_max_file_bytes: int = 52_428_800
    upload_timeout_s: float = 600.0
    # Bytes all uploads in progress may have spooled at once (per process): one past it is 503
    # with Retry-After. Without it, max_connections uploads of the 100 MB cap could fill /tmp.
    upload_spool_bytes: int = 1_073_741_824
    # GET /dashboard/attachment: the time a file's bytes may take to be sent (a slow reader
    # is cut off past it, the connection closed; a longer one continues with a Range request)
    attachment_timeout_s: float = 600.0
    # Time budgets (504 past them) and the lane that keeps slow requests (timeline, coverage,
    # path, communities, check, validate) from starving searches: slow_workers at a time,
    # slow_queue more waiting, the next one 503 at once (but an identity's first on the lane).
    request_timeout_s: float = 30.0
    reindex_timeout_s: float = 1800.0
    slow_workers: int = 1               # Python threads share one GIL: more only slows search
    slow_queue: int = 16
    # Requests one identity (token) may have in flight at once on a server that needs tokens
    # (being read, queued, running or streaming): past it that identity alone gets 429 with
    # Retry-After, refused before any other work. The lanes take each identity's calls in
    # turn, so a flood of one delays the others by one call. 0 = no limit.
    requests_per_identity: int = 16
    # Of those, how many are worked on at once (until their answer starts) while another
    # identity is served or was in the last second: its others wait, admitted, and start as
    # its own finish, so a flood does not crowd the event loop ahead of the other agents.
    # Alone, an identity has all of them worked on. 0 = always all at once.
    share_per_identity: int = 4
    shutdown_timeout_s: float = 5.0      # SIGTERM: requests still running then are dropped
    # POST /validate and the MCP validate tool (run on the slow lane, stopped at
    # request_timeout_s): claims in the text and sentences in all the evidence texts; past
    # either the request is 413 before any check. 0 = no limit.
    validate_max_claims: int = 2000
    validate_max_evidence_sentences: int = 20000
    # MCP over HTTP: sessions open at once (a new one past it is 503 until one ends or
    # expires; each holds ~38 kB) and the time a session may stay idle before it is dropped
    # (its client then initializes a new one)
    mcp_max_sessions: int = 1000
    mcp_session_idle_s: float = 1800.0
    # Sessions one identity (token) may hold: opening one more closes its own least recently
    # used session, so one identity cannot take the sessions of all the others. 0 = no limit.
    mcp_max_sessions_per_identity: int = 100
    # A request's line and headers must arrive within header_timeout_s (408 and closed past
    # it: slowloris); past max_connections open at once (per process) a new one is 503.
    header_timeout_s: float = 10.0
    # ... and may take at most max_header_bytes (431 and closed past it: uvicorn kept any
    # size of headers in memory, before any token was checked)
    max_header_bytes: int = 131072
    max_connections: int = 1000
    # Of those, at most this many from one client address (a client past it is 503, others
    # are still served). Behind a reverse proxy every client has the proxy's address: raise
    # it to max_connections or set 0 (no per-client limit) and limit clients at the proxy.
    max_connections_per_client: int = 250


@dataclass(frozen=True)
class LimitsSettings:
    """How much of a file is read and indexed; each limit hit is reported per file. And what
    one identity of the servers may spend (mindgraph/quotas/).

    A markdown file over ``max_page_bytes`` is not read as a page (wiki/, and raw/ for the
    timeline); section text of a page past ``max_indexed_chars`` is not searchable (keyword
    and vectors), the page stays whole. ``compile.max_note_bytes`` must not exceed
    ``max_page_bytes``: a note compiled into a page nobody can read would still be linked.
    """

    # A 4 MB page of prose took 10 s to index and a 20 MB one 160 s and 2.9 GB: what is
    # indexed is bounded far lower than what is read.
    max_page_bytes: int = 5_000_000
    max_indexed_chars: int = 500_000
    # what one ingest scan of raw/ reads, in path order; notes past either are skipped
    # (reported per file) and keep their pages
    max_files: int = 5_000
    max_total_bytes: int = 500_000_000
    # notes, and bytes of notes, one `pull` takes from each adapter: a hostile or huge note
    # app cannot fill the disk (10,000 notes of up to max_page_bytes were 50 GB); the bytes
    # match what one ingest reads of raw/
    max_pull_notes: int = 10_000
    max_pull_bytes: int = 500_000_000
    # What one identity (a token of scopes.identities, counted per tenant and identity, in
    # the state folder: across restarts and `serve --workers`) may spend over REST and MCP
    # HTTP: LLM calls in the last hour (search expansion and reranking, the lint judge,
    # triage, compiling its notes), query embeddings a cloud embedding provider made for it
    # in the last hour (a search not in the query cache: a request each; a local model is
    # free and not counted) and documents created in the last day (POST /documents,
    # /upload's files, create_document). Past any: 429 with Retry-After, no call made,
    # nothing written. The owner (serve.token_env's token, the CLI, stdio MCP) has no
    # quota. 0 = no limit.
    llm_calls_per_hour: int = 1000
    embedding_calls_per_hour: int = 10_000
    documents_per_day: int = 500


@dataclass(frozen=True)
class IndexSettings:
    """What the keyword index reads of a page beyond its own text.

    ``expand_embeds``: the section that embeds another note (``![[Note]]``, ``![[Note#Heading]]``,
    ``![[Note#^id]]``) is indexed with the embedded text too, as a reader sees it (at most
    ``embed_max_chars`` of each, one level deep; pictures and files are not read)."""

    # off: measured on the dev set it gains recall@5 and loses hit@1 and MRR@10, one question
    # each (README, "Issue 13's English recall@5 misses")
    expand_embeds: bool = False
    embed_max_chars: int = 2000


@dataclass(frozen=True)
class CheckSettings:
    """What `mindgraph check` counts as an error.

    ``unresolved_links``: the severity of a link to a page that does not exist ([[Nowhere]],
    kind broken-link). Obsidian keeps such a link as a placeholder (a click creates the
    note), and vaults use them on purpose: ``warning`` lets `check --strict` pass on them.
    Ambiguous links and links to a missing heading or block stay errors."""

    unresolved_links: Literal["error", "warning"] = "error"


@dataclass(frozen=True)
class TrustSettings:
    """Verification and freshness (see mindgraph/trust/)."""

    revalidate_after_days: int = 90     # a validation falls due again this many days later
    coverage_threshold_pct: float = 80.0  # `mindgraph audit`: fresh L2 share to aim for
    primary_sources: tuple[str, ...] = ()  # evidence refs (globs, e.g. "raw:policies/*") for L3
    # URLs cited in pages are fetched only when this is on (or `verify --fetch`): off, a run
    # reads the copies fetched before (the evidence cache) and says which evidence it lacked.
    fetch_urls: bool = False
    fetch_timeout_s: float = 10.0       # total per URL, not a gap between bytes
    fetch_max_bytes: int = 2_000_000    # a larger answer (or local file) is not read
    fetch_max_redirects: int = 5
    # a cited URL on loopback, private, link-local, multicast or reserved addresses is refused
    # (a note must not make verify read the local network) unless this is on: an intranet wiki
    fetch_private_hosts: bool = False
    # the evidence cache (fetched texts): entries older than this go, then the oldest while
    # it is larger than this (after every verification run)
    evidence_cache_max_days: int = 365
    evidence_cache_max_bytes: int = 200_000_000


@dataclass(frozen=True)
class ScopesSettings:
    """Who may read what (mindgraph/scopes/): identities and the folder → tenant/scope mapping.

    Left empty (no identities), every caller is the one local identity and sees everything.
    Each identity is ``{name, tenant, agent, teams, token_env}``; each folder rule is
    ``{path: "{tenant}/team/{team}", scope: team}`` (validated by scopes/config.py)."""

    identities: tuple = ()
    folders: tuple = ()
    local: str = ""          # the identity the CLI and stdio MCP act as ("": sees everything)


@dataclass(frozen=True)
class Settings:
    """All settings, plus the base directory they are relative to."""

    paths: PathsSettings = field(default_factory=PathsSettings)
    compile: CompileSettings = field(default_factory=CompileSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    graph: GraphSettings = field(default_factory=GraphSettings)
    enrich: EnrichSettings = field(default_factory=EnrichSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    check: CheckSettings = field(default_factory=CheckSettings)
    trust: TrustSettings = field(default_factory=TrustSettings)
    scopes: ScopesSettings = field(default_factory=ScopesSettings)
    adapters: tuple[AdapterSettings, ...] = ()
    base_dir: Path = field(default=Path("."), compare=False)
    source: str = field(default="(defaults)", compare=False)
    # "section.key" → the MINDGRAPH_SECTION__KEY variable that set it (see origin)
    overrides: Mapping[str, str] = field(default_factory=dict, compare=False)

    def origin(self, key: str) -> str:
        """Where the value of ``key`` ("compile.provider") came from, for error messages:
        "Environment variable MINDGRAPH_COMPILE__PROVIDER" or the config file."""
        variable = self.overrides.get(key)
        return f"Environment variable {variable}" if variable else self.source

    def _env_key(self, what: str) -> str:
        """The exact ``*_env`` key of the section ``what`` is about ("store.dsn_env" for
        "store.backend pgvector")."""
        section = what.split(".", 1)[0]
        settings = _SECTIONS.get(section)
        keys = [f.name for f in dataclasses.fields(settings) if f.name.endswith("_env")] \
            if settings else []
        return f"{section}.{keys[0]}" if len(keys) == 1 else "matching *_env key"

    @property
    def raw_dir(self) -> Path:
        """Absolute folder of raw notes."""
        return (self.base_dir / self.paths.raw).resolve()

    @property
    def wiki_dir(self) -> Path:
        """Absolute folder of compiled wiki pages."""
        return (self.base_dir / self.paths.wiki).resolve()

    @property
    def state_dir(self) -> Path:
        """Absolute folder of derived state (ingest state, indexes, caches)."""
        return (self.base_dir / self.paths.state).resolve()

    def require_wiki(self) -> None:
        """Raise unless the wiki folder exists: ConfigError outside a workspace, else
        NotFoundError (nothing compiled yet)."""
        if not self.wiki_dir.is_dir():
            raise self.not_a_workspace(self.wiki_dir) or NotFoundError(
                f"Wiki folder {self.wiki_dir} does not exist. Run `mindgraph ingest` first "
                f"or set paths.wiki in {self.source}.")

    def missing_raw(self) -> ConfigError | None:
        """The error for a raw folder that does not exist, at the line of the config file
        (or the environment variable) that names it: a moved vault or a mistyped
        ``paths.raw``; None when the folder exists. Outside a workspace, that error."""
        raw = self.raw_dir
        if raw.is_dir():
            return None
        outside = self.not_a_workspace(raw)
        if outside is not None:
            return outside
        where = self.raw_named_at()
        if where is None:
            return ConfigError(f"raw folder {raw} does not exist. Create it (`mindgraph init`) "
                               f"or set paths.raw in {self.source} to the folder of your "
                               f"notes.")
        named = self.overrides.get("paths.raw", "paths.raw")
        return ConfigError(f"{where}: raw folder {raw} does not exist (paths.raw is "
                           f"'{self.paths.raw}'). Set {named} to the folder of your notes "
                           f"(moved or renamed?), or create it.")

    def raw_named_at(self) -> str | None:
        """Where ``paths.raw`` is set: "mindgraph.yml:5" or "Environment variable
        MINDGRAPH_PATHS__RAW"; None when it is the default."""
        if "paths.raw" in self.overrides:
            return self.origin("paths.raw")
        if self.source == "(defaults)":
            return None
        try:
            line = line_of(Path(self.source).read_text(encoding="utf-8"), ("paths", "raw"))
        except (OSError, UnicodeDecodeError):
            return None
        return f"{self.source}:{line}" if line is not None else None

    def not_a_workspace(self, folder: Path) -> ConfigError | None:
        """The error for a missing ``folder`` when no config file was found either: the
        command ran outside a workspace (None when the folder exists or a config file was
        read)."""
        if self.source != "(defaults)" or folder.is_dir():
            return None
        if not self.base_dir.is_dir():
            return ConfigError(
                f"{self.base_dir.resolve()} does not exist (no such folder), so it is no "
                f"mindgraph workspace. Check the path given with -C, or create a workspace "
                f"there with `mindgraph init {self.base_dir}`.")
        here = self.base_dir.resolve()
        compiled_by = workspace_compiling(here)
        if compiled_by is not None:
            return ConfigError(
                f"{here} is not a mindgraph workspace: its notes are compiled by the workspace "
                f"{compiled_by} (whose paths.raw names them). Run the command there (`cd "
                f"{compiled_by}`) or pass -C {compiled_by}.")
        top = notes_top(here) if holds_notes(here) else None
        create = (f"or, as this folder holds notes, make a workspace for them beside it: "
                  f"`mindgraph init {top}-wiki --raw {top}`" if top is not None else
                  "or create one with `mindgraph init DIR`")
        return ConfigError(
            f"{here} is not a mindgraph workspace: it has no "
            f"{CONFIG_FILENAME} and no {folder.name}/ folder. Run the command inside a "
            f"workspace, pass -C DIR (the folder that holds {CONFIG_FILENAME}), {create}.")

    def secret(self, env_name: str, what: str) -> str:
        """Read a secret from the environment variable named in the settings."""
        key = self._env_key(what)
        variable = self.overrides.get(key)
        where = f"(set by environment variable {variable})" if variable else f"in {self.source}"
        if not env_name:
            raise ConfigError(
                f"{what} needs a secret but no environment variable is named for it. "
                f"Set {key} {where}."
            )
        value = os.environ.get(env_name, "")
        if not value:
            raise ConfigError(
                f"{what}: environment variable {env_name} is not set. "
                f"Export it (export {env_name}=...) or change {key} {where}."
            )
        return value


_SECTIONS = {
    "paths": PathsSettings,
    "compile": CompileSettings,
    "embedding": EmbeddingSettings,
    "store": StoreSettings,
    "graph": GraphSettings,
    "enrich": EnrichSettings,
    "retrieval": RetrievalSettings,
    "serve": ServeSettings,
    "limits": LimitsSettings,
    "index": IndexSettings,
    "check": CheckSettings,
    "trust": TrustSettings,
    "scopes": ScopesSettings,
}


def load_settings(base_dir: str | Path = ".", config: str | Path | None = None,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Load settings from ``config`` (or ``base_dir/mindgraph.yml`` when it exists).

    A missing default file means defaults; a missing file named explicitly is an error.
    """
    base = Path(base_dir)
    environ = os.environ if environ is None else environ
    if config is not None:
        path = Path(config)
        if not path.exists():
            raise ConfigError(f"Config file {path} does not exist. Create it with `mindgraph init` "
                              f"or pass an existing file to --config.")
    else:
        path = base / CONFIG_FILENAME
    data: dict[str, Any] = {}
    source = "(defaults)"
    text = ""
    if config is not None or path.is_file() or (path.exists() and not path.is_dir()):
        source = str(path)
        try:
            text = _config_text(path, explicit=config is not None)
            loaded = load_strict(text)
        except DuplicateKeyError as exc:
            raise ConfigError(f"{path}:{exc.problem_mark.line + 1}: {exc.problem} "
                              f"(YAML would keep only the last).") from exc
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            raise ConfigError(f"{path}{line}: not valid YAML ({getattr(exc, 'problem', exc)}). "
                              f"Fix the syntax at that line.") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text. Save it as UTF-8.") from exc
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the config file "
                              f"({exc.strerror or exc}).") from exc
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of sections "
                              f"({', '.join(sorted([*_SECTIONS, 'adapters']))}).")
        data = loaded
    data, overrides = _apply_env(data, environ)
    try:
        settings = settings_from_dict(data, base_dir=base, source=source)
        return dataclasses.replace(settings, overrides=overrides)
    except ConfigError as exc:
        # a bad value that came from the environment: name the variable, not the file
        message = str(exc)
        for key, variable in overrides.items():
            if f"'{key}'" in message or (isinstance(exc, BadValue) and
                                          f"{exc.key}.".startswith(f"{key}.")):
                message = message.replace(f"{source}:", f"Environment variable {variable}:", 1)
                raise ConfigError(message.replace(_fix_in(source), f"Fix the value of "
                                                                   f"{variable}.")) from exc
        lines = (line_of(text, path) for path in exc.paths) \
            if isinstance(exc, BadValue) and text else ()
        line = next((found for found in lines if found is not None), None)
        if line is not None and message.startswith(f"{source}: "):
            raise BadValue(f"{source}:{line}:{message[len(source) + 1:]}", exc.key) from exc
        raise


CONFIG_MAX_BYTES = 1 << 20      # a config holds settings: a few KB; 1 MiB is ample


def _config_text(path: Path, explicit: bool) -> str:
    """The text of the config file ``path``: a ConfigError naming it and the fix when it is
    not a regular file (/dev/null, a FIFO, which would block, a folder) or is over
    CONFIG_MAX_BYTES (read whole otherwise: a 50 MB file given by mistake)."""
    try:
        return read_text(path, max_bytes=CONFIG_MAX_BYTES)
    except UnreadableFile as exc:
        if exc.kind == "too-large":
            size = f"{path.stat().st_size:,} bytes"
            raise ConfigError(f"Config file {path} is {size}, over the {CONFIG_MAX_BYTES:,}-byte "
                              f"(1 MiB) limit for a config file; not read. A mindgraph.yml "
                              f"holds settings (a few KB): check that this is the right "
                              f"file, or trim it.") from exc
        kind = exc.strerror.split(", not a regular file")[0]      # "a folder", "a device", …
        fix = (f"pass the {CONFIG_FILENAME} inside it (--config {path / CONFIG_FILENAME}) or "
               f"the folder with -C" if kind == "a folder" else
               "pass a regular YAML file" if explicit else
               "replace it with a regular file, or remove it to use the defaults")
        raise ConfigError(f"Config file {path} is {kind}, not a regular file; {fix}.") from exc


def settings_from_dict(data: Mapping[str, Any], base_dir: str | Path = ".",
                       source: str = "(dict)") -> Settings:
    """Validate a plain mapping (as parsed from YAML) into Settings."""
    known = set(_SECTIONS) | {"adapters"}
    for key in data:
        if key not in known:
            raise BadValue(f"{source}: unknown section '{key}'.{_did_you_mean(key, known)} "
                           f"Known sections: {', '.join(sorted(known))}. Remove or rename it.",
                           str(key))
    kwargs: dict[str, Any] = {}
    for name, cls in _SECTIONS.items():
        section = data.get(name)
        if section is None:
            continue
        if not isinstance(section, dict):
            raise ConfigError(f"{source}: '{name}' must be a mapping of keys, got "
                              f"{type(section).__name__}.")
        kwargs[name] = _build(cls, section, name, source)
    adapters = data.get("adapters") or []
    if not isinstance(adapters, list):
        raise ConfigError(f"{source}: 'adapters' must be a list of adapter entries "
                          f"(each with name, type, target, options).")
    built = []
    for i, entry in enumerate(adapters):
        if not isinstance(entry, dict):
            raise ConfigError(f"{source}: adapters[{i}] must be a mapping with at least 'name'.")
        built.append(_build(AdapterSettings, entry, f"adapters[{i}]", source))
    names = [a.name for a in built]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ConfigError(f"{source}: adapter names must be unique; repeated: {sorted(dupes)}.")
    settings = Settings(**kwargs, adapters=tuple(built), base_dir=Path(base_dir), source=source)
    _check_values(settings)
    return settings


def _did_you_mean(name: str, known: typing.Iterable[str]) -> str:
    """" Did you mean 'provider'?" for the closest known name, or "" when none is close."""
    close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def _build(cls: type, values: Mapping[str, Any], where: str, source: str) -> Any:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    for key, raw in values.items():
        if key not in fields:
            raise BadValue(f"{source}: unknown key '{where}.{key}'.{_did_you_mean(key, fields)}"
                           f" Known keys in '{where}': {', '.join(sorted(fields))}. Remove or "
                           f"rename it.", f"{where}.{key}")
        out[key] = _coerce(raw, hints[key], f"{where}.{key}", source)
    for name, f in fields.items():
        if (name not in out and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING):
            raise ConfigError(f"{source}: '{where}.{name}' is required. Add it to that entry.")
    return cls(**out)


def _coerce(value: Any, hint: Any, key: str, source: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is Literal:
        choices = typing.get_args(hint)
        if isinstance(value, bool) and ("off" in choices or "on" in choices):
            value = "on" if value else "off"   # YAML reads a bare off/on as a boolean
        if value not in choices:
            raise BadValue(f"{source}: '{key}' is {value!r}; it must be one of "
                           f"{', '.join(map(str, choices))}."
                           f"{_did_you_mean(value, [str(c) for c in choices])}", key)
        return value
    if origin in (typing.Union, types.UnionType):
        kinds = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is None or len(kinds) != 1:
            return value
        return _coerce(value, kinds[0], key, source)     # "dict | None": a dict when set
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in {"true", "false", "1", "0", "yes", "no"}:
            return value.lower() in {"true", "1", "yes"}
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
    elif hint is float:
        number = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                pass
        if number is not None:
            if not math.isfinite(number):   # .inf or .nan made every fused score NaN
                raise BadValue(f"{source}: '{key}' is {value!r}; it must be a finite "
                               f"number.", key)
            return number
    elif hint is str:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    elif hint is dict or origin is dict:
        if isinstance(value, str):          # from the environment: a YAML/JSON mapping
            try:
                value = load_strict(value)
            except yaml.YAMLError:
                pass
        if isinstance(value, dict):
            return dict(value)
    elif origin is tuple or hint is tuple:
        if isinstance(value, (list, tuple)):
            return tuple(value)
        if isinstance(value, str):      # from the environment: comma-separated
            return tuple(item.strip() for item in value.split(",") if item.strip())
    else:
        return value
    name = getattr(hint, "__name__", str(hint))
    raise BadValue(f"{source}: '{key}' must be {_article(name)} {name}, got {value!r}. "
                   f"{_fix_in(source)}", key)


def _fix_in(source: str) -> str:
    """The fix of a bad value read from the file (load_settings names the variable instead
    when the value came from the environment)."""
    return f"Fix the value in {source} (or the MINDGRAPH_ environment override)."


def _article(name: str) -> str:
    return "an" if name[:1] in "aeiou" else "a"


def _check_values(s: Settings) -> None:
    checks = [
        (s.compile.concurrency >= 1, "compile.concurrency", "at least 1"),
        (s.compile.processes >= 0, "compile.processes", "0 (one per core) or more"),
        (0.0 <= s.compile.temperature <= 2.0, "compile.temperature", "between 0 and 2"),
        (s.compile.max_retries >= 0, "compile.max_retries", "0 or more"),
        (s.compile.timeout_s > 0, "compile.timeout_s", "above 0"),
        (s.compile.max_note_bytes > 0, "compile.max_note_bytes", "above 0"),
        (s.compile.max_note_headings > 0, "compile.max_note_headings", "above 0"),
        (s.embedding.batch_size >= 1, "embedding.batch_size", "at least 1"),
        (s.embedding.dimension >= 0, "embedding.dimension", "0 (model default) or more"),
        (s.embedding.load_notice_after_s >= 0, "embedding.load_notice_after_s", "0 or more"),
        # above 1000 pgvector drops the value when it loads (a server warning) and searches
        # at its default 40
        (1 <= s.store.ef_search <= 1000, "store.ef_search", "between 1 and 1000 (pgvector's "
                                                             "range)"),
        (2 <= s.store.hnsw_m <= 100, "store.hnsw_m", "between 2 and 100 (pgvector's range)"),
        (2 * s.store.hnsw_m <= s.store.hnsw_ef_construction <= 1000,
         "store.hnsw_ef_construction", "between twice store.hnsw_m and 1000 (pgvector's range)"),
        (0.0 < s.graph.generic_tag_share <= 1.0, "graph.generic_tag_share", "in (0, 1]"),
        (s.graph.tag_fanout_cap >= 1, "graph.tag_fanout_cap", "at least 1"),
        (s.store.rebuild_wait_s > 0, "store.rebuild_wait_s", "above 0"),
        (s.store.table.replace("_", "").isalnum(), "store.table", "letters, digits and _ only"),
        (1 <= s.serve.port <= 65535, "serve.port", "between 1 and 65535"),
        (s.serve.mcp_max_sessions >= 1, "serve.mcp_max_sessions", "at least 1"),
        (0 < s.serve.mcp_session_idle_s < math.inf, "serve.mcp_session_idle_s",
         "above 0 seconds"),
        (s.retrieval.keyword_weight >= 0 and s.retrieval.vector_weight >= 0
         and s.retrieval.keyword_weight + s.retrieval.vector_weight > 0,
         "retrieval.keyword_weight/vector_weight", "0 or more, not both 0"),
        (s.retrieval.rrf_k >= 1, "retrieval.rrf_k", "at least 1"),
        (set(s.retrieval.twin_weights) <= {"ja", "zh"} and all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and 0 <= w < math.inf
            for w in s.retrieval.twin_weights.values()),
         "retrieval.twin_weights", "a mapping of ja and/or zh to weights of 0 or more, "
         "such as {ja: 0.3}"),
        (0 <= s.retrieval.other_language_factor <= 1, "retrieval.other_language_factor",
         "between 0 and 1"),
        (0 <= s.retrieval.unsupported_language_vector_factor <= 1,
         "retrieval.unsupported_language_vector_factor", "between 0 and 1"),
        (0 <= s.retrieval.untranslated_keyword_factor <= 1,
         "retrieval.untranslated_keyword_factor", "between 0 and 1"),
        (0 < s.retrieval.multilingual_vector_factor <= 10,
         "retrieval.multilingual_vector_factor", "above 0 and at most 10"),
        (0 <= s.retrieval.keyword_only_penalty < 1, "retrieval.keyword_only_penalty",
         "in [0, 1)"),
        (0 <= s.retrieval.subword_weight <= 1, "retrieval.subword_weight", "in [0, 1]"),
        (s.retrieval.subword_chars >= 1, "retrieval.subword_chars", "at least 1"),
        (0 <= s.retrieval.min_score < 1, "retrieval.min_score", "in [0, 1)"),
        (0 <= s.retrieval.definition_bonus <= 1, "retrieval.definition_bonus", "in [0, 1]"),
        (s.retrieval.overfetch >= 1, "retrieval.overfetch", "at least 1"),
        (s.retrieval.reserve_top >= 0, "retrieval.reserve_top", "0 or more"),
        (s.retrieval.reserve_within >= 0, "retrieval.reserve_within", "0 or more"),
        (s.retrieval.recency_lambda >= 0, "retrieval.recency_lambda", "0 or more"),
        (0.0 <= s.enrich.link_temperature <= 2.0, "enrich.link_temperature", "between 0 and 2"),
        (all(isinstance(k, str) and k.strip() and isinstance(v, (int, float))
             and not isinstance(v, bool) and 0 <= v < math.inf
             for k, v in s.retrieval.recency_lambdas.items()),
         "retrieval.recency_lambdas", "a mapping of page types or tags to decay rates of 0 or "
         "more, such as {decision: 0.005, reference: 0.001}"),
        (s.retrieval.expansion_timeout_s > 0, "retrieval.expansion_timeout_s", "above 0"),
        (s.retrieval.native_weight >= 0, "retrieval.native_weight", "0 or more"),
        (s.retrieval.native_timeout_s > 0, "retrieval.native_timeout_s", "above 0"),
        *((a.cache_ttl_s >= 0, f"adapters[{i}].cache_ttl_s", "0 (off) or more")
          for i, a in enumerate(s.adapters)),
        (s.serve.context_timeout_s > 0, "serve.context_timeout_s", "above 0"),
        (-1 <= s.serve.context_min_similarity <= 1, "serve.context_min_similarity",
         "between -1 and 1"),
        (s.serve.embed_changes_max_chunks >= 0, "serve.embed_changes_max_chunks", "0 or more"),
        (s.serve.usage_log_max_bytes >= 10_000, "serve.usage_log_max_bytes", "at least 10000"),
        (s.limits.max_page_bytes >= 1000, "limits.max_page_bytes", "at least 1000"),
        (s.limits.max_indexed_chars >= 1000, "limits.max_indexed_chars", "at least 1000"),
        (s.limits.max_files >= 1, "limits.max_files", "at least 1"),
        (s.limits.max_pull_notes >= 1, "limits.max_pull_notes", "at least 1"),
        (s.limits.llm_calls_per_hour >= 0, "limits.llm_calls_per_hour", "0 (no limit) or more"),
        (s.limits.embedding_calls_per_hour >= 0, "limits.embedding_calls_per_hour",
         "0 (no limit) or more"),
        (s.limits.documents_per_day >= 0, "limits.documents_per_day", "0 (no limit) or more"),
        (s.limits.max_pull_bytes >= s.limits.max_page_bytes, "limits.max_pull_bytes",
         "at least limits.max_page_bytes"),
        (s.index.embed_max_chars >= 100, "index.embed_max_chars", "at least 100"),
        (s.limits.max_total_bytes >= s.compile.max_note_bytes, "limits.max_total_bytes",
         "at least compile.max_note_bytes"),
        (s.serve.max_body_bytes >= 1024, "serve.max_body_bytes", "at least 1024"),
        (s.serve.upload_max_files >= 1, "serve.upload_max_files", "at least 1"),
        (s.serve.upload_max_file_bytes >= 1024, "serve.upload_max_file_bytes", "at least 1024"),
        (s.serve.upload_timeout_s > 0, "serve.upload_timeout_s", "above 0"),
        (s.serve.attachment_timeout_s > 0, "serve.attachment_timeout_s", "above 0"),
        (s.serve.request_timeout_s > 0, "serve.request_timeout_s", "above 0"),
        (s.serve.reindex_timeout_s > 0, "serve.reindex_timeout_s", "above 0"),
        (s.serve.slow_workers >= 1, "serve.slow_workers", "at least 1"),
        (s.serve.slow_queue >= 0, "serve.slow_queue", "0 or more"),
        (s.serve.shutdown_timeout_s > 0, "serve.shutdown_timeout_s", "above 0"),
        (s.serve.header_timeout_s > 0, "serve.header_timeout_s", "above 0"),
        (s.serve.max_header_bytes >= 1024, "serve.max_header_bytes", "at least 1024"),
        (s.serve.max_connections >= 1, "serve.max_connections", "at least 1"),
        (s.serve.max_connections_per_client >= 0, "serve.max_connections_per_client",
         "0 (no limit) or more"),
        (s.serve.mcp_max_sessions_per_identity >= 0, "serve.mcp_max_sessions_per_identity",
         "0 (no limit) or more"),
        (s.serve.upload_spool_bytes >= 1, "serve.upload_spool_bytes", "at least 1"),
        (s.serve.requests_per_identity >= 0, "serve.requests_per_identity",
         "0 (no limit) or more"),
        (s.serve.share_per_identity >= 0, "serve.share_per_identity", "0 (no share) or more"),
        (s.serve.validate_max_claims >= 0, "serve.validate_max_claims", "0 (no limit) or more"),
        (s.serve.validate_max_evidence_sentences >= 0, "serve.validate_max_evidence_sentences",
         "0 (no limit) or more"),
        (s.trust.revalidate_after_days >= 1, "trust.revalidate_after_days", "at least 1"),
        (0 <= s.trust.coverage_threshold_pct <= 100, "trust.coverage_threshold_pct",
         "between 0 and 100"),
        (s.trust.fetch_timeout_s > 0, "trust.fetch_timeout_s", "above 0"),
        (s.trust.fetch_max_bytes >= 1000, "trust.fetch_max_bytes", "at least 1000"),
        (0 <= s.trust.fetch_max_redirects <= 20, "trust.fetch_max_redirects",
         "between 0 and 20"),
        (s.trust.evidence_cache_max_days >= 1, "trust.evidence_cache_max_days", "at least 1"),
        (s.trust.evidence_cache_max_bytes >= 0, "trust.evidence_cache_max_bytes", "0 or more"),
    ]
    for ok, key, rule in checks:
        if not ok:
            raise BadValue(f"{s.source}: '{key}' must be {rule}. {_fix_in(s.source)}", key)
    check_embedding(s)
    _check_enrich_thresholds(s)
    _check_web_names(s)
    _check_primary_sources(s)
    for key, value in (("paths.raw", s.paths.raw), ("paths.wiki", s.paths.wiki)):
        if not value:
            raise ConfigError(f"{s.source}: '{key}' must not be empty.")
    if s.compile.max_note_bytes > s.limits.max_page_bytes:
        raise ConfigError(f"{s.source}: compile.max_note_bytes ({s.compile.max_note_bytes:,}) "
                          f"is over limits.max_page_bytes ({s.limits.max_page_bytes:,}): such a "
                          f"note would compile into a page too large to read. Lower "
                          f"compile.max_note_bytes, or raise limits.max_page_bytes to at least "
                          f"as much.")
    if s.paths.raw.rstrip("/") == s.paths.wiki.rstrip("/"):
        raise ConfigError(f"{s.source}: paths.raw and paths.wiki must be different folders "
                          f"(raw notes are never written).")
    _check_nesting(s)


def _check_nesting(s: Settings) -> None:
    """Nothing mindgraph writes (wiki pages, its state and lock, the usage log) may be in
    raw/, which is never written; nor raw/ in wiki/, where pages could overwrite notes. The
    paths are compared resolved (``..`` and symlinks followed), as the commands use them."""
    raw = s.raw_dir
    written = [("paths.wiki", s.wiki_dir, "wiki pages", "wiki"),
               ("paths.state", s.state_dir, "its state and ingest lock", ".mindgraph")]
    if s.serve.usage_log:
        written.append(("serve.usage_log", (s.state_dir / s.serve.usage_log).resolve(),
                        "the usage log", "usage.jsonl"))
    for key, folder, what, example in written:
        if folder.is_relative_to(raw):
            where = "is" if folder == raw else "is inside"
            if key != "serve.usage_log" and (s.base_dir / example).resolve().is_relative_to(raw):
                example = f"../{example}"       # raw: . (the workspace folder itself)
            raise BadValue(
                f"{s.source}: '{key}' ({folder}) {where} 'paths.raw' ({raw}): mindgraph would "
                f"write {what} among your notes, and raw/ is never written. Move one: set "
                f"{key} to a place outside raw/ (e.g. {example}), or paths.raw to the folder "
                f"of the notes alone.", key, also=("paths.raw",))
    if raw.is_relative_to(s.wiki_dir):
        raise BadValue(f"{s.source}: 'paths.raw' ({raw}) is inside 'paths.wiki' "
                       f"({s.wiki_dir}): wiki pages could overwrite raw notes. Move one: set "
                       f"paths.raw and paths.wiki to two folders side by side (e.g. raw and "
                       f"wiki).", "paths.raw", also=("paths.wiki",))


# The API models mindgraph knows by name (providers/embedding/gemini.py and openai.py, their
# KNOWN_DIMENSIONS; config imports no provider): enrich.thresholds may name them
REMOTE_EMBEDDING_MODELS = ("gemini-embedding-001", "text-embedding-004", "embedding-001",
                           "text-embedding-3-small", "text-embedding-3-large",
                           "text-embedding-ada-002", "nomic-embed-text", "mxbai-embed-large",
                           "all-minilm", "bge-m3")


def _check_enrich_thresholds(s: Settings) -> None:
    """Each ``enrich.thresholds`` entry is a cosine in [0, 1] keyed by a part of the name of a
    model mindgraph knows (or of embedding.model): a part no model has was ignored without a
    word (a typo kept the measured default). BadValue, so the file's line is named."""
    cfg = s.embedding
    known = [*LOCAL_MODELS, *(entry[2] for entry in LOCAL_MODELS.values()),
             *REMOTE_EMBEDDING_MODELS, "hashing", *([cfg.model] if cfg.model else [])]
    known = list(dict.fromkeys(known))
    used = [cfg.model or (DEFAULT_LOCAL_MODEL if cfg.provider == "local" else cfg.provider),
            *routed_languages(cfg.provider, cfg.model, cfg.languages).values()]
    for part, value in s.enrich.thresholds.items():
        key = f"enrich.thresholds.{part}"
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not 0.0 <= value <= 1.0:
            raise BadValue(f"{s.source}: '{key}' is {value!r}; give a cosine between 0 and 1, "
                           f"e.g. {{e5: 0.9}}.", key)
        matched = [name for name in known if str(part).lower() in name.lower()]
        if len(str(part).strip()) < 2 or len(matched) == len(known) > 1:
            raise BadValue(f"{s.source}: '{key}' is part of every model's name (or empty), so "
                           f"it would set one cut-off for all of them; name a model by a part "
                           f"only its name has (e5, MiniLM, USE) or use enrich.link_threshold "
                           f"for every model.", key)
        if not matched:
            raise BadValue(f"{s.source}: '{key}' names no embedding model: an entry applies to "
                           f"the models whose name contains it, and no model mindgraph knows "
                           f"does.{_did_you_mean(str(part), known)} Known models: "
                           f"{', '.join(known)}; this workspace embeds with "
                           f"{', '.join(dict.fromkeys(used))}. Remove or rename it.", key)


def check_embedding(s: Settings) -> None:
    """embedding.model, embedding.dimension and embedding.languages name what the local
    provider can run (local_models.py): checked when the file is loaded, so every command
    says so, not only the first that embeds; the provider factory checks again settings made
    another way."""
    cfg = s.embedding
    models = ", ".join(LOCAL_MODELS)
    if cfg.languages and cfg.provider != "local":     # set in the file (the default: None)
        raise BadValue(f"{s.source}: 'embedding.languages' routes languages to local models; "
                       f"it needs embedding.provider local (it is {cfg.provider}). Remove "
                       f"embedding.languages or set the provider to local.", "embedding.languages")
    if cfg.cross_lingual_vectors and not routed_languages(cfg.provider, cfg.model,
                                                          cfg.languages):
        raise BadValue(f"{s.source}: 'embedding.cross_lingual_vectors' gives every page a second "
                       f"vector by the multilingual model that embedding.languages routes "
                       f"Japanese or Chinese to, and no language is routed here. Remove it, or "
                       f"leave embedding.languages unset with the default model (USE for ja "
                       f"and zh).", "embedding.cross_lingual_vectors")
    if cfg.provider != "local":
        return
    model = cfg.model or DEFAULT_LOCAL_MODEL
    if model not in LOCAL_MODELS:
        raise BadValue(f"{s.source}: 'embedding.model' is {cfg.model!r}, which embedding.provider "
                       f"local does not run.{_did_you_mean(model, LOCAL_MODELS)} It must be one "
                       f"of {models} (or remove it for the default, {DEFAULT_LOCAL_MODEL}); a "
                       f"model of an API needs embedding.provider openai or gemini.",
                       "embedding.model")
    if cfg.dimension not in (0, local_dimension(model)):
        raise BadValue(f"{s.source}: 'embedding.dimension' is {cfg.dimension}, but {model} makes "
                       f"vectors of {local_dimension(model)} dimensions and cannot make others. "
                       f"Remove embedding.dimension (or pick another model or provider).",
                       "embedding.dimension")
    for lang, routed in (cfg.languages or {}).items():
        if str(lang) not in LANGUAGES:
            raise BadValue(f"{s.source}: 'embedding.languages' has {lang!r}, which is not a "
                           f"language mindgraph tells apart.{_did_you_mean(lang, LANGUAGES)} "
                           f"It must be one of {', '.join(LANGUAGES)}, each mapped to a local "
                           f"model, e.g. {{ja: multilingual-e5-small}}.",
                           f"embedding.languages.{lang}")
        if str(routed) not in LOCAL_MODELS:
            raise BadValue(f"{s.source}: 'embedding.languages' maps {lang} to {routed!r}, which "
                           f"is not a local model.{_did_you_mean(str(routed), LOCAL_MODELS)} It "
                           f"must be one of {models} (or remove embedding.languages.{lang}).",
                           f"embedding.languages.{lang}")


def _check_primary_sources(s: Settings) -> None:
    """A primary-source glob that names no kind of evidence would silently never match."""
    for pattern in s.trust.primary_sources:
        if not str(pattern).startswith(("raw:", "file:", "http://", "https://", "*")):
            raise ConfigError(
                f"{s.source}: 'trust.primary_sources' entry {pattern!r} matches no evidence: "
                f"start it with raw: (a raw note, e.g. raw:policies/*), file: (a linked local "
                f"file) or http(s):// (a URL). Fix it in {s.source}.")


def _check_web_names(s: Settings) -> None:
    """serve.allowed_hosts are bare host names; serve.cors_origins are scheme://host[:port]."""
    for host in s.serve.allowed_hosts:
        if not isinstance(host, str) or not re.fullmatch(r"[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\]",
                                                         host):
            raise ConfigError(f"{s.source}: 'serve.allowed_hosts' entry {host!r} is not a host "
                              f"name: give the name alone (e.g. wiki.internal), without "
                              f"scheme, port or path.")
    for origin in s.serve.cors_origins:
        if origin == "*":
            raise ConfigError(f"{s.source}: 'serve.cors_origins' '*' would let every web page "
                              f"read your notes; list the origins of the apps you trust "
                              f"(e.g. http://localhost:6274).")
        if not isinstance(origin, str) or not re.fullmatch(r"https?://[^/\s]+", origin):
            raise ConfigError(f"{s.source}: 'serve.cors_origins' entry {origin!r} is not an "
                              f"origin: write scheme://host[:port] with no path or trailing "
                              f"slash (e.g. http://localhost:6274).")


def _apply_env(data: dict[str, Any], environ: Mapping[str, str]
               ) -> tuple[dict[str, Any], dict[str, str]]:
    """``data`` with the MINDGRAPH_<SECTION>__<KEY> overrides applied, and which variable set
    each overridden "section.key"."""
    merged = {k: (dict(v) if isinstance(v, dict) else v) for k, v in data.items()}
    overrides: dict[str, str] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        section, _, key = name[len(ENV_PREFIX):].partition("__")
        section, key = section.lower(), key.lower()
        if section not in _SECTIONS:
            raise ConfigError(f"Environment variable {name}: unknown section '{section}'."
                              f"{_did_you_mean(section, _SECTIONS)} Known: "
                              f"{', '.join(sorted(_SECTIONS))}. Unset or rename it.")
        known = {f.name for f in dataclasses.fields(_SECTIONS[section])}
        if key not in known:
            raise ConfigError(f"Environment variable {name}: unknown key '{section}.{key}'."
                              f"{_did_you_mean(key, known)} Known keys in '{section}': "
                              f"{', '.join(sorted(known))}. Unset or rename it.")
        target = merged.setdefault(section, {})
        if not isinstance(target, dict):
            continue
        target[key] = value
        overrides[f"{section}.{key}"] = name
    return merged, overrides


DEFAULT_CONFIG_YAML = """\
# mindgraph configuration. Every key is optional; these are the defaults.
# Environment variables override any key: MINDGRAPH_<SECTION>__<KEY>=value
# Secrets are never written here: name the environment variable that holds them (*_env).
paths:
  raw: raw          # your notes; mindgraph never writes here
  wiki: wiki        # compiled pages
  state: .mindgraph # derived state (ingest state, indexes); safe to delete

compile:
  provider: offline # offline | anthropic | gemini | openai (any OpenAI-compatible server)
  # model: claude-sonnet-4-5
  # api_key_env: ANTHROPIC_API_KEY   # the default for anthropic (GEMINI_API_KEY for gemini)
  # base_url: http://localhost:11434/v1   # Ollama, vLLM, llama.cpp server
  language: auto    # auto = each note's own language; or one for every page (English, ja)
  concurrency: 4

embedding:
  provider: local   # local (all-MiniLM-L6-v2, offline) | gemini | openai | hashing
  # model: all-MiniLM-L6-v2    # local: all-MiniLM-L6-v2 | multilingual-e5-small | use-multilingual-v3
  # languages: {ja: use-multilingual-v3, zh: use-multilingual-v3}   # the default: a language's own local model (en, ja, zh, ko, other); {} = MiniLM for all
  # cross_lingual_vectors: false   # true: USE also embeds English pages, for ja/zh questions over them

store:
  backend: embedded # embedded | pgvector
  dsn_env: MINDGRAPH_PG_DSN

# limits:            # what is read and indexed; each limit hit is reported per file
#   max_page_bytes: 5000000     # at least compile.max_note_bytes (2000000)
#   max_indexed_chars: 500000   # section text per page that search indexes
#   max_files: 5000             # notes one ingest reads from raw/ (the rest wait, reported)
#   max_total_bytes: 500000000  # bytes of notes one ingest reads from raw/
#   max_pull_notes: 10000       # notes one pull takes from each adapter (the rest wait, reported)
#   max_pull_bytes: 500000000   # bytes of notes one pull takes from each adapter (likewise)
#   llm_calls_per_hour: 1000    # per server identity (token); past it 429, no call; 0 = off
#   embedding_calls_per_hour: 10000  # query embeddings by a cloud provider, per identity
#   documents_per_day: 500      # documents one identity may create a day; 0 = off

# check:             # `mindgraph check`
#   unresolved_links: error     # error | warning: [[Nowhere]] kept as an Obsidian placeholder

# trust:             # `mindgraph verify`: freshness, L3, cited evidence
#   revalidate_after_days: 90
#   primary_sources: ["raw:policies/*"]   # raw:…, file:… or http(s)://… globs; L3 needs them
#   fetch_urls: false           # on (or `verify --fetch`): cited URLs are fetched; off: cached
#   fetch_timeout_s: 10         # total per URL
#   fetch_max_bytes: 2000000
#   fetch_private_hosts: false  # on: cited URLs may be on loopback/private addresses (intranet)
#   evidence_cache_max_days: 365        # fetched copies older than this are pruned
#   evidence_cache_max_bytes: 200000000 # then the oldest while the cache is larger

# adapters:
#   - name: notes
#     type: filesystem          # or a dotted path: mypkg.adapters.NotesApp
#     target: notes             # folder under raw/
#     options: {path: ~/Documents/notes}
#   - name: tasks
#     type: ticktick            # TickTick's open API: pull, search, create, update
#     cache_ttl_s: 300          # the listing is cached this long under the state folder
#     options: {token_env: TICKTICK_TOKEN}   # the access token, from the environment
"""
