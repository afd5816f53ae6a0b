"""Does one tenant's upload of notes dense with headings hold another tenant's writes? (a real
`mindgraph serve` per checkout, two tenants)

    python bench/bench_heading_uploads.py --tree /work/main --tree .
    python bench/bench_heading_uploads.py --tree . --files 5 --headings 90000 --under 9000

For each --tree (a checkout with its own .venv): a workspace of two tenants (alice of acme,
carol of globex) served behind their tokens. Alice uploads (POST /upload) 50 notes of a
line, five times (what grouping small notes in one turn keeps cheap), then --files notes of
--headings headings each (``## kettle N`` and a word: 1.9 MB at 90,000, the attack), then
--files notes of --under headings (under compile.max_note_headings, 10,000: what an upload
that is allowed costs); 0.5 s into each, Carol creates a note (POST /documents, the write
lane's other tenant). Then GET /page of one of Alice's notes of --under headings.

Reported per checkout: each upload's seconds and status, Carol's POST /documents seconds and
status meanwhile (it waits for the upload's turn on the write lane: all of it, or one note),
and GET /page's seconds and bytes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from programs import add_tree_option, checkouts  # noqa: E402
from two_tenants import tokens, two_tenant_server  # noqa: E402

TOKENS = tokens("bench-head")


def note(headings: int) -> bytes:
    return ("# Headings\n\n" + "".join(f"## kettle {i}\nword\n"
                                       for i in range(headings))).encode()


def carol_writes(base: str, answers: list) -> None:
    """Carol's one POST /documents, 0.5 s from now: (seconds, status)."""
    time.sleep(0.5)
    headers = {"Authorization": f"Bearer {TOKENS['carol']}"}
    started = time.perf_counter()
    answer = httpx.post(f"{base}/documents", headers=headers, timeout=600,
                        json={"title": f"Carol {time.time_ns()}", "text": "The kettle.\n"})
    answers.append((time.perf_counter() - started, answer.status_code))


def upload_while_carol_writes(base: str, alice: httpx.Client, files: int,
                              headings: int, tag: str) -> tuple[str, httpx.Response]:
    answers: list = []
    writer = threading.Thread(target=carol_writes, args=(base, answers))
    writer.start()
    data = note(headings)
    started = time.perf_counter()
    upload = alice.post("/upload", files=[("files", (f"{tag}{i}.md", data))
                                          for i in range(files)])
    took = time.perf_counter() - started
    writer.join()
    carol_s, carol_status = answers[0]
    line = (f"  alice POST /upload {files} × {headings:,} headings ({len(data) / 1e6:.1f} MB "
            f"each): {took:.2f} s, {upload.status_code}; carol's POST /documents meanwhile "
            f"{carol_s:.2f} s, {carol_status}")
    return line, upload


def measure(tree: Path, files: int, headings: int, under: int) -> list[str]:
    with two_tenant_server(tree, TOKENS, timeout_s=900) as (base, alice):
        took, statuses = [], set()
        for round_ in range(5):
            small = [("files", (f"small{round_}-{i}.md",
                                f"# S{round_} {i}\n\nThe kettle {i}.\n".encode()))
                     for i in range(50)]
            started = time.perf_counter()
            statuses.add(alice.post("/upload", files=small).status_code)
            took.append(time.perf_counter() - started)
        small_line = (f"  alice POST /upload 50 notes of a line: median of 5 "
                      f"{statistics.median(took):.2f} s (first {took[0]:.2f} s), "
                      f"{sorted(statuses)}")
        attack, refused = upload_while_carol_writes(base, alice, files, headings, "bomb")
        allowed, upload = upload_while_carol_writes(base, alice, files, under, "dense")
        lines = [f"{tree}", small_line, attack]
        if refused.status_code != 200:
            lines.append(f"    {refused.json().get('detail', '')[:160]}")
        lines.append(allowed)
        if upload.status_code == 200:
            page = upload.json()["documents"][0]["page"]
            started = time.perf_counter()
            shown = alice.get("/page", params={"page": page})
            lines.append(f"  alice GET /page ({under:,} headings): "
                         f"{time.perf_counter() - started:.2f} s, {shown.status_code}, "
                         f"{len(shown.content) / 1e6:.1f} MB")
        return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_option(parser)
    parser.add_argument("--files", type=int, default=5, help="notes in each upload")
    parser.add_argument("--headings", type=int, default=90_000,
                        help="headings of each note of the first upload (the attack)")
    parser.add_argument("--under", type=int, default=9_000,
                        help="headings of each note of the second (under the cap)")
    args = parser.parse_args()
    for tree in checkouts(args.tree):
        print("\n".join(measure(tree, args.files, args.headings, args.under)), flush=True)


if __name__ == "__main__":
    main()
