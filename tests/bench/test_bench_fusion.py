"""bench/bench_fusion.py: keyword-index variants are built over the same pages and fused."""

from mindgraph.page.parse import parse_page
from mindgraph.retrieval.hybrid import HybridRetriever
from mindgraph.retrieval.keyword import KeywordIndex
from bench_script_support import BENCH, KEYWORD_ONLY, load_script, usage_error

SCRIPT = BENCH / "bench_fusion.py"


def _module():
    return load_script("bench_fusion")


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
    said = usage_error(SCRIPT, tmp_path, "--keyword", "x=k2:1.0")
    assert "unknown KeywordParams ['k2']" in said and "k1" in said
