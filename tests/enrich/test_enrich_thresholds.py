"""`mindgraph enrich` under the routed default (MiniLM for English, use-multilingual-v3 for
Japanese): each model's hits are held to that model's own cut-off, with the real models on
real Obsidian Sync notes in English and Japanese, through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page.markdown import split_frontmatter
from mindgraph.providers.embedding.cutoffs import LINK_CUTOFFS

pytestmark = pytest.mark.slow

MINILM = "local:all-MiniLM-L6-v2-w8a8:384"
USE = "local:use-multilingual-v3:512"
EN = ["Introduction to Obsidian Sync.md", "Set up Obsidian Sync.md", "Headless Sync.md",
      "Switch to Obsidian Sync.md", "Security and privacy.md", "Version history.md"]
JA = ["Obsidian Syncの紹介.md", "Obsidian Syncのセットアップ.md", "Obsidian Syncへの切り替え.md",
      "セキュリティとプライバシー.md", "バージョン履歴.md", "Sync暗号化のアップグレード.md"]


def run(root: Path, *args: str):
    result = CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def vault(corpora, tmp_path_factory) -> Path:
    """Six English and six Japanese Sync notes, compiled and embedded by the default
    (routed) models."""
    root = tmp_path_factory.mktemp("enrich-routed")
    for lang, names in (("en", EN), ("ja", JA)):
        (root / "raw" / lang).mkdir(parents=True)
        for name in names:
            shutil.copy(corpora / "obsidian-help" / lang / "Obsidian Sync" / name,
                        root / "raw" / lang / name)
    (root / "mindgraph.yml").write_text("{}\n", encoding="utf-8")
    run(root, "ingest")
    run(root, "embed")
    return root


def enrich(root: Path, config: str) -> tuple[dict, dict[str, list[dict]]]:
    """Run offline enrich with ``config``; its --json report and each page's inferred links."""
    (root / "mindgraph.yml").write_text(config, encoding="utf-8")
    report = json.loads(run(root, "enrich", "--judge", "offline", "--no-summaries",
                            "--json").stdout)
    links = {}
    for page in (root / "wiki").rglob("*.md"):
        front = yaml.safe_load(split_frontmatter(page.read_text("utf-8"))[0]) or {}
        if front.get("inferred_links"):
            links[page.relative_to(root / "wiki").as_posix()] = front["inferred_links"]
    return report, links


def scores(links: dict[str, list[dict]], lang: str) -> list[float]:
    return [float(e["score"]) for page, entries in links.items() if page.startswith(lang)
            for e in entries]


def test_each_models_hits_need_its_own_cut_off(vault):
    report, links = enrich(vault, "{}\n")
    use_cut = LINK_CUTOFFS["use-multilingual"]
    assert report["thresholds"] == {MINILM: 0.7, USE: use_cut}
    assert report["threshold"] == 0.7 and report["links"] > 0
    english, japanese = scores(links, "en/"), scores(links, "ja/")
    assert english and min(english) >= 0.7
    assert japanese and min(japanese) >= use_cut
    # a link joins pages of one language: each language is searched by its own model
    for page, entries in links.items():
        assert all(e["to"].split("/")[0] == page.split("/")[0] for e in entries), entries
    text = run(vault, "enrich", "--judge", "offline", "--no-summaries", "--dry-run").stdout
    assert f"at cosine >= 0.7 all-MiniLM-L6-v2-w8a8, {use_cut:g} use-multilingual-v3," in text


def test_link_threshold_is_minilms_and_thresholds_name_the_others(vault):
    # enrich.link_threshold (the setting before per-model cut-offs) still sets MiniLM's...
    report, links = enrich(vault, "enrich: {link_threshold: 0.99}\n")
    assert report["thresholds"][MINILM] == 0.99
    assert not scores(links, "en/") and scores(links, "ja/")
    # ...and enrich.thresholds (a part of a model's name → cut-off) the one it names
    report, links = enrich(vault, "enrich: {thresholds: {use-multilingual: 0.99}}\n")
    assert report["thresholds"] == {MINILM: 0.7, USE: 0.99}
    assert scores(links, "en/") and not scores(links, "ja/")


def test_a_threshold_that_is_not_a_cosine_names_the_setting(vault):
    (vault / "mindgraph.yml").write_text("enrich: {thresholds: {e5: high}}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(vault), "enrich", "--judge", "offline",
                                      "--no-summaries", "--dry-run"])
    assert result.exit_code != 0
    assert f"{vault / 'mindgraph.yml'}:1: 'enrich.thresholds.e5' is 'high'" in result.output


E5_ROUTED = "embedding: {languages: {ja: multilingual-e5-small}}\n"
E5 = "local:multilingual-e5-small-w8a8:384"


def test_e5s_cut_off_holds_its_hits_only(corpora, tmp_path):
    # e5 in the routed model's name used to put every model at e5's cut-off: MiniLM's English
    # pairs (0.7–0.8) all fell under it
    for lang, names in (("en", EN[:4]), ("ja", JA[:4])):
        (tmp_path / "raw" / lang).mkdir(parents=True)
        for name in names:
            shutil.copy(corpora / "obsidian-help" / lang / "Obsidian Sync" / name,
                        tmp_path / "raw" / lang / name)
    (tmp_path / "mindgraph.yml").write_text(E5_ROUTED, encoding="utf-8")
    run(tmp_path, "ingest")
    run(tmp_path, "embed")
    report, links = enrich(tmp_path, E5_ROUTED)
    assert report["thresholds"] == {MINILM: 0.7, E5: LINK_CUTOFFS["e5"]}
    english, japanese = scores(links, "en/"), scores(links, "ja/")
    assert english and min(english) >= 0.7 and min(english) < LINK_CUTOFFS["e5"]
    assert all(s >= LINK_CUTOFFS["e5"] for s in japanese)


def test_second_vectors_join_no_pages_of_two_languages(corpora, tmp_path):
    # embedding.cross_lingual_vectors: USE also embeds the English pages (for Japanese and
    # Chinese questions); a Japanese page's USE neighbours are still Japanese pages only, not
    # its English translation's second vectors
    config = "embedding: {cross_lingual_vectors: true}\n"
    for lang, names in (("en", EN), ("ja", JA)):
        (tmp_path / "raw" / lang).mkdir(parents=True)
        for name in names:
            shutil.copy(corpora / "obsidian-help" / lang / "Obsidian Sync" / name,
                        tmp_path / "raw" / lang / name)
    (tmp_path / "mindgraph.yml").write_text(config, encoding="utf-8")
    run(tmp_path, "ingest")
    run(tmp_path, "embed")
    report, links = enrich(tmp_path, config)
    assert scores(links, "ja/") and scores(links, "en/")
    for page, entries in links.items():
        assert all(e["to"].split("/")[0] == page.split("/")[0] for e in entries), entries
