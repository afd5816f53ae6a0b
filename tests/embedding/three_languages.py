"""What the multilingual models' tests share: a five-note wiki in English, Japanese and
Chinese for the CLI, and the cross-language check every multilingual model must pass."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mindgraph.cli import cli

NOTES = {
    "Sync.md": "# Sync\n\nSync keeps your notes up to date on every device you sign in on.\n",
    "Canvas.md": "# Canvas\n\nCanvas is an infinite board for laying out notes and images.\n",
    "同期.md": "# 同期\n\n同期を使うと、サインインしたすべての端末でノートが最新に保たれます。\n",
    "白板.md": "# 白板\n\n白板是一块无限大的画布，可以排列笔记和图片。\n",
    "キャンバス.md": "# キャンバス\n\nキャンバスはノートや画像を並べる無限のボードです。\n",
}


def make_workspace(tmp_path: Path) -> Path:
    """The five notes in ``tmp_path/wiki``; the workspace is ``tmp_path``."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for name, text in NOTES.items():
        (wiki / name).write_text(text, encoding="utf-8")
    return tmp_path


def run(workspace: Path, *args: str):
    return CliRunner().invoke(cli, [*args, "-C", str(workspace)])


def assert_meaning_crosses_languages(provider) -> None:
    """A question in each language ranks the three notes on sync (en, ja, zh) above the one on
    canvas."""
    docs = provider.embed_documents([
        "Sync keeps your notes up to date on all your devices.",
        "同期を使うと、すべての端末でノートが最新の状態に保たれます。",
        "同步可以让你的笔记在所有设备上保持最新。",
        "Canvas is an infinite board for laying out notes and images.",
    ])
    for query in ("How do I keep notes the same on my phone and laptop?",
                  "スマホとパソコンでノートを同じにするには", "如何在手机和电脑上保持笔记一致"):
        scores = docs @ provider.embed_queries([query])[0]
        assert scores[:3].min() > scores[3], (query, scores)


def assert_embeds_and_finds_paraphrases(workspace: Path, config: str, model_version: str) -> None:
    """With ``config`` as mindgraph.yml, `embed` embeds the five notes under ``model_version``
    and `search --hybrid` finds each paraphrase's note (no word shared) among its first two."""
    (workspace / "mindgraph.yml").write_text(config, encoding="utf-8")
    embedded = run(workspace, "embed", "--json")
    assert embedded.exit_code == 0, embedded.output
    data = json.loads(embedded.stdout)
    assert data["model_version"] == model_version
    assert data["embedded"] == data["chunks"] == 5
    for query, expected in (("無限のボードに画像を並べたい", "キャンバス"),
                            ("怎样在所有设备上保持笔记最新", "同期"),
                            ("a board without edges for pictures", "Canvas")):
        result = run(workspace, "search", "--hybrid", "--json", query)
        assert result.exit_code == 0, result.output
        hits = json.loads(result.stdout)["results"]
        assert hits, (query, result.output)
        top = [h["page"] for h in hits[:2]]
        assert any(expected in path for path in top), (query, top)
