"""Score completed items against the trunks of the catalog: 0 (serves none) to 3 (squarely
serves one), grouped by trunk, for a morning message.

Items: the wiki's pages whose frontmatter has ``completed`` or ``completed_time`` (what `pull`
files for a note app's item) on or after the day asked, or any objects with ``id``, ``title``,
``content`` and a ``completed`` datetime (a note app adapter's items).

With an LLM, items go ``BATCH`` to a call with the catalog; the answer is JSON ``{"items": [{"n",
"trunk", "score", "reason"}]}``, checked item by item (an unknown trunk or a score outside 0..3
leaves that item to the offline score, saying so). Offline, the item's title and text are
embedded and compared with each trunk's name and description: the best trunk's cosine gives
the score, banded by the model's own scale (``OFFLINE_BANDS``, measured for MiniLM;
providers/embedding/cutoffs.py ``TRIAGE_BANDS`` for the others). Under ``embedding.languages``
an item is embedded by its language's model, and the trunks are embedded by that same model
to be compared with it (vectors of two models are never compared: a Japanese item against
trunks embedded by MiniLM alone scored 0), then banded by that model's bands.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import QuotaExceeded
from ..page.model import Page
from ..page.rawlines import raw_source
from ..providers.embedding.cutoffs import TRIAGE_BANDS, members, per_member, route_of_vector
from ..providers.llm.answers import json_list
from .catalog import Catalog

BATCH = 20
OFFLINE_BANDS = (0.25, 0.4, 0.55)     # cosine at or above each → score 1, 2, 3
TEXT_CHARS = 800
COMPLETED_KEYS = ("completed", "completed_time", "completedTime")
SYSTEM = (
    "You sort a person's finished tasks and notes by the projects they care about now (the "
    "trunks). For every numbered item pick the one trunk it serves most and score how much it "
    "moves that trunk: 3 squarely, 2 clearly, 1 a little, 0 not at all (trunk null). Reason: one "
    "short sentence. Answer with JSON only, no prose: "
    '{"items": [{"n": 1, "trunk": "<trunk name as given>", "score": 2, "reason": "..."}]}')


@dataclass(frozen=True)
class TriageItem:
    """One completed item."""

    id: str
    title: str
    text: str
    completed: dt.datetime
    url: str = ""


@dataclass
class Scored:
    """An item with its trunk (None: none), score, reason and who judged."""

    item: TriageItem
    trunk: str | None
    score: int
    reason: str
    judge: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"id": self.item.id, "title": self.item.title, "url": self.item.url or None,
                "completed": self.item.completed.isoformat(), "trunk": self.trunk,
                "score": self.score, "reason": self.reason, "judge": self.judge}


@dataclass
class TriageReport:
    """Scored items grouped by trunk, best first; items no trunk claims under None."""

    since: dt.date
    catalog: str
    scored: list[Scored] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def groups(self) -> list[tuple[str | None, list[Scored]]]:
        """(trunk, its items by score) in catalog order, then the unclaimed."""
        order: dict[str | None, list[Scored]] = {}
        for s in sorted(self.scored, key=lambda s: (-s.score, s.item.title)):
            order.setdefault(s.trunk if s.score > 0 else None, []).append(s)
        claimed = [(t, items) for t, items in order.items() if t is not None]
        return claimed + ([(None, order[None])] if None in order else [])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"since": self.since.isoformat(), "catalog": self.catalog, "notes": self.notes,
                "items": len(self.scored),
                "trunks": [{"trunk": t, "items": [s.to_dict() for s in items]}
                           for t, items in self.groups()]}

    def markdown(self) -> str:
        """The morning message."""
        lines = [f"# Done since {self.since.isoformat()} ({len(self.scored)} items)", ""]
        for trunk, items in self.groups():
            lines.append(f"## {trunk or 'No trunk'}")
            for s in items:
                link = f"[{s.item.title}]({s.item.url})" if s.item.url else s.item.title
                lines.append(f"- **{s.score}** {link} — {s.reason}")
            lines.append("")
        if not self.scored:
            lines.append("Nothing was completed in that time.")
        return "\n".join(lines).rstrip() + "\n"


def completed_at(value: Any) -> dt.datetime | None:
    """A frontmatter completed value as an aware datetime (a date: its midnight, UTC)."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    if isinstance(value, str) and value.strip():
        try:
            return completed_at(dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def completed_pages(pages: Mapping[str, Page], since: dt.date,
                    problems: list[str] | None = None) -> list[TriageItem]:
    """The pages completed on or after ``since``, oldest first; a completed value that is not
    a time is named in ``problems`` (the page is left out)."""
    start = dt.datetime(since.year, since.month, since.day, tzinfo=dt.timezone.utc)
    out = []
    for path, page in sorted(pages.items()):
        when = next((w for key in COMPLETED_KEYS
                     if (w := completed_at(page.frontmatter.get(key))) is not None), None)
        given = next((k for k in COMPLETED_KEYS if page.frontmatter.get(k)), None)
        if when is None and given is not None and problems is not None:
            problems.append(f"{raw_source(page) or path}: '{given}: "
                            f"{page.frontmatter[given]}' is not a date or time; left out. "
                            f"Write it as YYYY-MM-DD or an ISO 8601 time.")
        if when is not None and when >= start:
            out.append(TriageItem(raw_source(page) or path, page.title,
                                  page.indexed_body[:TEXT_CHARS],
                                  when, str(page.frontmatter.get("url") or "")))
    return sorted(out, key=lambda i: (i.completed, i.id))


def completed_items(items: Iterable[Any], since: dt.date) -> list[TriageItem]:
    """A note app's items (``id``, ``title``, ``content``, ``completed``) completed since."""
    start = dt.datetime(since.year, since.month, since.day, tzinfo=dt.timezone.utc)
    out = []
    for item in items:
        when = completed_at(getattr(item, "completed", None))
        if when is not None and when >= start:
            out.append(TriageItem(str(item.id), str(item.title),
                                  str(getattr(item, "content", ""))[:TEXT_CHARS], when))
    return sorted(out, key=lambda i: (i.completed, i.id))


def score_offline(items: Sequence[TriageItem], catalog: Catalog, embedder: Any,
                  bands: Sequence[float] | None = None) -> list[Scored]:
    """Each item's best trunk by cosine, banded into 0..3 by its model's bands (``bands``:
    these for every model)."""
    if not items:
        return []
    judge = f"similarity:{embedder.model_version}"
    by_model = per_member(embedder, TRIAGE_BANDS, OFFLINE_BANDS) if bands is None else \
        {name: tuple(bands) for name in members(embedder)}
    texts = [f"{t.name}: {t.description}" for t in catalog.trunks]
    docs = np.asarray(embedder.embed_documents([f"{i.title}\n\n{i.text}" for i in items]))
    routed = getattr(embedder, "embed_query_for", None)
    trunks: dict[int, np.ndarray] = {}
    out = []
    for item, doc in zip(items, docs):
        route = route_of_vector(embedder, doc)
        if route not in trunks:       # the trunks by the item's own model
            trunks[route] = np.asarray(
                np.vstack([routed(t, route) for t in texts]) if routed is not None
                else embedder.embed_queries(texts))
        row = trunks[route] @ doc
        best = int(np.argmax(row))
        cosine = float(row[best])
        score = sum(1 for b in by_model[members(embedder)[route]] if cosine >= b)
        trunk = catalog.trunks[best].name if score else None
        out.append(Scored(item, trunk, score, f"cosine {cosine:.2f} with "
                                              f"{catalog.trunks[best].name!r}", judge))
    return out


def score_llm(items: Sequence[TriageItem], catalog: Catalog, llm: Any,
              fallback: Any = None) -> tuple[list[Scored], list[str]]:
    """Each item scored by ``llm``, ``BATCH`` a call; (scored, notes). An item the answer
    leaves unusable is scored by ``fallback(items)`` (offline), and named in the notes."""
    judge = f"llm:{llm.identity}"
    names = {t.name: t for t in catalog.trunks}
    listing = "\n".join(f"- {t.name}: {t.description}" for t in catalog.trunks)
    scored: list[Scored] = []
    notes: list[str] = []
    left: list[TriageItem] = []
    for start in range(0, len(items), BATCH):
        chunk = list(items[start:start + BATCH])
        prompt = f"Trunks:\n{listing}\n\n" + "\n\n".join(
            f"Item {n}: {i.title}\n{i.text}" for n, i in enumerate(chunk, 1))
        try:
            answers = json_list(llm.complete(SYSTEM, prompt, max_tokens=80 * len(chunk) + 200),
                                "items")
        except QuotaExceeded:     # the caller's own limit: said to it, not scored offline
            raise
        except Exception as exc:  # noqa: BLE001 (this batch goes to the offline score)
            notes.append(f"{judge} gave no usable answer for {len(chunk)} item(s) "
                         f"({type(exc).__name__}: {exc}); they are scored offline.")
            left.extend(chunk)
            continue
        got: dict[int, Scored] = {}
        for a in answers:
            if not isinstance(a, dict) or not isinstance(a.get("n"), int) \
                    or not 1 <= a["n"] <= len(chunk):
                continue
            score, trunk = a.get("score"), a.get("trunk")
            if not isinstance(score, int) or not 0 <= score <= 3 \
                    or (score > 0 and trunk not in names):
                continue
            got[a["n"]] = Scored(chunk[a["n"] - 1], trunk if score else None, score,
                                 str(a.get("reason") or "").strip()[:200], judge)
        for n, item in enumerate(chunk, 1):
            if n in got:
                scored.append(got[n])
            else:
                left.append(item)
                notes.append(f"{judge} gave no valid score for {item.title!r}; scored offline.")
    if left and fallback is not None:
        scored.extend(fallback(left))
    return scored, notes


__all__ = ["Scored", "TriageItem", "TriageReport", "completed_items", "completed_pages",
           "score_llm", "score_offline"]
