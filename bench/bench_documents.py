"""How long the documents API takes to make a change searchable, on the Obsidian Help vault.

    python bench/bench_documents.py            # 883 raw notes, 9 rounds per operation
    python bench/bench_documents.py --rounds 5 --json

A workspace in a temp dir gets the vault (en, ja, zh: 883 notes) as raw/, is compiled once
(offline), and then, in one run and side by side, the in-process REST app times each of:
POST /documents (a new note written, compiled, in the keyword index: searchable when it
returns), PUT /documents/{id} (an overlay: that note recompiled), POST /links (a manual link:
the source note recompiled), and — for comparison — a no-op `mindgraph ingest` of the whole
vault, which every one of them contains (the run reads and hashes every raw note to build the
title index). Medians and the spread (min–max) in ms, with the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)


HERE = Path(__file__).resolve().parent
CORPORA = shared_corpora.corpora()


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    with tempfile.TemporaryDirectory(prefix="mg-bench-docs-") as tmp:
        base = Path(tmp)
        shutil.copytree(CORPORA / "obsidian-help", base / "raw")
        (base / "mindgraph.yml").write_text("embedding: {provider: hashing, dimension: 64}\n")
        mg = Mindgraph.open(base)
        first = _timed(lambda: mg.ingest())
        client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
        anchor = client.get("/documents", params={"limit": 1}).json()["documents"][0]["id"]
        times: dict[str, list[float]] = {k: [] for k in ("create", "overlay", "link",
                                                         "ingest_noop")}
        for i in range(args.rounds):
            made = {}

            def create() -> None:
                response = client.post("/documents", json={
                    "title": f"Bench note {i}", "text": f"Zeppelin number {i} carries trunks."})
                assert response.status_code == 200 and response.json()["searchable"], \
                    response.text
                made.update(response.json())

            times["create"].append(_timed(create))
            times["overlay"].append(_timed(lambda: client.put(
                f"/documents/{made['id']}", json={"tags": [f"round{i}"]}).raise_for_status()))
            times["link"].append(_timed(lambda: client.post("/links", json={
                "from": made["id"], "to": anchor, "kind": "related"}).raise_for_status()))
            times["ingest_noop"].append(_timed(lambda: mg.ingest()))
        hits = client.get("/search", params={"q": "zeppelin number 0"}).json()["results"]
        assert hits and hits[0]["page"].startswith("api-notes/"), hits[:1]
    result = {"notes": 883, "rounds": args.rounds, "first_ingest_ms": round(first),
              "load_average_1m": load,
              "median_ms": {k: round(statistics.median(v), 1) for k, v in times.items()},
              "range_ms": {k: [round(min(v), 1), round(max(v), 1)] for k, v in times.items()}}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"883 raw notes, {args.rounds} rounds, load average {load:.2f} "
              f"(first ingest {first / 1e3:.1f} s)")
        for key, label in (("create", "POST /documents (searchable)"),
                           ("overlay", "PUT /documents/{id}"),
                           ("link", "POST /links"), ("ingest_noop", "no-op ingest")):
            low, high = result["range_ms"][key]
            print(f"  {label:30} median {result['median_ms'][key]:8.1f} ms  "
                  f"({low:.1f}-{high:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
