"""bench/bench_fusion.py: keyword-index variants are built over the same pages and fused."""

import importlib.util
import subprocess
import sys
from pathlib import Path

from mindgraph.page.parse import parse_page
from mindgraph.retrieval.hybrid import HybridRetriever, SearchOptions
from mindgraph.retrieval.keyword import KeywordIndex

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_fusion.py"
KEYWORD_ONLY = SearchOptions(use_vector=False, graph_boost=False, expansion=False)


def _module():
    spec = importlib.util.spec_from_file_location("bench_fusion", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _retriever() -> HybridRetriever:
    texts = {"Zebra.md": "# Zebra\n\nStriped animals of the plains.",
             "Horses.md": "# Horses\n\nA zebra is a wild relative of the horse."}
    pages = {path: parse_page(text, path) for path, text in texts.items()}
    return HybridRetriever(pages, KeywordIndex.build(pages.values()), None, None)


def _ranked(retriever: HybridRetriever, query: str) -> list[str]:
    return [r.page for r in retriever.search(query, KEYWORD_ONLY, use_cache=False).results]


def test_a_keyword_variant_ranks_with_its_own_params_over_the_same_pages():
    bench, base = _module(), _retriever()
    assert _ranked(base, "zebra")[0] == "Zebra.md"          # the title counts 3 times
    untitled = bench.variant(base, {}, {"title": 0.0})
    assert untitled.keyword.params.title == 0.0 and untitled.pages is base.pages
    assert _ranked(untitled, "zebra") == ["Horses.md"]      # the title no longer counts
    assert bench.variant(base, {}).keyword is base.keyword  # no variant: the same index


def test_an_unknown_keyword_param_is_a_usage_error_naming_it(tmp_path):
    run = subprocess.run([sys.executable, str(SCRIPT), "-C", str(tmp_path), "--keyword",
                          "x=k2:1.0"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "unknown KeywordParams ['k2']" in run.stderr and "k1" in run.stderr
    assert "Traceback" not in run.stderr
