"""Benchmarks of retrieval quality and speed (`mindgraph bench`)."""
