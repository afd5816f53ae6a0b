# One place for the commands a person or CI runs. Each target sets itself up from scratch.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install install-test demo test bench clean

# pip runs --quiet (its resolver output drowns the demo's), so say first that it takes a while
INSTALLING = @echo "Installing mindgraph and its dependencies into $(VENV) (a few minutes the first time; pip is quiet meanwhile)…"

$(BIN)/python:
	$(INSTALLING)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

install-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

# The main job on the embedded defaults: no API key, no server.
demo: install
	$(BIN)/mindgraph ingest
	$(BIN)/mindgraph check
	$(BIN)/mindgraph stats
	$(BIN)/mindgraph embed
	$(BIN)/mindgraph search --hybrid "how does mindgraph resolve an ambiguous link?" --limit 3
	$(BIN)/mindgraph context "I am changing how wikilinks are resolved"
	$(BIN)/mindgraph coverage mindgraph --uncovered
	@echo "mindgraph is installed in $(BIN): run '. $(BIN)/activate' to put it on PATH (the README's commands)."

test: install-test
	$(BIN)/python -m pytest

# Retrieval quality on the development and held-out questions and SciFact (embeds the corpora
# into bench-out/ once), then the ingest figures. See the README's Benchmarks section.
CORPORA ?= ../shared/corpora
bench: install-test
	mkdir -p bench-out/oh
	printf 'paths:\n  wiki: $(abspath $(CORPORA))/obsidian-help\n  state: state\n' > bench-out/oh/mindgraph.yml
	$(BIN)/mindgraph bench $(CORPORA)/obsidian-help-queries.dev.jsonl -C bench-out/oh --methods keyword,vector,hybrid
	$(BIN)/mindgraph bench bench/questions/obsidian-help-heldout.jsonl -C bench-out/oh --methods keyword,vector,hybrid
	$(BIN)/mindgraph bench $(CORPORA)/scifact -C bench-out/oh --methods keyword,vector,hybrid
	$(BIN)/python bench/bench_ingest.py

clean:
	rm -rf .mindgraph .pytest_cache
