"""Per-identity quotas of the servers: LLM calls per hour, cloud embedding calls per hour and
documents created per day.

A server charges what a request does to the identity of its bearer token: REST's caller
check and the MCP tool runner call ``charge_to`` (or enter ``charged_to``) with it, and
within that context — and the threads that copy it: the lanes, search's expansion and
reranking, the compile workers —

- every LLM call is taken from ``limits.llm_calls_per_hour`` before it is made (the
  providers' ``before_call`` guard): past it the call raises ``QuotaExceeded`` and nothing
  is sent to the provider;
- every query embedding request to a cloud embedding provider (OpenAI-compatible, Gemini)
  is taken from ``limits.embedding_calls_per_hour`` the same way: a cached query costs
  none, a local model is never counted, nor is the workspace's own embedding of its pages;
- the documents API takes each new document from ``limits.documents_per_day`` before it
  writes (``take_documents``), and, for a write that compiles with the LLM, reserves its
  calls first (``llm_calls_reserved``, reserve.py): past either, nothing is stored.

Outside such a context (the CLI, stdio MCP, the owner's token) nothing is counted: the owner
is never limited. The counts live in the state folder (ledger.py), shared by every process.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..config import LimitsSettings
from ..errors import MindgraphError, QuotaExceeded
from ..providers.llm.base import guard_calls, release_guard
from ..scopes import Identity
from .ledger import LEDGER_FILE, QuotaLedger
from .reserve import RESERVED, Reserved

_LOG = logging.getLogger("mindgraph.quotas")


@dataclass(frozen=True)
class Quota:
    """One kind of spending: at most ``limit`` (0: no limit) per ``window_s``."""

    kind: str               # the ledger's name for it
    setting: str            # where it is set, named in every refusal
    limit: int
    window_s: float
    what: str               # "LLM calls", in messages
    period: str             # "hour"


class Quotas:
    """The quotas of one workspace (``limits``), counted in its state folder."""

    def __init__(self, limits: LimitsSettings, state_dir: Path):
        self.llm_calls = Quota("llm_calls", "limits.llm_calls_per_hour",
                               limits.llm_calls_per_hour, 3600.0, "LLM calls", "hour")
        self.embedding_calls = Quota("embedding_calls", "limits.embedding_calls_per_hour",
                                     limits.embedding_calls_per_hour, 3600.0,
                                     "embedding calls", "hour")
        self.documents = Quota("documents", "limits.documents_per_day",
                               limits.documents_per_day, 86400.0, "documents created", "day")
        self.ledger = QuotaLedger(Path(state_dir) / LEDGER_FILE)

    def charge(self, quota: Quota, who: Identity, count: int = 1,
               record: bool = True) -> list[int]:
        """Take ``count`` of ``quota`` for ``who`` (only check, with ``record`` False);
        QuotaExceeded, taking none, when they do not fit. The ids of the rows taken (none
        for the local identity, which has no quota, or a quota of 0)."""
        if who.is_local or not quota.limit:
            return []
        wait, ids = self.ledger.reserve(quota.kind, _key(who), count, quota.limit,
                                        quota.window_s, record=record)
        if wait is not None:
            raise _exceeded(quota, who, count, wait)
        return ids

    def guard(self, who: Identity) -> Callable[[str], None]:
        """What runs before each provider call charged to ``who`` (``before_call``): an LLM
        call spends one the write reserved (reserve.py), if any is left, else takes one."""
        def before(kind: str) -> None:
            if kind == "embedding":
                self.charge(self.embedding_calls, who)
                return
            reserved = RESERVED.get()
            if reserved is None or not reserved.use_one():
                self.charge(self.llm_calls, who)
        return before


def _key(who: Identity) -> str:
    return f"{who.tenant}/{who.name}"


def _exceeded(quota: Quota, who: Identity, count: int, wait_s: float) -> QuotaExceeded:
    seconds = max(1, math.ceil(wait_s))
    per = f"{quota.limit} {quota.what} per {quota.period} ({quota.setting})"
    raise_it = f"have the server's owner raise {quota.setting} in mindgraph.yml"
    if count > quota.limit:
        said = f"{count} {quota.what} at once are more than {who.name}'s quota of {per}. " \
               f"Send fewer at a time, or {raise_it}."
    else:
        fit = "" if count == 1 else f" leaves no room for {count} more"
        said = f"{who.name} has used its quota of {per}" + (fit or "") + \
               f". Retry in {seconds} s, or {raise_it}."
    return QuotaExceeded(said, quota.setting, seconds)


_CHARGED: contextvars.ContextVar[tuple[Quotas, Identity] | None] = contextvars.ContextVar(
    "mindgraph_quota_charged", default=None)


def charge_to(quotas: Quotas, who: Identity) -> None:
    """Charge what the rest of this context does (and the threads that copy it) to ``who``:
    its LLM and embedding calls and the documents it creates. For a context that ends with
    its request (an ASGI request's task); elsewhere use ``charged_to``. The local identity
    is not charged."""
    if who.is_local:
        return
    _CHARGED.set((quotas, who))
    guard_calls(quotas.guard(who))


@contextlib.contextmanager
def charged_to(quotas: Quotas, who: Identity) -> Iterator[None]:
    """``charge_to`` for the duration of a block."""
    if who.is_local:
        yield
        return
    charged = _CHARGED.set((quotas, who))
    guarded = guard_calls(quotas.guard(who))
    try:
        yield
    finally:
        release_guard(guarded)
        _CHARGED.reset(charged)


def take_documents(count: int) -> None:
    """Take ``count`` new documents from the charged identity's daily quota (QuotaExceeded,
    taking none, when they do not fit); nothing outside a charged context."""
    charged = _CHARGED.get()
    if charged is not None:
        quotas, who = charged
        quotas.charge(quotas.documents, who, count)


def require_llm_call() -> None:
    """QuotaExceeded when the charged identity has no LLM call left this hour (nothing is
    taken: the calls themselves are); nothing outside a charged context. For work that
    runs after the request is answered (a rescan); a write reserves its calls instead."""
    charged = _CHARGED.get()
    if charged is not None:
        quotas, who = charged
        quotas.charge(quotas.llm_calls, who, record=False)


@contextlib.contextmanager
def llm_calls_reserved(count: int) -> Iterator[None]:
    """Take ``count`` LLM calls of the charged identity now (QuotaExceeded, none taken, when
    they do not fit) for the block's compile to use; those it did not use are given back
    at its end (reserve.py). Nothing outside a charged context."""
    reserved = reserve_llm_calls(count)
    try:
        with spending(reserved):
            yield
    finally:
        give_back(reserved)


def reserve_llm_calls(count: int) -> Reserved | None:
    """``count`` LLM calls of the charged identity taken now (QuotaExceeded, none taken,
    when they do not fit), for compiles that run in turns of their own (``spending``, then
    ``give_back`` once); None outside a charged context."""
    charged = _CHARGED.get()
    ids = [] if charged is None else charged[0].charge(charged[0].llm_calls, charged[1], count)
    return Reserved(ids, charged[0].ledger) if ids else None     # type: ignore[index]


@contextlib.contextmanager
def spending(reserved: Reserved | None) -> Iterator[None]:
    """The block's LLM calls use ``reserved`` first."""
    if reserved is None:
        yield
        return
    token = RESERVED.set(reserved)
    try:
        yield
    finally:
        RESERVED.reset(token)


def give_back(reserved: Reserved | None) -> None:
    """Give back the calls of ``reserved`` not spent (none are left after)."""
    if reserved is None:
        return
    unused = reserved.unused()
    try:
        reserved.ledger.release(unused)
    except MindgraphError as exc:       # kept counted: never more than was allowed
        _LOG.warning("%d reserved LLM calls not given back: %s", len(unused), exc)


__all__ = ["Quota", "Quotas", "charge_to", "charged_to", "give_back", "llm_calls_reserved",
           "require_llm_call", "reserve_llm_calls", "spending", "take_documents"]
