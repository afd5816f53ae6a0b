"""Offline MiniLM speed: variants of the local provider side by side, interleaved in one run.

    python bench/bench_minilm_speed.py                       # default variants, a table
    python bench/bench_minilm_speed.py --repeats 9 --json    # more repeats, one JSON document
    python bench/bench_minilm_speed.py --variants before,w8a8-b1-2x1
    python bench/bench_minilm_speed.py --list                # every variant and what it is

Texts: a fixed random sample (seed 0) of the chunks that ``chunker_for(provider)`` makes of
the Obsidian Help vault's English pages (``--langs en,ja,zh`` for all languages), exactly as
``mindgraph embed`` would embed them.

Method, for a machine shared with other heavy jobs: the sample is cut into slices of
``--slice`` texts; every slice is embedded by every variant in turn (order rotated per slice),
so all variants see the same load over time. Per variant and repeat, chunks/s = texts / total
time; the table shows the median over repeats, and the median of per-slice speed ratios
against the first variant (paired, so load swings cancel out). CPU ms per chunk (all threads)
says how much work a variant needs regardless of waiting.

Agreement: each variant's vectors of the whole sample against the ``before`` vectors (the
provider as it was: packaged graph, fp32 products), min and mean cosine. Batch independence:
the longest 24 texts embedded in one batch call vs one at a time, min cosine.

Measured on the 2-core AMD EPYC (AVX512-VNNI) dev machine, onnxruntime 1.32, 5 repeats:

    variant (see --list)   en: chunks/s  x before  cos min/mean    en+ja+zh: chunks/s  cos min
    before                       91.1     1.00     1      / 1                77.0    1
    fp32-b1-2x1 (exact)         137.1     1.51     1      / 1               118.4    1
    dq-batch-b1-2x1             322.9     3.57     0.9865 / 0.9951          274.3    0.9740
    w8a8-b1-2x1 = default       279.7     3.13     0.9950 / 0.9985          237.6    0.9927
    w8a8u8-b1-2x1 (non-VNNI)    185.5     2.08     same vectors             158.5    0.9927

(en: mean 105.9 tokens, load 1.4-1.8; en+ja+zh: mean 129.7 tokens, load 0.8-1.7. Under
load 2.8-4.5, before the SkipLayerNormalization change: before 50.0/s, w8a8-b1-2x1 130.7/s.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.page.vault import load_vault  # noqa: E402
from mindgraph.providers.embedding.local import (LocalMiniLMProvider, create_session,  # noqa: E402
                                                 default_model_path)
from mindgraph.providers.embedding.minilm_graph import has_vnni, prepare_model  # noqa: E402
from mindgraph.vectors.chunking import chunker_for  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()


class TokenBudgetProvider(LocalMiniLMProvider):
    """Batches cut by padded tokens (rows x longest) instead of a fixed count."""

    def __init__(self, budget: int, **kwargs: Any):
        super().__init__(**kwargs)
        self._budget = budget

    def _batches(self, ids: list[list[int]]) -> list[list[int]]:
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        batches: list[list[int]] = []
        for i in order:
            # Longest first: the batch's width is its first row's length.
            if batches and (len(batches[-1]) + 1) * len(ids[batches[-1][0]]) <= self._budget:
                batches[-1].append(i)
            else:
                batches.append([i])
        return batches


@dataclass(frozen=True)
class Variant:
    """One way to run the model: a graph, a batching rule and a threading layout."""

    name: str
    about: str
    graph: str                  # packaged, fp32 (exact rewrites), w8a8, w8a8-u8, dq-batch
    batch: int = 1
    runs: int = 2               # batches run at once (Python threads)
    intra: int = 1              # onnxruntime threads inside one run
    spin: bool = False
    budget: int = 0             # token budget per batch instead of ``batch`` (0: off)
    sln: bool = False           # keep onnxruntime's SkipLayerNormalization fusion


VARIANTS = [
    Variant("before", "the provider as it was: packaged graph, batch 8, 1 run x 2 threads",
            "packaged", batch=8, runs=1, intra=2, sln=True),
    Variant("before-spin", "as before with spinning pool threads", "packaged", batch=8,
            runs=1, intra=2, spin=True, sln=True),
    Variant("before-nosln", "as before without the SkipLayerNormalization fusion",
            "packaged", batch=8, runs=1, intra=2),
    Variant("packaged-b8-2x1-sln", "packaged graph, batch 8, 2 runs x 1 thread, SLN fused",
            "packaged", batch=8, sln=True),
    Variant("packaged-b8-2x1", "packaged graph, batch 8, 2 runs x 1 thread", "packaged",
            batch=8),
    Variant("fp32-b1-2x1", "exact rewrites (no NaN guard, fused GELU), batch 1, 2 runs x 1",
            "fp32", batch=1),
    Variant("fp32-b8-2x1", "exact rewrites, batch 8, 2 runs x 1", "fp32", batch=8),
    Variant("dq-batch-b8-2x1", "quantize_dynamic (one activation scale per batch), batch 8",
            "dq-batch", batch=8),
    Variant("dq-batch-b1-2x1", "quantize_dynamic, batch 1 (so scale per text)", "dq-batch",
            batch=1),
    Variant("w8a8-b1-1x2", "per-token int8 products, batch 1, 1 run x 2 threads", "w8a8",
            batch=1, runs=1, intra=2),
    Variant("w8a8-b1-2x1", "per-token int8 products, batch 1, 2 runs x 1 (the default)",
            "w8a8", batch=1),
    Variant("w8a8-b1-2x1-sln", "as w8a8-b1-2x1 with the SLN fusion", "w8a8", batch=1,
            sln=True),
    Variant("w8a8u8-b1-2x1", "as w8a8-b1-2x1 with uint8 weights (the layout used on CPUs "
            "without VNNI; same vectors)", "w8a8-u8", batch=1),
    Variant("w8a8-b4-2x1", "per-token int8, batch 4, 2 runs x 1", "w8a8", batch=4),
    Variant("w8a8-b8-2x1", "per-token int8, batch 8, 2 runs x 1", "w8a8", batch=8),
    Variant("w8a8-b16-2x1", "per-token int8, batch 16, 2 runs x 1", "w8a8", batch=16),
    Variant("w8a8-b32-2x1", "per-token int8, batch 32, 2 runs x 1", "w8a8", batch=32),
    Variant("w8a8-tok1024-2x1", "per-token int8, batches of <= 1024 padded tokens, 2 x 1",
            "w8a8", budget=1024),
    Variant("w8a8-tok2048-2x1", "per-token int8, batches of <= 2048 padded tokens, 2 x 1",
            "w8a8", budget=2048),
    Variant("default", "LocalMiniLMProvider() exactly as shipped", "default"),
]
DEFAULT = ",".join(["before", "before-spin", "before-nosln", "packaged-b8-2x1", "fp32-b1-2x1",
                    "dq-batch-b8-2x1", "dq-batch-b1-2x1", "w8a8-b1-1x2", "w8a8-b1-2x1",
                    "w8a8u8-b1-2x1", "w8a8-b4-2x1", "w8a8-b8-2x1", "w8a8-b32-2x1",
                    "w8a8-tok1024-2x1", "default"])


def sample_texts(langs: list[str], n: int) -> tuple[list[str], list[int]]:
    """``n`` chunk texts of the vault's pages in ``langs`` (seed 0) and their token counts."""
    vault = load_vault(CORPORA / "obsidian-help")
    paths = sorted(p for p in vault.pages if p.split("/", 1)[0] in langs)
    chunks = list(chunker_for(LocalMiniLMProvider()).chunk_pages(vault.pages[p] for p in paths))
    picked = np.random.default_rng(0).choice(len(chunks), min(n, len(chunks)), replace=False)
    return [chunks[i].text for i in picked], [chunks[i].tokens for i in picked]


def dynamic_quantized_model(folder: Path) -> str:
    """onnxruntime's quantize_dynamic on the constant-folded fp32 graph (per-batch scales)."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folded, quantized = folder / "folded.onnx", folder / "dq.onnx"
    options = ort.SessionOptions()
    # Basic level = constant folding only: the weights become fp32 initializers, nothing
    # hardware-specific is baked in.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(prepare_model(default_model_path(), False), options,
                         providers=["CPUExecutionProvider"])
    quantize_dynamic(str(folded), str(quantized), weight_type=QuantType.QInt8,
                     per_channel=True, op_types_to_quantize=["MatMul"])
    return str(quantized)


def build(variant: Variant, models: dict[str, Any]) -> tuple[LocalMiniLMProvider, float]:
    """A provider running ``variant`` (session ready) and its session creation seconds."""
    if variant.graph == "default":
        provider = LocalMiniLMProvider()
        started = time.perf_counter()
        provider._load_session()
        seconds = time.perf_counter() - started
        provider.embed_documents(["warm up"])
        return provider, seconds
    kwargs: dict[str, Any] = {"batch_size": variant.batch, "threads": variant.runs}
    provider = (TokenBudgetProvider(variant.budget, **kwargs) if variant.budget
                else LocalMiniLMProvider(**kwargs))
    if variant.graph == "dq-batch" and "dq-batch" not in models:
        models["dq-batch"] = dynamic_quantized_model(models["tmp"])   # built once, not timed
    started = time.perf_counter()
    path = default_model_path()
    model = {"packaged": lambda: str(path),
             "fp32": lambda: prepare_model(path, False),
             "w8a8": lambda: prepare_model(path, True),
             "w8a8-u8": lambda: prepare_model(path, True, signed_weights=False),
             "dq-batch": lambda: models["dq-batch"]}[variant.graph]()
    provider._session = create_session(model, intra_op_threads=variant.intra,
                                       allow_spinning=variant.spin,
                                       fuse_skip_layer_norm=variant.sln)
    provider._input_names = tuple(i.name for i in provider._session.get_inputs())
    seconds = time.perf_counter() - started
    provider.embed_documents(["warm up"])
    return provider, seconds


def measure(providers: dict[str, LocalMiniLMProvider], texts: list[str], slice_size: int,
            repeats: int) -> dict[str, dict[str, list[float]]]:
    """Interleaved timing: per variant, chunks/s per repeat, CPU ms per chunk, slice ratios."""
    names = list(providers)
    slices = [texts[i:i + slice_size] for i in range(0, len(texts), slice_size)]
    out = {name: {"rate": [], "cpu_ms": [], "ratio": []} for name in names}
    for repeat in range(repeats):
        wall = dict.fromkeys(names, 0.0)
        cpu = dict.fromkeys(names, 0.0)
        for s, piece in enumerate(slices):
            shift = (repeat * len(slices) + s) % len(names)
            slice_wall: dict[str, float] = {}
            for name in names[shift:] + names[:shift]:
                c0, w0 = time.process_time(), time.perf_counter()
                providers[name].embed_documents(piece)
                slice_wall[name] = time.perf_counter() - w0
                cpu[name] += time.process_time() - c0
                wall[name] += slice_wall[name]
            for name in names:
                out[name]["ratio"].append(slice_wall[names[0]] / slice_wall[name])
        for name in names:
            out[name]["rate"].append(len(texts) / wall[name])
            out[name]["cpu_ms"].append(1000 * cpu[name] / len(texts))
    return out


def agreement(providers: dict[str, LocalMiniLMProvider], texts: list[str],
              reference: np.ndarray) -> dict[str, dict[str, float]]:
    """Cosine with the reference vectors, and batch call vs one text at a time."""
    longest = sorted(texts, key=len)[-24:]
    result = {}
    for name, provider in providers.items():
        cosines = (provider.embed_documents(texts) * reference).sum(axis=1)
        together = provider.embed_documents(longest)
        alone = np.vstack([provider.embed_documents([t]) for t in longest])
        result[name] = {"cos_min": float(cosines.min()), "cos_mean": float(cosines.mean()),
                        "batch_vs_alone_min": float((together * alone).sum(axis=1).min())}
    return result


def main() -> int:
    """Run the comparison; print a table or JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--variants", default=DEFAULT, help="comma-separated names (--list)")
    parser.add_argument("--list", action="store_true", help="list the variants and exit")
    parser.add_argument("--langs", default="en", help="vault folders to sample, e.g. en,ja,zh")
    parser.add_argument("--sample", type=int, default=512, help="chunks to embed")
    parser.add_argument("--slice", type=int, default=64, help="texts per interleaved slice")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    by_name = {v.name: v for v in VARIANTS}
    if args.list:
        for v in VARIANTS:
            print(f"{v.name:18s} {v.about}")
        return 0
    chosen = [by_name[n] for n in args.variants.split(",")]
    if chosen[0].name != "before":
        chosen.insert(0, by_name["before"])     # ratios and agreement are against it
    texts, tokens = sample_texts(args.langs.split(","), args.sample)
    with tempfile.TemporaryDirectory() as tmp:
        models: dict[str, Any] = {"tmp": Path(tmp)}
        built = {v.name: build(v, models) for v in chosen}
        providers = {name: provider for name, (provider, _) in built.items()}
        reference = providers["before"].embed_documents(texts)
        agree = agreement(providers, texts, reference)
        load_before = os.getloadavg()[0]
        timing = measure(providers, texts, args.slice, args.repeats)
    report = {
        "sample": {"chunks": len(texts), "langs": args.langs,
                   "mean_tokens": round(float(np.mean(tokens)), 1),
                   "slice": args.slice, "repeats": args.repeats,
                   "cpus": os.cpu_count(), "vnni": has_vnni(), "load_average": [round(load_before, 2),
                                                            round(os.getloadavg()[0], 2)]},
        "variants": [{
            "name": name, "about": by_name[name].about,
            "model_version": providers[name].model_version,
            "chunks_per_s_median": round(statistics.median(timing[name]["rate"]), 1),
            "chunks_per_s_runs": [round(r, 1) for r in timing[name]["rate"]],
            "speedup_vs_before_median": round(statistics.median(timing[name]["ratio"]), 2),
            "cpu_ms_per_chunk_median": round(statistics.median(timing[name]["cpu_ms"]), 2),
            "session_s": round(built[name][1], 2),
            **{k: round(v, 5) for k, v in agree[name].items()},
        } for name in providers],
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    s = report["sample"]
    print(f"{s['chunks']} chunks ({s['langs']}, mean {s['mean_tokens']} tokens), slices of "
          f"{s['slice']}, {s['repeats']} repeats, {s['cpus']} CPUs (VNNI: {s['vnni']}), "
          f"load {s['load_average']}")
    print(f"{'variant':18s} {'chunks/s':>9s} {'x before':>8s} {'cpu ms':>7s} {'load s':>6s} "
          f"{'cos min':>8s} {'cos mean':>8s} {'batch/alone':>11s}")
    for v in report["variants"]:
        print(f"{v['name']:18s} {v['chunks_per_s_median']:9.1f} "
              f"{v['speedup_vs_before_median']:8.2f} {v['cpu_ms_per_chunk_median']:7.2f} "
              f"{v['session_s']:6.2f} {v['cos_min']:8.5f} {v['cos_mean']:8.5f} "
              f"{v['batch_vs_alone_min']:11.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
