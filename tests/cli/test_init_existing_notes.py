"""`mindgraph init` on a folder that already holds notes, a newcomer's first move: it made an
empty raw/ and a wiki/ inside it, so nothing was compiled ("raw/ has no notes yet") and, in an
Obsidian vault, each compiled page would sit in the vault beside its note. `--raw FOLDER`
compiles such a folder where it is, from a workspace beside it."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _vault(tmp_path, obsidian: bool):
    vault = tmp_path / "vault"
    (vault / "Trips").mkdir(parents=True)
    (vault / "Trips" / "Kyoto.md").write_text("# Kyoto\n\nTemples and gardens in autumn.\n")
    (vault / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry [[Kyoto|visitors]].\n")
    if obsidian:
        (vault / ".obsidian").mkdir()
    return vault


def test_init_on_an_obsidian_vault_writes_nothing_and_names_the_raw_option(tmp_path):
    vault = _vault(tmp_path, obsidian=True)
    before = sorted(p.name for p in vault.iterdir())
    result = run("init", vault)
    assert result.exit_code == 2
    assert "is an Obsidian vault (it has .obsidian/)" in result.output
    assert f"mindgraph init {tmp_path / 'vault-wiki'} --raw {vault}" in result.output
    assert sorted(p.name for p in vault.iterdir()) == before      # no mindgraph.yml, raw/, wiki/


def test_init_raw_compiles_the_vault_where_it_is_and_never_writes_it(tmp_path):
    vault = _vault(tmp_path, obsidian=True)
    before = sorted(str(p.relative_to(vault)) for p in vault.rglob("*"))
    workspace = tmp_path / "vault-wiki"
    result = run("init", workspace, "--raw", vault)
    assert result.exit_code == 0, result.output
    assert f"Your notes stay in {vault} (never written)" in result.output
    assert "  raw: ../vault  " in (workspace / "mindgraph.yml").read_text()
    assert not (workspace / "raw").exists()
    ingest = json.loads(run("ingest", "-C", workspace, "--json").stdout)
    assert ingest["ingested"] == 2
    assert (workspace / "wiki" / "Trips" / "Kyoto.md").is_file()
    found = json.loads(run("search", "-C", workspace, "temples gardens", "--json").stdout)
    assert found["results"][0]["page"] == "Trips/Kyoto.md"
    assert sorted(str(p.relative_to(vault)) for p in vault.rglob("*")) == before


def test_init_raw_inside_the_workspace_is_refused_before_anything_is_written(tmp_path):
    vault = _vault(tmp_path, obsidian=False)
    result = run("init", vault / "sub", "--raw", vault)
    assert result.exit_code == 2
    assert "'paths.wiki'" in result.output and "is inside 'paths.raw'" in result.output
    assert f"give DIRECTORY a new folder beside it, e.g. {tmp_path / 'vault-wiki'}" \
        in result.output
    assert not (vault / "sub").exists()


def test_init_on_a_plain_folder_of_notes_refuses_before_writing_anything(tmp_path):
    """It wrote mindgraph.yml, raw/ and wiki/ and only then said that the notes would not be
    compiled, telling the user to delete what it had just made."""
    vault = _vault(tmp_path, obsidian=False)
    before = sorted(str(p.relative_to(vault)) for p in vault.rglob("*"))
    result = run("init", vault)
    assert result.exit_code == 2
    assert f"{vault} already holds 2 notes outside raw/ (Zeppelins.md, Trips/Kyoto.md): " \
        f"mindgraph compiles only {vault / 'raw'}, so none of them would be; nothing was " \
        f"written." in result.output
    assert f"mindgraph init {tmp_path / 'vault-wiki'} --raw {vault}" in result.output
    assert "add --ignore-notes" in result.output
    assert sorted(str(p.relative_to(vault)) for p in vault.rglob("*")) == before
    anyway = run("init", vault, "--ignore-notes")
    assert anyway.exit_code == 0 and (vault / "mindgraph.yml").is_file()
    assert anyway.output.splitlines()[-1].startswith("Put your notes in ")
    fresh = run("init", tmp_path / "notes")
    assert fresh.output.splitlines()[-1] == (f"Put your notes in {tmp_path / 'notes' / 'raw'}, "
                                             f"then run: mindgraph ingest -C "
                                             f"{tmp_path / 'notes'}")


def test_init_does_not_count_another_workspace_s_notes_and_pages_as_notes(tmp_path):
    # a projects folder holding a workspace made before: its wiki/ pages were counted as
    # notes outside raw/, and the user told to delete the workspace just made
    older = tmp_path / "projects" / "older"
    assert run("init", older).exit_code == 0
    (older / "raw" / "Kyoto.md").write_text("# Kyoto\n\nTemples.\n")
    (older / "wiki" / "Kyoto.md").write_text("# Kyoto\n\nTemples.\n")
    result = run("init", tmp_path / "projects")
    assert result.exit_code == 0 and "outside raw/" not in result.output
    assert result.output.splitlines()[-1].startswith("Put your notes in ")


def test_init_raw_writes_a_vault_name_with_spaces_and_unicode_as_it_is(tmp_path):
    vault = tmp_path / "日本 ノート #1"
    vault.mkdir()
    (vault / "メモ.md").write_text("# メモ\n\n京都の寺と庭。\n")
    result = run("init", tmp_path / "wiki-side", "--raw", vault)
    assert result.exit_code == 0, result.output
    assert "  raw: '../日本 ノート #1' # your notes" in (tmp_path / "wiki-side" / "mindgraph.yml").read_text()
    ingest = run("ingest", "-C", tmp_path / "wiki-side", "--json")
    assert json.loads(ingest.stdout)["ingested"] == 1


def test_raw_given_twice_is_refused_before_anything_is_written(tmp_path):
    """`init kb --raw en --raw ja` kept the last folder silently: the English vault was never
    compiled, and nothing said so."""
    for lang in ("en", "ja"):
        (tmp_path / lang).mkdir()
        (tmp_path / lang / "Home.md").write_text("# Home\n")
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "kb"), "--raw",
                                      str(tmp_path / "en"), "--raw", str(tmp_path / "ja")])
    assert result.exit_code == 2
    assert (f"--raw is given 2 times ({tmp_path / 'en'}, {tmp_path / 'ja'}): a workspace "
            f"compiles one folder of notes. Make one workspace per folder (`mindgraph init "
            f"{tmp_path / 'en'}-wiki --raw {tmp_path / 'en'}`") in " ".join(result.output.split())
    assert not (tmp_path / "kb").exists()
    once = CliRunner().invoke(cli, ["init", str(tmp_path / "kb"), "--raw", str(tmp_path / "ja")])
    assert once.exit_code == 0, once.output
    assert "raw: ../ja" in (tmp_path / "kb" / "mindgraph.yml").read_text()


def test_init_raw_keeps_the_comments_of_mindgraph_yml_in_one_column(tmp_path):
    # before: "  raw: ../vault          # your notes" six columns right of the others' comments
    import yaml

    for name in ("vault", "notes kept for a long time in a folder with a long name # 2"):
        vault = tmp_path / name
        vault.mkdir()
        workspace = tmp_path / f"ws-{len(name)}"
        assert run("init", workspace, "--raw", vault).exit_code == 0
        text = (workspace / "mindgraph.yml").read_text()
        set_keys = [line for line in text.splitlines()
                    if line.strip() and not line.lstrip().startswith("#") and " # " in line]
        assert len(set_keys) >= 7 and set_keys[0].startswith("  raw: ")
        assert len({line.rindex(" # ") for line in set_keys}) == 1, "\n".join(set_keys)
        assert yaml.safe_load(text)["paths"]["raw"] == f"../{name}"
