"""Links between similar pages, typed by an LLM or, offline, marked as similarity alone.

Candidates: each page's title and summary (or lead) embedded as a document, searched in the
vector store like a query; the other pages whose best chunk is at least the threshold, best
first, ``links_per_page`` at most. Each model has its own cosine scale, so the threshold is
per model (providers/embedding/cutoffs.py): ``enrich.thresholds`` (a part of a model's name →
cut-off) first, then the measured defaults (``LINK_CUTOFFS``: e5, use-multilingual), then
``enrich.link_threshold`` (0.7, MiniLM's). Under ``embedding.languages`` a page's text is
searched by its language's model, and the hits are held to that model's cut-off (a Japanese
page's USE or e5 neighbours to USE's or e5's, an English page's MiniLM ones to MiniLM's). A
pair is judged once, from the smaller path.

With an LLM, pairs go ``pair_batch`` to a call; the answer is JSON ``{"pairs": [{"n", "kind",
"direction"}]}``, ``kind`` one of the typed relations or SKIP, ``direction`` "a_to_b" or
"b_to_a" (related: either). A pair missing from an answer or with an unknown kind fails alone
and is asked again next run; a verdict is remembered by the pair's source hashes and the judge
(records.pair_key), so a re-run on unchanged pages makes no call. Offline, every candidate is an
untyped ``related`` link judged by ``similarity:<embedding model>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Mapping

from ..errors import ConfigError
from ..page.model import TYPED_RELATIONS, Page
from ..providers.embedding.cutoffs import LINK_CUTOFFS, cutoff_of_vector, per_member
from ..providers.llm.answers import json_list
from ..stores.base import is_second_vector
from .batching import batches
from .records import EnrichRecords, InferredLink, pair_key, without_summary

PROMPT_VERSION = "v1"
PAGE_CHARS = 1200
CANDIDATES = 40          # chunks asked of the store per page before grouping by page
SKIP = "SKIP"
SYSTEM = (
    "You judge how two wiki pages relate. For every numbered pair (A and B) answer the one "
    "relation that holds: reference (A cites B for a detail), depends_on (A needs B to make "
    "sense or to work), extends (A builds on B with more), related (same subject, neither "
    "builds on the other), supersedes (A replaces B, which is older), contradicts (they "
    "disagree on a fact), or SKIP (only similar words). direction says which way it reads: "
    "a_to_b (A <kind> B) or b_to_a (B <kind> A). Answer with JSON only, no prose: "
    '{"pairs": [{"n": 1, "kind": "extends", "direction": "a_to_b"}, {"n": 2, "kind": "SKIP"}]}')


@dataclass(frozen=True)
class Candidate:
    """Two pages whose vectors are similar (``a`` < ``b``)."""

    a: str
    b: str
    score: float


def thresholds_for(embedder: Any, default: float, thresholds: Mapping[str, float]
                   ) -> dict[str, float]:
    """Each model of ``embedder`` (several under ``embedding.languages``) → its cut-off."""
    for part, value in thresholds.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not 0.0 <= value <= 1.0:
            # load_settings checks it first, naming the file and line (config.py); this is
            # for settings made another way
            raise ConfigError(f"'enrich.thresholds.{part}' is {value!r}; give a cosine "
                              f"between 0 and 1, e.g. {{e5: 0.9}}.")
    return {name: float(value) for name, value in
            per_member(embedder, LINK_CUTOFFS, default, thresholds).items()}


def page_text(page: Page) -> str:
    """What stands for the page when its neighbours are searched: its title and text, without
    a leading summary (so writing one does not change the page's neighbours)."""
    body = without_summary(page.indexed_body)
    return f"{page.title}\n\n{body[:PAGE_CHARS]}"


def similar_pairs(pages: Mapping[str, Page], embedder: Any, store: Any,
                  threshold: float | Mapping[str, float], per_page: int,
                  progress: Any = None) -> list[Candidate]:
    """Every pair of pages at least ``threshold`` similar, each once, best first per page;
    ``threshold`` a number, or (``thresholds_for``) each model's, which a hit needs of the
    model that embedded the page's text."""
    paths = sorted(pages)
    best: dict[tuple[str, str], float] = {}
    model = embedder.model_version
    # second vectors (embedding.cross_lingual_vectors) are left out below: asked for twice as
    # many, a page still sees about as many chunks of its own model as without them
    asked = CANDIDATES * (2 if getattr(embedder, "second_route", None) is not None else 1)
    for start in range(0, len(paths), 32):
        chunk = paths[start:start + 32]
        vectors = embedder.embed_documents([page_text(pages[p]) for p in chunk])
        for path, vector in zip(chunk, vectors):
            cut = threshold if isinstance(threshold, (int, float)) else \
                cutoff_of_vector(embedder, vector, threshold)
            scores: dict[str, float] = {}
            for hit in store.query(vector, asked, model):
                if hit.page != path and hit.page in pages and hit.score >= cut \
                        and not is_second_vector(hit.chunk_id):
                    scores[hit.page] = max(scores.get(hit.page, 0.0), float(hit.score))
            for other, score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:per_page]:
                key = (path, other) if path < other else (other, path)
                best[key] = max(best.get(key, 0.0), score)
        if progress is not None:
            progress(len(chunk))
    return [Candidate(a, b, round(s, 4)) for (a, b), s in sorted(best.items())]


def offline_links(candidates: Iterable[Candidate], model_version: str) -> list[InferredLink]:
    """Untyped ``related`` links from similarity alone."""
    judge = f"similarity:{model_version}"
    return [InferredLink(c.a, c.b, "related", c.score, judge) for c in candidates]


@dataclass
class Judged:
    """The links the model made, the pairs it failed on (with why) and the calls it took."""

    links: list[InferredLink]
    failed: list[tuple[Candidate, str]]
    calls: int = 0
    remembered: int = 0


def judge_pairs(candidates: list[Candidate], pages: Mapping[str, Page], llm: Any,
                records: EnrichRecords, batch: int, progress: Any = None,
                audience: Callable[[Candidate], Hashable] = lambda cand: None) -> Judged:
    """Type each candidate with ``llm``, asking only for pairs not remembered, a call's pairs
    of one ``audience``."""
    judge = f"llm:{llm.identity}:{PROMPT_VERSION}"
    result = Judged([], [])
    todo = []
    for cand in candidates:
        verdict = records.recall(pair_key(judge, pages[cand.a], pages[cand.b]))
        if verdict is None:
            todo.append(cand)
            continue
        result.remembered += 1
        _add(result.links, cand, verdict, judge)
    for chunk in batches(todo, batch, audience):
        prompt = "\n\n".join(
            f"Pair {n}:\nA ({c.a}): {page_text(pages[c.a])}\n---\nB ({c.b}): "
            f"{page_text(pages[c.b])}" for n, c in enumerate(chunk, 1))
        result.calls += 1
        try:
            verdicts = parse_verdicts(llm.complete(SYSTEM, prompt, max_tokens=60 * len(chunk)
                                                   + 200), len(chunk), llm.identity)
        except Exception as exc:  # noqa: BLE001 (a provider error fails this batch only)
            result.failed.extend((c, f"{type(exc).__name__}: {exc}") for c in chunk)
            continue
        for n, cand in enumerate(chunk, 1):
            verdict = verdicts.get(n)
            if isinstance(verdict, str):
                result.failed.append((cand, verdict))
                continue
            records.remember(pair_key(judge, pages[cand.a], pages[cand.b]), verdict)
            _add(result.links, cand, verdict, judge)
        if progress is not None:
            progress(len(chunk))
    return result


def _add(links: list[InferredLink], cand: Candidate, verdict: dict[str, Any], judge: str) -> None:
    kind = verdict["kind"]
    if kind == SKIP:
        return
    source, target = (cand.b, cand.a) if verdict.get("direction") == "b_to_a" else (cand.a, cand.b)
    links.append(InferredLink(source, target, kind, cand.score, judge))


def parse_verdicts(answer: str, count: int, who: str) -> dict[int, dict[str, Any] | str]:
    """Pair number → verdict ({kind, direction}) or why that pair's answer was unusable;
    every pair's reason when the answer is not the JSON asked for."""
    try:
        items = json_list(answer, "pairs")
    except ValueError as exc:
        why = f"{who} answered no pairs JSON ({exc}: {answer[:80]!r})"
        return {n: why for n in range(1, count + 1)}
    out: dict[int, dict[str, Any] | str] = {
        n: f"{who} gave no verdict for it" for n in range(1, count + 1)}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("n"), int) \
                or not 1 <= item["n"] <= count:
            continue
        kind = item.get("kind")
        if kind != SKIP and kind not in TYPED_RELATIONS:
            out[item["n"]] = f"{who} answered kind {kind!r}, not one of " \
                             f"{', '.join(TYPED_RELATIONS)} or SKIP"
            continue
        direction = item.get("direction") if item.get("direction") in ("a_to_b", "b_to_a") \
            else "a_to_b"
        out[item["n"]] = {"kind": kind, "direction": direction}
    return out


__all__ = ["Candidate", "Judged", "judge_pairs", "offline_links", "parse_verdicts",
           "similar_pairs", "thresholds_for"]
