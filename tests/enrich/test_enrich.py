"""`mindgraph enrich` end to end: real notes of the Obsidian Help vault, real stores, the LLM on a
local fake of OpenAI's API (the only thing faked)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.enrich.links import SYSTEM as LINK_SYSTEM
from mindgraph.enrich.summaries import SYSTEM as SUMMARY_SYSTEM
from mindgraph.fsutil import sha256_file
from mindgraph.graph.build import EXTRACTED, INFERRED
from mindgraph.graph.export import to_json
from mindgraph.page.markdown import split_frontmatter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))
from fake_openai import FakeOpenAI  # noqa: E402 (the fake OpenAI server of the search tests)

SYNC = Path("/work/shared/corpora/obsidian-help/en/Obsidian Sync")
NOTES = ["Introduction to Obsidian Sync.md", "Set up Obsidian Sync.md", "Security and privacy.md",
         "Plans and storage limits.md", "Local and remote vaults.md", "Headless Sync.md",
         "Switch to Obsidian Sync.md", "Collaborate on a shared vault.md"]
# a note of headings only: its summary callout is the offline compiler's outline
OUTLINE = "# Sync checklist\n\n## Before you start\n\n## Set up\n\n## Troubleshoot\n"
CONFIG = ("embedding:\n  provider: hashing\n  dimension: 256\n"
          "enrich:\n  link_threshold: 0.3\n")


def run(root: Path, *args: str):
    result = CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def vault(tmp_path) -> Path:
    """A compiled, embedded workspace of eight Obsidian Sync notes and one outline note."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in NOTES:
        shutil.copy(SYNC / name, raw / name)
    (raw / "Sync checklist.md").write_text(OUTLINE, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(CONFIG, encoding="utf-8")
    run(tmp_path, "ingest")
    run(tmp_path, "embed")
    return tmp_path


def frontmatter(root: Path, page: str) -> dict:
    return yaml.safe_load(split_frontmatter((root / "wiki" / page).read_text("utf-8"))[0])


def raw_hashes(root: Path) -> dict[str, str]:
    return {p.name: sha256_file(p) for p in (root / "raw").iterdir()}


def test_offline_similarity_makes_untyped_related_links_everywhere_links_show(vault):
    before = raw_hashes(vault)
    data = json.loads(run(vault, "enrich", "--judge", "offline", "--json").output)
    assert data["judge"] == "similarity:hashing:v1:256" and data["llm_calls"] == 0
    assert data["links"] > 0 and set(data["links_by_kind"]) == {"related"}
    assert data["summaries_needed"] == 1 and data["summaries_written"] == 0
    assert "needs an LLM" in data["notes"][0]
    assert raw_hashes(vault) == before                                  # raw/ untouched
    source = data["pages_changed"][0]
    entry = frontmatter(vault, source)["inferred_links"][0]
    assert entry["kind"] == "related" and entry["judge"].startswith("similarity:")
    # the graph, `links`, the graph export the dashboard reads
    kg = Mindgraph.open(vault).graph()
    edges = [d for _, _, k, d in kg.graph.edges(keys=True, data=True) if k == "inferred:related"]
    assert edges and all(d["kind"] == INFERRED and d["typed"] is False for d in edges)
    assert all(d["confidence"] < 0.9 for d in edges)          # below any extracted link
    out = json.loads(run(vault, "links", source, "--json").output)
    assert any(link["syntax"] == "inferred" and link["judge"].startswith("similarity:")
               for link in out["outgoing"])
    assert any(e["key"] == "inferred:related" for e in to_json(kg)["edges"])
    assert "(inferred related, cosine 0." in run(vault, "links", source).output
    # a second run finds the same and recompiles nothing; a forced recompile keeps them
    again = json.loads(run(vault, "enrich", "--judge", "offline", "--json").output)
    assert again["pages_changed"] == [] and again["links"] == data["links"]
    run(vault, "ingest", "--force")
    assert frontmatter(vault, source)["inferred_links"][0] == entry


def test_dry_run_plans_without_writing(vault):
    data = json.loads(run(vault, "enrich", "--judge", "offline", "--dry-run", "--json").output)
    assert data["dry_run"] and data["links"] > 0
    assert not (vault / ".mindgraph" / "enrich.json").exists()
    assert all("inferred_links" not in frontmatter(vault, f"{n}") for n in NOTES)


def llm_config(root: Path, url: str) -> None:
    (root / "mindgraph.yml").write_text(
        CONFIG + f"compile:\n  provider: openai\n  model: gpt-4.1-mini\n  base_url: {url}\n",
        encoding="utf-8")


def answer(prompt: str) -> str:
    """Summaries for every page asked; every pair typed 'extends', A to B."""
    if prompt.startswith("Page: "):
        pages = [line[6:] for line in prompt.split("\n") if line.startswith("Page: ")]
        return json.dumps({"summaries": [{"page": p, "summary": f"What {p} covers, in brief."}
                                         for p in pages]})
    pairs = prompt.count("Pair ")
    return json.dumps({"pairs": [{"n": n, "kind": "extends", "direction": "a_to_b"}
                                 for n in range(1, pairs + 1)]})


def test_the_llm_writes_summaries_and_types_links_once(vault, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(answer) as fake:
        llm_config(vault, fake.base_url)
        data = json.loads(run(vault, "enrich", "--json").output)
        calls = len(fake.requests)
        assert data["summaries_written"] == 1 and data["links_by_kind"] == {
            "extends": data["links"]}
        # one summary batch, pairs ten to a call; the offline pages are recompiled offline
        assert all(r["body"]["messages"][0]["content"] in (SUMMARY_SYSTEM, LINK_SYSTEM)
                   for r in fake.requests)
        assert data["llm_calls"] == calls == 1 + -(-data["candidates"] // 10)
        # DESIGN: summaries at 0.2, link typing at 0.1 (one temperature served both)
        heat = {r["body"]["messages"][0]["content"]: r["body"]["temperature"]
                for r in fake.requests}
        assert heat == {SUMMARY_SYSTEM: 0.2, LINK_SYSTEM: 0.1}
        again = json.loads(run(vault, "enrich", "--json").output)
        assert len(fake.requests) == calls            # nothing asked again
        assert again["remembered"] == data["candidates"] and again["pages_changed"] == []
    page = (vault / "wiki" / "Sync checklist.md").read_text("utf-8")
    assert "> [!summary]\n> What Sync checklist.md covers, in brief." in page
    assert frontmatter(vault, "Sync checklist.md")["summary_by"].startswith("llm:openai:")
    get = run(vault, "get", "Sync checklist").output
    assert "What Sync checklist.md covers" in get
    kg = Mindgraph.open(vault).graph()
    typed = [d for _, _, k, d in kg.graph.edges(keys=True, data=True) if k == "inferred:extends"]
    assert typed and all(d["typed"] and d["judge"].startswith("llm:openai:") for d in typed)


def test_a_bad_answer_fails_those_pages_only(vault, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for n in range(6):        # six outline notes: two summary batches (5 + 1)
        (vault / "raw" / f"Checklist {n}.md").write_text(OUTLINE.replace("Sync checklist",
                                                                         f"Checklist {n}"))
    run(vault, "ingest")

    def garbled_first_batch(prompt: str) -> str:
        if prompt.startswith("Page: ") and prompt.count("Page: ") == 5:
            return "Here are your summaries!"
        return answer(prompt)

    with FakeOpenAI(garbled_first_batch) as fake:
        llm_config(vault, fake.base_url)
        result = CliRunner().invoke(cli, ["-C", str(vault), "enrich", "--no-links"])
    assert result.exit_code == 0, result.output
    failed = [line for line in result.output.split("\n") if line.startswith("summary failed")]
    assert len(failed) == 5 and all("no summaries JSON" in line for line in failed)
    assert "7 page(s) lack one; wrote 2" in result.output


def test_a_persons_link_outranks_an_inferred_one(vault):
    # pages the notes already link are similar too: no inferred link is made on top of those
    data = json.loads(run(vault, "enrich", "--judge", "offline", "--json").output)
    assert data["already_linked"] > 0
    for page in data["pages_changed"]:
        own = {link["page"] for link in json.loads(run(vault, "links", page, "--json").output)[
            "outgoing"] if link["syntax"] != "inferred"}
        inferred = {e["to"] for e in frontmatter(vault, page)["inferred_links"]}
        assert not own & inferred, page
    kg = Mindgraph.open(vault).graph()
    for u, v, k, d in kg.graph.edges(keys=True, data=True):
        if d["kind"] == INFERRED and k.startswith("inferred:"):
            assert not any(dd["kind"] == EXTRACTED for dd in kg.graph[u][v].values()), (u, v)
    extracted = [d["confidence"] for *_, d in kg.graph.edges(keys=True, data=True)
                 if d["kind"] == EXTRACTED]
    inferred = [d["confidence"] for _, _, k, d in kg.graph.edges(keys=True, data=True)
                if k.startswith("inferred:")]
    assert inferred and min(extracted) > max(inferred)


def test_enriched_links_count_in_the_graph_boost(vault):
    run(vault, "enrich", "--judge", "offline")
    mg = Mindgraph.open(vault)
    retriever = mg.hybrid_retriever()
    kg = mg.graph()
    u, v, _ = next((u, v, k) for u, v, k in kg.graph.edges(keys=True)
                   if k.startswith("inferred:") and not any(
                       d["kind"] == EXTRACTED for d in kg.graph[u][v].values())
                   and not (kg.graph.has_edge(v, u) and any(
                       d["kind"] == EXTRACTED for d in kg.graph[v][u].values())))
    linked = retriever._linked_within({u, v})
    assert v in linked[u] and u in linked[v]


def test_rest_links_mark_inferred_ones(vault):
    from fastapi.testclient import TestClient

    from mindgraph.documents.records import document_id
    from mindgraph.serve.rest import create_app

    data = json.loads(run(vault, "enrich", "--judge", "offline", "--json").output)
    source = data["pages_changed"][0]
    client = TestClient(create_app(Mindgraph.open(vault)), base_url="http://127.0.0.1:8765")
    links = client.get(f"/documents/{document_id(source)}/links").json()
    inferred = [e for e in links["outbound"] if e["origin"] == "inferred"]
    assert inferred and inferred[0]["judge"].startswith("similarity:") and inferred[0]["score"]


@pytest.mark.pg
def test_offline_links_from_pgvector(vault, pg_dsn, monkeypatch):
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    (vault / "mindgraph.yml").write_text(CONFIG + "store:\n  backend: pgvector\n  table: "
                                                  "mg_test_enrich\n", encoding="utf-8")
    try:
        run(vault, "embed")
        pg = json.loads(run(vault, "enrich", "--judge", "offline", "--json").output)
    finally:
        import psycopg

        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mg_test_enrich")
    (vault / "mindgraph.yml").write_text(CONFIG, encoding="utf-8")
    embedded = json.loads(run(vault, "enrich", "--judge", "offline", "--dry-run",
                              "--json").output)
    assert pg["links"] > 0 and pg["links"] == embedded["links"]


def test_links_need_vectors(tmp_path):
    (tmp_path / "raw").mkdir()
    shutil.copy(SYNC / NOTES[0], tmp_path / "raw" / NOTES[0])
    (tmp_path / "mindgraph.yml").write_text(CONFIG, encoding="utf-8")
    run(tmp_path, "ingest")
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "enrich", "--judge", "offline"])
    assert result.exit_code != 0 and "mindgraph embed" in result.output
    assert "Traceback" not in result.output


def test_ingest_runs_the_offline_stage_when_switched_on(vault):
    note = vault / "raw" / NOTES[0]
    note.write_text(note.read_text("utf-8") + "\nOne more line about syncing vaults.\n", "utf-8")
    off = json.loads(run(vault, "ingest", "--json").output)
    assert "enrich" not in off                                   # off by default
    (vault / "mindgraph.yml").write_text(CONFIG + "  after_ingest: true\n", encoding="utf-8")
    note.write_text(note.read_text("utf-8") + "\nAnd another.\n", "utf-8")
    on = json.loads(run(vault, "ingest", "--json").output)
    assert on["enrich"]["judge"].startswith("similarity:") and on["enrich"]["llm_calls"] == 0
    assert on["enrich"]["links"] > 0
    assert frontmatter(vault, on["enrich"]["pages_changed"][0])["inferred_links"]
