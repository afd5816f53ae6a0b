"""bench/bench_question_misses.py: a page's terms are counted as BM25 indexes them."""

from mindgraph.page.parse import parse_page
from bench_script_support import load_script


def test_page_terms_count_the_title_headings_and_text_in_the_pages_language():
    misses = load_script("bench_question_misses")
    page = parse_page("# 页面预览\n\n将光标悬停在内部链接上预览页面。\n\n## 编辑模式\n\n按住 Ctrl。\n",
                      "zh/插件/页面预览.md")
    terms = misses.page_terms(page)
    assert terms["预览"] >= 2 and terms["悬停"] == 1 and terms["编辑"] >= 1
    assert "在" not in terms        # a function word, as in the index
