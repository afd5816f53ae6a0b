"""`mindgraph coverage --semantic` under the routed default (MiniLM for English,
use-multilingual-v3 for Japanese and Chinese), with the real models on real notes through the
CLI: each model's hits are cut at that model's own threshold, and a wiki of Japanese pages
only is searched by its model (it used to be searched by MiniLM's part alone, which holds no
vectors there, so no module was ever covered semantically)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.providers.embedding.cutoffs import SEMANTIC_CUTOFFS

pytestmark = pytest.mark.slow

MINILM = "local:all-MiniLM-L6-v2-w8a8:384"
USE = "local:use-multilingual-v3:512"
SYNC = "Obsidian Sync"
# A module whose docstrings are the English vault's own descriptions of version history
# (en/Obsidian Sync/Version history.md), and one about nothing the wiki says.
HISTORY = '''"""Obsidian Sync keeps a record of all changes made to your notes and regularly checks
for updates and creates new versions of your notes."""


def restore(note: str, version: int) -> str:
    """Restore a previous version of a note from its version history."""
    return note
'''
UNRELATED = '''"""Parse a CSV file of invoices and sum the amounts per customer and month."""


def monthly_totals(rows: list) -> dict:
    """Total invoice amount per customer and month."""
    return {}
'''
PAGES = {"en": ["Version history.md", "Headless Sync.md", "Security and privacy.md"],
         "ja": ["バージョン履歴.md", "ヘッドレスSync.md", "セキュリティとプライバシー.md"],
         "zh": ["版本历史.md", "Headless Sync.md", "同步安全和隐私.md"]}


def workspace(corpora: Path, root: Path, lang: str) -> Path:
    """Three Sync notes of ``lang``, compiled and embedded by the default models, and the
    code base."""
    raw = root / "raw" / lang
    raw.mkdir(parents=True)
    for name in PAGES[lang]:
        shutil.copy(corpora / "obsidian-help" / lang / SYNC / name, raw / name)
    code = root / "code" / "sync"
    code.mkdir(parents=True)
    (code / "history.py").write_text(HISTORY, encoding="utf-8")
    (code / "invoices.py").write_text(UNRELATED, encoding="utf-8")
    (root / "mindgraph.yml").write_text("{}\n", encoding="utf-8")
    for args in (["ingest"], ["embed"]):
        result = CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return root


def coverage(root: Path, *args: str):
    result = CliRunner().invoke(cli, ["-C", str(root), "coverage", str(root / "code"),
                                      "--semantic", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_each_language_is_searched_by_its_model_at_its_threshold(corpora, tmp_path, lang):
    root = workspace(corpora, tmp_path, lang)
    data = json.loads(coverage(root, "--json").stdout)
    cut = {"en": 0.7}.get(lang, SEMANTIC_CUTOFFS["use-multilingual"])
    assert data["semantic"]["thresholds"] == {MINILM: 0.7,
                                              USE: SEMANTIC_CUTOFFS["use-multilingual"]}
    assert data["semantic"]["threshold"] == 0.7
    units = {u["unit"]: u for u in data["units"]}
    history = units["sync/history.py"]
    assert history["covered"] and history["semantic_only"], history
    best = history["semantic"][0]
    assert best["page"] == f"{lang}/{PAGES[lang][0]}" and best["similarity"] >= cut, history
    assert all(link["similarity"] >= cut for link in history["semantic"])
    assert not units["sync/invoices.py"]["covered"]
    text = coverage(root).stdout
    assert f"~ semantic link: cosine >= 0.7 ({MINILM}), " \
           f"{SEMANTIC_CUTOFFS['use-multilingual']:g} ({USE})" in text


def test_a_given_threshold_holds_for_every_model(corpora, tmp_path):
    root = workspace(corpora, tmp_path, "ja")
    data = json.loads(coverage(root, "--semantic-threshold", "0.95", "--json").stdout)
    assert data["semantic"]["thresholds"] == {MINILM: 0.95, USE: 0.95}
    assert data["semantic"]["covered_semantic_only"] == 0
