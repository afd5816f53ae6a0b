"""Every error mindgraph raises on purpose.

    MindgraphError                 base: message says what, where, and how to fix it
    ├── ConfigError                mindgraph.yml or an environment override is wrong
    ├── InputError                 a file named on the command line cannot be used
    ├── PageError                  a markdown page cannot be parsed (has path and line)
    ├── AdapterError               a data-source adapter cannot be loaded or fails
    ├── IngestError                compiling one raw note failed (fails only that note)
    │   ├── RemovalsHeld             a run would remove most of the wiki: held, not applied
    │   └── IngestBusy               another process's ingest holds the workspace's lock
    ├── ProviderError              an LLM or embedding provider call failed
    │   └── TransientProviderError   429 / 5xx / timeout: worth retrying
    ├── StoreError                 a vector store cannot be reached or used
    │   └── QuotaLedgerBusy          another process holds the quota counts' lock (503)
    ├── NotFoundError              a page, section or other named thing does not exist
    ├── TooLarge                   a request asks for more work than a limit allows (413)
    ├── QuotaExceeded              an identity used up an hourly or daily quota (429)
    ├── OverBudget                 work stopped at its time budget (504)
    ├── EmbedBusy                  another embed holds the workspace's lock (embed --no-wait)
    └── AccessError                who is asking, and may they (scopes/)
        ├── Unauthenticated          no token, or one that names no identity (HTTP 401)
        └── Forbidden                the identity may not do this (HTTP 403)

The CLI maps ConfigError and InputError to exit code 2 and other errors to exit code 1; the REST API maps
NotFoundError to 404, Unauthenticated to 401, Forbidden to 403, TooLarge to 413,
QuotaExceeded to 429 (with Retry-After), QuotaLedgerBusy to 503 (with Retry-After), OverBudget
to 504. What a caller may not see is
NotFoundError, in the same words as what does not exist.
"""

from __future__ import annotations


class MindgraphError(Exception):
    """Base class: the message says what happened, where, and how to fix it."""


class ConfigError(MindgraphError):
    """The configuration (mindgraph.yml or an environment override) is invalid."""


class InputError(MindgraphError):
    """A file given on the command line (a question file, a dataset) cannot be used."""


class PageError(MindgraphError):
    """A page cannot be parsed; carries the file path and, when known, the line."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(where + message)


class AdapterError(MindgraphError):
    """A data-source adapter cannot be imported, configured or run."""


class IngestError(MindgraphError):
    """Compiling one raw note failed; the run goes on with the next note."""


class RemovalsHeld(IngestError):
    """An ingest run would remove every wiki page, or most of them (ingest/guard.py): raw/ is
    more likely empty, unmounted or the wrong folder than emptied on purpose. Nothing was
    removed; ``--allow-removals`` applies it."""


class IngestBusy(IngestError):
    """Another ingest (another process, or another request) holds the workspace's ingest
    lock; nothing was done."""


class ProviderError(MindgraphError):
    """An LLM or embedding provider call failed for good."""


class TransientProviderError(ProviderError):
    """A provider call failed in a way worth retrying (429, 5xx, timeout, connection)."""

    def __init__(self, message: str, retry_after: float | None = None):
        self.retry_after = retry_after
        super().__init__(message)


class StoreError(MindgraphError):
    """A vector store cannot be reached or used."""


class QuotaLedgerBusy(StoreError):
    """Another process held the quota counts' write lock past the wait (mindgraph/quotas/):
    nothing was counted or done; ``retry_after_s`` when to try again."""

    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class NotFoundError(MindgraphError):
    """A named page, section or other object does not exist."""


class AmbiguousName(NotFoundError):
    """A name that fits several pages equally (REST 409): ``candidates`` are their paths."""

    def __init__(self, message: str, candidates: tuple[str, ...] = ()):
        super().__init__(message)
        self.candidates = tuple(candidates)


class TooLarge(MindgraphError):
    """A request asks for more work than a limit allows; the message names the setting."""


class QuotaExceeded(MindgraphError):
    """An identity used up one of its quotas (mindgraph/quotas/): ``setting`` names the limit
    to raise, ``retry_after_s`` when the next one fits again."""

    def __init__(self, message: str, setting: str, retry_after_s: float):
        super().__init__(message)
        self.setting = setting
        self.retry_after_s = retry_after_s


class OverBudget(MindgraphError):
    """Work stopped at its time budget, cooperatively (the caller has been answered)."""


class EmbedBusy(MindgraphError):
    """Another embed holds the workspace's embed lock, and the caller would not wait."""


class AccessError(MindgraphError):
    """Who is asking, and whether they may (mindgraph/scopes/)."""


class Unauthenticated(AccessError):
    """No bearer token, or one that names no configured identity."""


class Forbidden(AccessError):
    """The caller's identity may not do this (the message says why)."""


def for_agents(exc: BaseException) -> str:
    """What an agent (over REST or MCP) may read of ``exc``. mindgraph's own errors keep their
    message, written for the caller with the fix; a provider's (its answer's body, its address,
    the operator's account) and any other exception (a bug: file paths, internals) are said in
    general terms: the caller can retry or report, the server's log holds the whole error."""
    if isinstance(exc, TransientProviderError):
        return ("The model provider the server uses failed for a moment "
                "(TransientProviderError); retry later. The server's log has the details.")
    if isinstance(exc, ProviderError):
        return ("The model provider the server uses failed (ProviderError); the server's "
                "operator can read why in the server's log.")
    if isinstance(exc, AdapterError) and not isinstance(exc, NotFoundError):
        return (f"The note app or data source failed ({type(exc).__name__}); the server's "
                f"operator can read why in the server's log.")
    if isinstance(exc, MindgraphError):
        return str(exc)
    return (f"An internal error ({type(exc).__name__}) stopped this request; the server's "
            f"operator can read it in the server's log.")


def said_in_log(exc: BaseException) -> bool:
    """True when agents read ``exc`` in general terms (for_agents) and the server's log
    must hold its whole text: a provider's or a note app's error, or a bug."""
    return not isinstance(exc, MindgraphError) or (
        isinstance(exc, (ProviderError, AdapterError)) and not isinstance(exc, NotFoundError))


class AgentNote(str):
    """A degradation note as agents read it, in general terms, with ``detail``: the whole
    note (a provider's or app's own message, which may name its address or the operator's
    account) for the server's log and the operator's terminal (the CLI prints ``detail``)."""

    detail: str

    def __new__(cls, general: str, detail: str) -> "AgentNote":
        note = super().__new__(cls, general)
        note.detail = detail
        return note

    def __getnewargs__(self) -> tuple[str, str]:   # type: ignore[override]
        return str(self), self.detail


def failure_note(what: str, exc: BaseException, then: str) -> str:
    """The degradation note "``what`` failed (...); ``then``": mindgraph's own errors whole,
    a provider's, app's or unexpected one in general terms (AgentNote, whole in ``detail``)."""
    whole = f"{what} failed ({type(exc).__name__}: {exc}); {then}"
    if not said_in_log(exc):
        return whole
    return AgentNote(f"{what} failed ({type(exc).__name__}; the server's log has the "
                     f"details); {then}", whole)


def in_general_terms(exc: BaseException) -> str:
    """``exc`` as a reason inside a note: mindgraph's own errors whole, a provider's, app's or
    unexpected one by its type (an AgentNote whose ``detail`` is the whole text)."""
    if not said_in_log(exc):
        return str(exc)
    return AgentNote(f"{type(exc).__name__}; the server's log has the details", str(exc))


def note_around(reason: str, template: str) -> str:
    """``template`` (one ``{}``) around ``reason``, keeping an AgentNote's whole text apart."""
    if isinstance(reason, AgentNote):
        return AgentNote(template.format(reason), template.format(reason.detail))
    return template.format(reason)


def note_details(notes: "list[str] | tuple[str, ...]") -> list[str]:
    """The whole text of the notes said to agents in general terms (for the server's log)."""
    return [note.detail for note in notes if isinstance(note, AgentNote)]
