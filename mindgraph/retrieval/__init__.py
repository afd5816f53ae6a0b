"""Retrieval: the multilingual analyzer, BM25 keyword search, metrics and benchmark loaders.

    analyzer  one tokenizer for every language (words, CJK bigrams, code tokens)
    bm25      incremental BM25 over SciPy sparse matrices
    keyword   KeywordIndex: sections + pages, combined page ranking, persistence
    explain   snippets and why a hit matched
    metrics   hit@k, recall@k, MRR@k, nDCG@k
    datasets  BEIR and JSONL question loaders
"""

from .analyzer import analyze
from .explain import SearchResult, explain
from .keyword import KeywordHit, KeywordIndex, KeywordParams, open_keyword_index

__all__ = ["KeywordHit", "KeywordIndex", "KeywordParams", "SearchResult", "analyze", "explain",
           "open_keyword_index"]
