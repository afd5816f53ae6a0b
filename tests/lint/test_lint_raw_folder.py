"""`mindgraph lint` names the raw folder as the workspace configures it (paths.raw:
``../vault``), not raw/, and counts in words that agree with the number ("1 finding")."""

from click.testing import CliRunner

from mindgraph.cli import cli

# compiled from ../vault/Home.md; nothing before the first heading says what it is about
HOME = ("---\nsources: [Home.md]\n---\n# Home\n\n## Steps\n\n"
        "Open the settings and pick a theme for the app.\n")
# names a raw note that is not there
GONE = ("---\nsources: [Gone.md]\n---\n# Gone\n\nThemes change how every pane of the app "
        "looks.\n\n## More\n\nText.\n")


def _workspace(tmp_path, pages):
    vault, root = tmp_path / "vault", tmp_path / "ws"
    vault.mkdir()
    (vault / "Home.md").write_text("# Home\n\n## Steps\n\nOpen the settings.\n")
    (root / "wiki").mkdir(parents=True)
    for name, text in pages.items():
        (root / "wiki" / name).write_text(text)
    (root / "mindgraph.yml").write_text("paths:\n  raw: ../vault\n")
    return root


def _lint(root):
    result = CliRunner().invoke(cli, ["-C", str(root), "lint"])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_fix_names_the_configured_raw_folder_and_one_finding_is_one(tmp_path):
    out = _lint(_workspace(tmp_path, {"Home.md": HOME}))
    assert "Start ../vault/Home.md with a sentence" in out
    assert "raw/" not in out
    assert "1 page: 1 finding (no-summary 1)." in out


def test_a_missing_source_is_named_in_the_configured_raw_folder(tmp_path):
    out = _lint(_workspace(tmp_path, {"Home.md": HOME, "Gone.md": GONE}))
    assert "'sources' names ../vault/Gone.md, which does not exist." in out
    assert "raw/" not in out
    assert "2 pages: 2 findings" in out


def test_check_says_one_page(tmp_path):
    root = tmp_path
    (root / "wiki").mkdir()
    (root / "raw").mkdir()
    (root / "wiki" / "Lone.md").write_text("# Lone\n\nA page on its own, about nothing.\n")
    result = CliRunner().invoke(cli, ["-C", str(root), "check"])
    assert "1 page: 0 errors" in result.output, result.output


def test_check_names_the_configured_raw_folder_for_a_missing_attachment(tmp_path):
    """`mindgraph check` said "names no file in the wiki or raw/" with paths.raw: ../vault."""
    vault, root = tmp_path / "vault", tmp_path / "ws"
    vault.mkdir()
    root.mkdir()
    (vault / "Album.md").write_text("# Album\n\nThe trip, in pictures.\n\n![[missing.png]]\n")
    (root / "mindgraph.yml").write_text("paths:\n  raw: ../vault\n")
    assert CliRunner().invoke(cli, ["-C", str(root), "ingest"]).exit_code == 0
    out = CliRunner().invoke(cli, ["-C", str(root), "check"]).output
    assert "![[missing.png]] names no file in the wiki or ../vault/" in out, out
    assert "raw/" not in out
