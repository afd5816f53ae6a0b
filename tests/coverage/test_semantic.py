"""`mindgraph coverage --semantic`: units covered by docstrings close to a wiki section.

Fast tests use the deterministic hashing embedder and the embedded store in a temporary
workspace; one slow test uses the real local MiniLM model on a paraphrase.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.coverage.report import measure_coverage
from mindgraph.coverage.semantic import (
    DEFAULT_THRESHOLD,
    common_entries,
    find_semantic_links,
    pack,
    unit_entries,
    words_of,
)
from mindgraph.coverage.units import Symbol, Unit, discover_units
from mindgraph.page.parse import parse_page
from mindgraph.providers.embedding.hashing import HashingEmbedder
from mindgraph.vectors.chunking import chunker_for

HASHING = "embedding:\n  provider: hashing\n"
BILLING = """---
title: Billing
---
How the shop is paid.

## Sending invoices
Every month we render each invoice as a PDF document and email it to the customer.
Overdue invoices trigger payment reminders by email.

## Warehouse
Parcels leave the warehouse at noon and couriers collect them.
"""
INVOICES_TEXT = ("Render each invoice as a PDF document and email it to the customer.\n"
                 "send reminders: Email payment reminders for overdue invoices.")
CODE = {
    "shop/invoices.py": '"""Render each invoice as a PDF document and email it to the customer.'
                        '"""\n\ndef send_reminders():\n    """Email payment reminders for overdue '
                        'invoices.\n\n    Details nobody reads.\n    """\n',
    "shop/geometry.py": '"""Convex hulls and polygon areas of shapes, in floating point."""\n\n'
                        'def hull_area(points):\n    """Area of the convex hull around the '
                        'points."""\n',
    # Names that echo the wiki, but not one docstring: never a semantic link.
    "shop/nodoc.py": "def render_invoice_pdf():\n    pass\n\ndef email_customer():\n    pass\n",
    "shop/orders.py": '"""Take orders from the web shop."""\n',
}
THRESHOLD = 0.6


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace (hashing embedder, embedded store) with a two-page wiki and a codebase."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Billing.md").write_text(BILLING, encoding="utf-8")
    (tmp_path / "wiki" / "Architecture.md").write_text(
        "# Architecture\n\nOrders come in through shop/orders.py.\n", encoding="utf-8")
    for rel, text in CODE.items():
        path = tmp_path / "code" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(HASHING, encoding="utf-8")
    return tmp_path


def run(workspace: Path, *args: str):
    return CliRunner().invoke(cli, ["coverage", str(workspace / "code"), "-C", str(workspace),
                                    *args])


def embed(workspace: Path) -> None:
    result = CliRunner().invoke(cli, ["embed", "-C", str(workspace)])
    assert result.exit_code == 0, result.output


def units_by_id(data: dict) -> dict[str, dict]:
    return {u["unit"]: u for u in data["units"]}


def expected_similarity() -> float:
    """The cosine of the invoices module's text and the "Sending invoices" chunk, by hand."""
    provider = HashingEmbedder()
    page = parse_page(BILLING, "Billing.md")
    chunk = next(c for c in chunker_for(provider).chunk_page(page)
                 if c.section_id == "sending-invoices")
    return float(provider.embed_queries([INVOICES_TEXT])[0]
                 @ provider.embed_documents([chunk.text])[0])


def test_unit_covered_only_with_semantic_and_similarity_reported(workspace):
    assert_semantic_scenario(workspace)


@pytest.mark.pg
def test_semantic_links_from_pgvector(workspace, pg_dsn, monkeypatch):
    (workspace / "mindgraph.yml").write_text(
        HASHING + "store:\n  backend: pgvector\n  table: mg_test_semantic\n", encoding="utf-8")
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    try:
        assert_semantic_scenario(workspace)
    finally:
        import psycopg

        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mg_test_semantic")


def assert_semantic_scenario(workspace: Path) -> None:
    """Embed the wiki, then check coverage without and with --semantic."""
    embed(workspace)
    plain = run(workspace, "--json")
    assert plain.exit_code == 0, plain.output
    before = units_by_id(json.loads(plain.stdout))
    assert not before["shop/invoices.py"]["covered"]
    assert "semantic" not in before["shop/invoices.py"]
    assert before["shop/orders.py"]["covered"]                      # by its path

    result = run(workspace, "--semantic", "--semantic-threshold", str(THRESHOLD), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    after = units_by_id(data)
    invoices = after["shop/invoices.py"]
    assert invoices["covered"] and invoices["semantic_only"] and invoices["mentions"] == 0
    best = invoices["semantic"][0]
    assert (best["page"], best["section"]) == ("Billing.md", "sending-invoices")
    assert best["similarity"] == pytest.approx(expected_similarity(), abs=1e-4)
    assert best["similarity"] >= THRESHOLD
    assert all(link["similarity"] >= THRESHOLD for link in invoices["semantic"])
    assert not after["shop/geometry.py"]["covered"]                 # unrelated docstrings
    assert "semantic" not in after["shop/geometry.py"]
    assert (data["covered"], data["total"]) == (before_covered(before) + 1, 4)
    assert data["semantic"] == {"model_version": "hashing:v1:256", "threshold": THRESHOLD,
                                "covered_semantic_only": 1}


def before_covered(units: dict[str, dict]) -> int:
    return sum(1 for u in units.values() if u["covered"])


def test_text_report_marks_semantic_links(workspace):
    embed(workspace)
    result = run(workspace, "--semantic-threshold", str(THRESHOLD))   # implies --semantic
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("shop/invoices.py"))
    assert lines[row].split()[:3] == ["shop/invoices.py", "semantic", "0"]
    similarity = f"{expected_similarity():.2f}"
    assert lines[row + 1].strip() == f"~ Billing.md#sending-invoices ({similarity})"
    geometry = next(line for line in lines if line.startswith("shop/geometry.py"))
    assert geometry.split()[1] == "NO"
    assert "2/4 modules covered (50.0%), 2 uncovered." in result.stdout
    assert (f"~ semantic link: cosine >= {THRESHOLD:g} with hashing:v1:256; 1 modules covered "
            f"by semantic links alone.") in result.stdout


def test_units_without_docstrings_never_get_semantic_links(workspace):
    embed(workspace)
    mg = Mindgraph(load_settings(workspace))
    report = mg.coverage(workspace / "code", semantic_threshold=0.0)   # anything goes...
    mg.close()
    by_id = {u.unit.id: u for u in report.units}
    assert by_id["shop/nodoc.py"].semantic == ()                       # ...but not this
    assert not by_id["shop/nodoc.py"].covered
    assert by_id["shop/geometry.py"].semantic                          # threshold 0 links it


def test_not_embedded_is_a_usage_error_naming_the_fix(workspace):
    result = run(workspace, "--semantic")
    assert result.exit_code == 2
    assert "holds no vectors of hashing:v1:256" in result.output
    assert "Run `mindgraph embed` first" in result.output


def test_vectors_of_another_model_are_never_compared(workspace):
    (workspace / "mindgraph.yml").write_text(HASHING + "  dimension: 64\n", encoding="utf-8")
    embed(workspace)
    (workspace / "mindgraph.yml").write_text(HASHING, encoding="utf-8")   # now 256 dimensions
    result = run(workspace, "--semantic")
    assert result.exit_code == 2
    assert "no vectors of hashing:v1:256" in result.output
    assert "has vectors of hashing:v1:64" in result.output


def test_pages_missing_from_the_store_are_noted(workspace):
    embed(workspace)
    (workspace / "wiki" / "Later.md").write_text("# Later\n\nWritten after the embed.\n",
                                                 encoding="utf-8")
    result = run(workspace, "--semantic", "--semantic-threshold", str(THRESHOLD), "--json")
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert len(notes) == 1 and "1 wiki pages have no vectors of hashing:v1:256 (Later.md)" \
        in notes[0] and "run `mindgraph embed`" in notes[0]


def test_baseline_says_when_semantic_settings_differ(workspace, tmp_path):
    embed(workspace)
    saved = tmp_path / "baseline.json"
    assert run(workspace, "--save", str(saved)).exit_code == 0
    result = run(workspace, "--semantic-threshold", str(THRESHOLD), "--baseline", str(saved),
                 "--json")
    assert result.exit_code == 0, result.output
    changed = json.loads(result.stdout)["baseline"]["semantic_changed"]
    assert changed == {"baseline": None, "now": {"model_version": "hashing:v1:256",
                                                 "threshold": THRESHOLD}}
    text = run(workspace, "--semantic-threshold", str(THRESHOLD), "--baseline", str(saved))
    assert "the baseline was measured with no semantic links, this run with semantic links " \
           f"at {THRESHOLD} with hashing:v1:256" in text.stdout


def test_a_mentioned_unit_is_not_semantic_only():
    unit = Unit("shop/orders.py", "module", "shop/orders.py", docstring="Take orders.")
    page = parse_page("# A\n\nsee shop/orders.py\n", "A.md")
    report = measure_coverage([unit], [page], semantic={unit.id: [("B.md", "lead", 0.8)]},
                              semantic_model="m:1:2", semantic_threshold=0.7)
    item = report.units[0]
    assert item.covered and not item.semantic_only and item.mentions == 1
    assert item.to_dict()["semantic"] == [{"page": "B.md", "section": "lead",
                                           "similarity": 0.8}]
    assert report.covered_semantic_only == 0


def test_unit_text_is_docstrings_and_symbol_names(workspace):
    units = {u.id: u for u in discover_units(workspace / "code")}
    assert "\n".join(unit_entries(units["shop/invoices.py"])) == INVOICES_TEXT
    assert unit_entries(units["shop/nodoc.py"]) == []
    assert words_of("parse_page") == "parse page"
    assert words_of("LinkResolver") == "Link Resolver"
    assert words_of("HTTPServer") == "HTTP Server"


def test_boilerplate_shared_by_many_units_is_left_out():
    register = Symbol("register", "function", 9, "Add this command to the CLI group.")
    units = [Unit(f"cli/{name}.py", "module", f"cli/{name}.py",
                  symbols=(Symbol(f"{name}_command", "function", 3, f"Run {name}."), register))
             for name in ("stats", "serve", "check")]
    bare = Unit("cli/bare.py", "module", "cli/bare.py", symbols=(register,))
    common = common_entries(units + [bare], at_least=3)
    assert common == {"register: Add this command to the CLI group."}
    assert unit_entries(units[0], common) == ["stats command: Run stats."]
    assert unit_entries(bare, common) == []          # only boilerplate: no text of its own


def test_pack_keeps_every_piece_within_the_limit():
    entries = ["a" * 10, "b" * 10, "c" * 10, "d" * 50]
    assert pack(entries, [10, 10, 10, 50], 25) == ["a" * 10 + "\n" + "b" * 10, "c" * 10,
                                                   "d" * 50]
    assert pack(entries[:2], [10, 10], 100) == ["a" * 10 + "\n" + "b" * 10]


def test_a_long_unit_is_split_so_its_matching_part_is_seen(workspace):
    embed(workspace)
    filler = "".join(f'def step_{i}():\n    """Rotate gear number {i} of the lathe clockwise.'
                     f'"""\n' for i in range(12))
    (workspace / "code" / "shop" / "invoices.py").write_text(
        '"""Machine tools."""\n' + filler + 'def mail_invoice():\n    """Render each invoice '
        'as a PDF document and email it to the customer."""\n', encoding="utf-8")
    units = [u for u in discover_units(workspace / "code") if u.id == "shop/invoices.py"]
    provider = HashingEmbedder(max_tokens=40)            # same model_version, short texts
    mg = Mindgraph(load_settings(workspace))
    store = mg.vector_store()
    try:
        links = find_semantic_links(units, provider, store, THRESHOLD)
        whole = provider.embed_queries(["\n".join(unit_entries(units[0]))])[0]
        best_whole = store.query(whole, 1, provider.model_version)[0].score
    finally:
        mg.close()
    assert best_whole < THRESHOLD                        # one diluted vector would miss it
    assert links.links["shop/invoices.py"][0][:2] == ("Billing.md", "sending-invoices")


@pytest.mark.slow
def test_local_model_links_a_paraphrase(tmp_path):
    """MiniLM links a docstring to a section that says the same thing in other words."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Payments.md").write_text(
        "# Payments\n\n## Refunds\nWhen a customer wants their money back, support returns the "
        "charge to the card they paid with. Refunds older than ninety days need a manager's "
        "approval.\n\n## Shipping\nParcels leave the warehouse every weekday at noon; the "
        "courier collects them and sends a tracking number.\n", encoding="utf-8")
    code = tmp_path / "code"
    code.mkdir()
    (code / "reimburse.py").write_text(
        '"""Refunds: give shoppers their cash back on the card used to pay."""\n\n'
        'def issue_refund(order):\n    """Reverse a purchase; after three months a supervisor '
        'must sign off."""\n', encoding="utf-8")
    (code / "passwords.py").write_text(
        '"""Hash passwords with a random salt and check a login attempt against the stored '
        'hash."""\n', encoding="utf-8")
    assert CliRunner().invoke(cli, ["embed", "-C", str(tmp_path)]).exit_code == 0
    result = CliRunner().invoke(cli, ["coverage", str(code), "-C", str(tmp_path), "--semantic",
                                      "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # the default routes Japanese and Chinese to USE; this English code meets MiniLM's vectors
    assert data["semantic"]["model_version"] == ("local:routed(*=local:all-MiniLM-L6-v2-w8a8:"
                                                 "384,ja+zh=local:use-multilingual-v3:512):896")
    assert data["semantic"]["threshold"] == DEFAULT_THRESHOLD
    units = units_by_id(data)
    link = units["reimburse.py"]["semantic"][0]
    assert (link["page"], link["section"]) == ("Payments.md", "refunds")
    assert link["similarity"] >= DEFAULT_THRESHOLD
    assert [s["section"] for s in units["reimburse.py"]["semantic"]] == ["refunds"]
    assert not units["passwords.py"]["covered"] and "semantic" not in units["passwords.py"]
    # The words barely overlap: the hashing embedder scores the unrelated module about as high.
    hashing = HashingEmbedder()
    wiki_text = ("Payments\nRefunds\n\nWhen a customer wants their money back, support "
                 "returns the charge to the card they paid with.")
    section = hashing.embed_documents([wiki_text])[0]
    refund = "Refunds: give shoppers their cash back on the card used to pay."
    password = "Hash passwords with a random salt and check a login attempt against the hash."
    overlap = hashing.embed_queries([refund, password]) @ section
    assert overlap[0] < 0.5 and abs(overlap[0] - overlap[1]) < 0.2
    assert np.isfinite(overlap).all()
