"""The compiler writes the provenance record; pages of the older shape (top-level `sources`
and `compiler`) stay readable by everything that reads a page's raw note."""

from __future__ import annotations

import yaml

from mindgraph.config import load_settings
from mindgraph.fsutil import sha256_bytes
from mindgraph.page.markdown import split_frontmatter
from mindgraph.page.rawlines import source_paths
from mindgraph.trust.service import TrustService
from trust_support import plan_of


def _meta(base, rel):
    return yaml.safe_load(split_frontmatter((base / "wiki" / rel).read_text())[0])


def test_the_offline_compiler_writes_origin_generator_and_hashed_raw_sources(compiled):
    meta = _meta(compiled, "日本語/メモ.md")
    raw = (compiled / "raw" / "日本語" / "メモ.md").read_bytes()
    assert meta["provenance"] == {"origin": "compiled_offline", "generator": "offline:v5",
                                  "sources": [{"path": "日本語/メモ.md",
                                               "sha256": sha256_bytes(raw)}]}
    assert "sources" not in meta and "compiler" not in meta      # one place, not two
    page = next(TrustService(load_settings(compiled)).pages(["日本語/メモ.md"]))
    assert page.record.provenance.origin == "compiled_offline"
    assert page.record.provenance.sources[0].sha256 == sha256_bytes(raw)


def test_source_paths_reads_the_provenance_record_and_the_older_shape():
    assert source_paths({"provenance": {"sources": [{"path": "a.md", "sha256": "x"}]}}) == \
        ["a.md"]
    assert source_paths({"sources": [{"path": "old.md"}], "compiler": "offline:v2"}) == \
        ["old.md"]
    assert source_paths({"sources": ["plain.md"]}) == ["plain.md"]
    assert source_paths({"provenance": "garbled"}) == []


def test_a_page_of_the_older_shape_is_still_verified_against_its_raw_note(compiled, mg):
    page = compiled / "wiki" / "Sync.md"
    head, body, _ = split_frontmatter(page.read_text())
    meta = yaml.safe_load(head)
    provenance = meta.pop("provenance")
    meta["sources"], meta["compiler"] = provenance["sources"], "offline:v2"
    page.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
                    + "---\n" + body)
    plan = plan_of(mg, compiled, "Sync.md")
    verdict = plan["verdicts"][0]
    assert verdict["verdict"] == "pass" and verdict["verification"]["level"] == 2
    assert verdict["evidence"]["sources"][0]["ref"] == "raw:Sync.md"


def test_a_forced_recompile_is_byte_identical_and_keeps_the_record(compiled, mg):
    plan = plan_of(mg, compiled)
    assert mg(compiled, "verify", "--apply", plan["plan"], "--approve",
              plan["digest"]).exit_code == 0
    before = {p: p.read_bytes() for p in (compiled / "wiki").rglob("*.md")}
    assert mg(compiled, "ingest", "--force").exit_code == 0
    assert {p: p.read_bytes() for p in (compiled / "wiki").rglob("*.md")} == before
    assert b"\nverification:\n" in before[compiled / "wiki" / "Sync.md"]
