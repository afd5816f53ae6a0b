"""LlamaIndex's BM25Retriever (bm25s + PyStemmer) over the vault, run in its own venv by
bench/bench_peers.py: ``python llamaindex_peer.py VAULT STATE QUESTIONS OUT``.

As its documentation builds it: SimpleDirectoryReader over the .md files (LlamaIndex's markdown
reader splits a note at its headers), the default SentenceSplitter, BM25Retriever.from_defaults
with an English stemmer. It keeps no index of files, so a re-run with nothing changed reads and
splits the vault and builds the index again; the index is persisted and loaded back for the
queries. Prints JSON: timings and each question's first pages.
"""

import json
import sys
import time
from pathlib import Path

import Stemmer
from llama_index.core import SimpleDirectoryReader
from llama_index.core.node_parser import SentenceSplitter
from llama_index.retrievers.bm25 import BM25Retriever

NODES_PER_QUERY = 60   # chunks asked for, so that ten distinct pages come back


def build(vault: Path, state: Path) -> None:
    documents = SimpleDirectoryReader(str(vault), recursive=True, required_exts=[".md"]).load_data()
    nodes = SentenceSplitter().get_nodes_from_documents(documents)
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=NODES_PER_QUERY,
                                            stemmer=Stemmer.Stemmer("english"), language="english")
    retriever.persist(str(state))


def main() -> None:
    vault, state, questions, out = (Path(a) for a in sys.argv[1:5])
    started = time.perf_counter()
    build(vault, state)
    index_s = time.perf_counter() - started
    started = time.perf_counter()
    build(vault, state)
    noop_s = time.perf_counter() - started
    retriever = BM25Retriever.from_persist_dir(str(state))
    retriever.retrieve("warm up")
    answers = {}
    for q in json.loads(questions.read_text()):
        started = time.perf_counter()
        nodes = retriever.retrieve(q["query"])
        ms = (time.perf_counter() - started) * 1e3
        pages = []
        for n in nodes:
            page = Path(n.node.metadata["file_path"]).resolve().relative_to(vault.resolve()).as_posix()
            if page not in pages:
                pages.append(page)
        answers[q["id"]] = {"pages": pages[:10], "ms": ms}
    out.write_text(json.dumps({"index_s": index_s, "noop_s": noop_s, "answers": answers,
                               "notes": "no incremental update: the no-op re-index reads and "
                                        "splits the vault and builds BM25 again"}))


if __name__ == "__main__":
    main()
