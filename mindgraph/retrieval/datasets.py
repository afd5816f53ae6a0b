"""Loaders for retrieval benchmarks: BEIR folders and JSONL question files.

BEIR layout: ``corpus.jsonl`` ({"_id", "title", "text"}), ``queries.jsonl`` ({"_id", "text"})
and ``qrels/<split>.tsv`` (query-id, corpus-id, score, with a header line).
Question files: one JSON object a line with ``id``, ``query`` and ``relevant`` (ids, best
first), plus optional ``lang``, ``intent`` and ``kind``.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputError, NotFoundError
from ..fsutil import open_regular, read_bytes


@dataclass(frozen=True)
class BeirDocument:
    """One corpus document."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class BeirDataset:
    """A BEIR split: documents, queries (id → text) and graded judgements."""

    documents: tuple[BeirDocument, ...]
    queries: dict[str, str]
    qrels: dict[str, dict[str, float]]


@dataclass(frozen=True)
class Question:
    """One benchmark question with the ids that answer it (best first)."""

    id: str
    query: str
    relevant: tuple[str, ...]
    lang: str = ""
    intent: str = ""
    kind: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        if path.exists():    # /dev/null, a fifo, a folder where a file belongs
            raise InputError(f"{path} is not a regular file. Give a JSONL file (one JSON "
                             f"object per line).")
        raise NotFoundError(f"{path} does not exist. Check the dataset folder.")
    # bytes, split on any line ending (\n, \r\n, \r), so a bad byte is named by its line
    for number, raw in enumerate(read_bytes(path).splitlines(), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}:{number}: not UTF-8 text. Save the file as UTF-8.") \
                from exc
        if line.strip():
            yield number, _json_object(path, number, line)


def _json_object(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{number}: not valid JSON ({exc.msg}). "
                         f"Each line must be one JSON object.") from exc
    if not isinstance(value, dict):
        raise InputError(f"{path}:{number}: expected a JSON object.")
    return value


def load_beir(folder: str | Path, split: str = "test") -> BeirDataset:
    """Load a BEIR folder; only queries that have judgements in ``split`` are kept."""
    folder = Path(folder)
    missing = [name for name in ("corpus.jsonl", "queries.jsonl")
               if not (folder / name).exists()]
    if len(missing) == 2:
        raise NotFoundError(f"{folder} is not a BEIR folder: it has no corpus.jsonl and no "
                            f"queries.jsonl. Give a BEIR folder (corpus.jsonl, queries.jsonl, "
                            f"qrels/<split>.tsv) or a JSONL question file.")
    documents = tuple(BeirDocument(str(d["_id"]), str(d.get("title") or ""),
                                   str(d.get("text") or ""))
                      for _, d in _jsonl(folder / "corpus.jsonl"))
    qrels: dict[str, dict[str, float]] = {}
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        raise NotFoundError(f"{qrels_path} does not exist. Pick a split that has a qrels file.")
    with io.TextIOWrapper(open_regular(qrels_path), encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle, delimiter="\t"):
            if len(row) < 3 or not row[2].strip().lstrip("-").isdigit():
                continue  # the header line
            qrels.setdefault(row[0], {})[row[1]] = float(row[2])
    queries = {str(q["_id"]): str(q["text"]) for _, q in _jsonl(folder / "queries.jsonl")
               if str(q["_id"]) in qrels}
    return BeirDataset(documents, queries, qrels)


def load_questions(path: str | Path) -> list[Question]:
    """Load a JSONL question file, checking each line has id, query and relevant."""
    path = Path(path)
    out = []
    for number, value in _jsonl(path):
        missing = [k for k in ("id", "query", "relevant") if k not in value]
        if missing:
            raise InputError(f"{path}:{number}: missing {', '.join(missing)}. Each question "
                             f"needs id, query and relevant.")
        known = {"id", "query", "relevant", "lang", "intent", "kind"}
        out.append(Question(str(value["id"]), str(value["query"]),
                            tuple(str(r) for r in value["relevant"]),
                            str(value.get("lang", "")), str(value.get("intent", "")),
                            str(value.get("kind", "")),
                            {k: v for k, v in value.items() if k not in known}))
    return out
