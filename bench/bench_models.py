"""Offline embedding models side by side: retrieval on every question set, speed and size.

    python bench/bench_models.py --workspace minilm=WS1 --workspace use=WS2
    python bench/bench_models.py --workspace minilm=WS1 --workspace use=WS2 --sets dev,xl-ja
    python bench/bench_models.py --speed 300 --models all-MiniLM-L6-v2,use-multilingual-v3 --sets ""

Each WS is a workspace whose mindgraph.yml points ``paths.wiki`` at the Obsidian Help vault
and sets the model under test (``embedding.model`` or ``embedding.languages``); the bench
embeds what is missing first. For every workspace and question set this runs
``mindgraph bench <set> -C WS --methods keyword,vector,hybrid --json`` (the sets: dev,
held-out, the cross-lingual rows ``--cross-lingual ja|zh|en`` of both, SciFact) and prints
hit@1 / R@5 / MRR@10 (SciFact: nDCG@10) and MRR@10 per question language, one row per
model and method, so the command that made each figure is the README's.

``--speed N``: the same N vault sections (en+ja+zh, seed 0, each model's own chunks of the
same pages) embedded by each model in ``--models``, interleaved slice by slice so every model
sees the same load: sections/s (wall), CPU ms a section;
query CPU ms (the dev questions, one at a time, median); and each workspace's store size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
DEV = CORPORA / "obsidian-help-queries.dev.jsonl"
HELDOUT = ROOT / "bench" / "questions" / "obsidian-help-heldout.jsonl"
# name → (questions, extra arguments of `mindgraph bench`)
SETS = {
    "dev": (DEV, []), "heldout": (HELDOUT, []),
    "xl-ja": (DEV, ["--cross-lingual", "ja"]), "xl-ja-heldout": (HELDOUT, ["--cross-lingual", "ja"]),
    "xl-zh": (DEV, ["--cross-lingual", "zh"]), "xl-zh-heldout": (HELDOUT, ["--cross-lingual", "zh"]),
    "xl-en": (DEV, ["--cross-lingual", "en"]), "xl-en-heldout": (HELDOUT, ["--cross-lingual", "en"]),
    "scifact": (CORPORA / "scifact", []),
}
MINDGRAPH = Path(sys.executable).with_name("mindgraph")


def run_set(workspace: Path, name: str, methods: str) -> dict:
    """`mindgraph bench` of one set over one workspace, its JSON answer."""
    queries, extra = SETS[name]
    command = [str(MINDGRAPH), "bench", str(queries), "-C", str(workspace), "--methods", methods,
               "--json", *extra]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def row(model: str, name: str, method: dict) -> str:
    """One Markdown table row: the overall figures and MRR@10 per question language."""
    o = method["overall"]
    if name == "scifact":
        overall = f"nDCG@10 {o['ndcg10']:.3f}"
    else:
        overall = f"{o['hit1']:.3f} / {o['recall5']:.3f} / {o['mrr10']:.3f}"
    langs = " / ".join(f"{lang} {s['mrr10']:.3f}" for lang, s in sorted(method["by_lang"].items()))
    return (f"| {name} | {model} | {method['method']} | {overall} | {langs} | "
            f"{o['latency_median_ms']:.1f} |")


def quality(workspaces: dict[str, Path], sets: list[str], methods: str) -> list[str]:
    """Table rows for every set, model and method (models interleaved set by set)."""
    lines = ["| set | model | method | hit@1 / R@5 / MRR@10 | MRR@10 by language | p50 ms |",
             "|---|---|---|---|---|---|"]
    for name in sets:
        for model, workspace in workspaces.items():
            started = time.perf_counter()
            answer = run_set(workspace, name, methods)
            for method in answer["methods"]:
                lines.append(row(model, name, method))
            print(f"  {name} {model}: {time.perf_counter() - started:.0f} s", file=sys.stderr,
                  flush=True)
    return lines


def speed(models: list[str], sample: int, repeats: int) -> list[str]:
    """Sections/s and CPU ms per section and per query, the models interleaved."""
    import numpy as np

    from bench_e5 import sample_sections
    from mindgraph.providers.embedding.factory import LOCAL_MODELS, _load_local
    from mindgraph.retrieval.datasets import load_questions

    import tempfile

    state = Path(tempfile.mkdtemp(prefix="bench-models-"))     # the rewritten ONNX graphs
    providers = {m: _load_local(LOCAL_MODELS[m], state) for m in models}
    # Each model cuts the same pages into its own chunks; the same random picks of each.
    texts = {m: [t for _, t in sample_sections(p, sample)] for m, p in providers.items()}
    for provider, some in zip(providers.values(), texts.values()):
        provider.embed_documents(some[:4])                   # load the model
    rates = interleaved(providers, texts, 25, repeats)
    questions = [q.query for q in load_questions(DEV)]
    lines = ["| model | sections/s (wall) | CPU ms a section | tokens a section | query CPU ms |",
             "|---|---|---|---|---|"]
    for m, provider in providers.items():
        cpu = []
        for q in questions:
            c0 = time.process_time()
            provider.embed_queries([q])
            cpu.append(1000 * (time.process_time() - c0))
        tokens = float(np.mean(provider.count_tokens(texts[m])))
        lines.append(f"| {m} | {statistics.median(rates[m]['rate']):.0f} | "
                     f"{statistics.median(rates[m]['cpu_ms']):.1f} | {tokens:.0f} | "
                     f"{statistics.median(cpu):.2f} |")
    return lines


def interleaved(providers: dict, texts: dict[str, list[str]], slice_size: int,
                repeats: int) -> dict[str, dict[str, list[float]]]:
    """Per model, sections/s (wall) and CPU ms a section per repeat: slice i of every model's
    own texts in turn, the order rotating, so all models meet the same load."""
    names = list(providers)
    out = {name: {"rate": [], "cpu_ms": []} for name in names}
    slices = max(len(t) for t in texts.values()) // slice_size + 1
    for repeat in range(repeats):
        wall = dict.fromkeys(names, 0.0)
        cpu = dict.fromkeys(names, 0.0)
        for s in range(slices):
            shift = (repeat * slices + s) % len(names)
            for name in names[shift:] + names[:shift]:
                piece = texts[name][s * slice_size:(s + 1) * slice_size]
                if piece:
                    c0, w0 = time.process_time(), time.perf_counter()
                    providers[name].embed_documents(piece)
                    wall[name] += time.perf_counter() - w0
                    cpu[name] += time.process_time() - c0
        for name in names:
            out[name]["rate"].append(len(texts[name]) / wall[name])
            out[name]["cpu_ms"].append(1000 * cpu[name] / len(texts[name]))
    return out


def store_sizes(workspaces: dict[str, Path]) -> list[str]:
    """Bytes of each workspace's vector store files (the vault's, not SciFact's)."""
    lines = []
    for model, workspace in workspaces.items():
        vectors = workspace / "state" / "vectors"
        files = [f for f in vectors.rglob("*") if f.is_file()] if vectors.is_dir() else []
        lines.append(f"{model}: {sum(f.stat().st_size for f in files) / 1e6:.1f} MB in {vectors}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", action="append", default=[], metavar="LABEL=DIR",
                        help="a workspace embedded (or to embed) with the model under test")
    parser.add_argument("--sets", default=",".join(SETS),
                        help=f"comma-separated question sets of {', '.join(SETS)}")
    parser.add_argument("--methods", default="keyword,vector,hybrid")
    parser.add_argument("--speed", type=int, default=0, metavar="N",
                        help="also time N vault sections per model (0: skip)")
    parser.add_argument("--models", default="all-MiniLM-L6-v2,multilingual-e5-small,"
                                            "use-multilingual-v3")
    parser.add_argument("--repeats", type=int, default=2)
    shared_corpora.add_option(parser)
    args = parser.parse_args()
    workspaces = {}
    for item in args.workspace:
        label, _, folder = item.partition("=")
        if not folder or not (Path(folder) / "mindgraph.yml").is_file():
            parser.error(f"--workspace {item}: give LABEL=DIR, DIR holding a mindgraph.yml")
        workspaces[label] = Path(folder)
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        parser.error(f"--sets: unknown {', '.join(unknown)}; choose from {', '.join(SETS)}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    if workspaces and sets:
        print("\n".join(quality(workspaces, sets, args.methods)))
        print("\n".join(store_sizes(workspaces)))
    if args.speed:
        print("\n".join(speed(args.models.split(","), args.speed, args.repeats)))
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
