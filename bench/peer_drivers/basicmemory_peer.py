"""Basic Memory over the vault, run in its own venv (Python 3.12+) by bench/bench_peers.py:
``python basicmemory_peer.py VAULT STATE QUESTIONS OUT``.

Its own CLI indexes (``bm project add NAME VAULT --default``, which indexes the folder, and
``bm reindex -p NAME`` for the re-run with nothing changed; both timed with the CLI's start-up),
its MCP tool ``search_notes`` answers, called in-process as its CLI's ``bm tool search-notes``
does. Semantic search is off (``BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED=false``): its fastembed
model is downloaded at first use, and without it Basic Memory says "search is keyword-only"
(SQLite FTS5). Its index pass writes frontmatter into notes that lack it
(``ensure_frontmatter_on_sync``), so VAULT must be a copy. Writes JSON: timings and each
question's first pages.
"""

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

PROJECT = "vault"


def timed_cli(*args: str) -> float:
    cli = Path(sys.executable).with_name("basic-memory")
    started = time.perf_counter()
    subprocess.run([str(cli), *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


async def answer(questions: list[dict]) -> dict:
    from basic_memory.mcp.tools import search_notes

    async def pages_for(query: str) -> list[str]:
        found = await search_notes(query=query, project=PROJECT, output_format="json",
                                   page_size=10)
        results = found.get("results", []) if isinstance(found, dict) else []
        pages = []
        for r in results:
            page = r.get("file_path")
            if page and page not in pages:
                pages.append(page)
        return pages

    await pages_for("warm up")
    answers = {}
    for q in questions:
        started = time.perf_counter()
        pages = await pages_for(q["query"])
        answers[q["id"]] = {"pages": pages[:10], "ms": (time.perf_counter() - started) * 1e3}
    return answers


def main() -> None:
    vault, state, questions, out = (Path(a) for a in sys.argv[1:5])
    os.environ["BASIC_MEMORY_CONFIG_DIR"] = str(state)
    os.environ["BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED"] = "false"
    before = {p: p.read_bytes() for p in vault.rglob("*.md")}
    index_s = timed_cli("project", "add", PROJECT, str(vault), "--default")
    rewritten = sum(1 for p, text in before.items() if p.read_bytes() != text)
    noop_s = timed_cli("reindex", "-p", PROJECT)
    start_s = timed_cli("--version")
    answers = asyncio.run(answer(json.loads(questions.read_text())))
    out.write_text(json.dumps({
        "index_s": index_s, "noop_s": noop_s, "cli_start_s": start_s, "answers": answers,
        "rewritten_notes": rewritten,
        "notes": "keyword-only (SQLite FTS5): semantic search needs a fastembed model "
                 "downloaded at first use; index times include the CLI's start-up"}))


if __name__ == "__main__":
    main()
