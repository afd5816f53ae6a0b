"""raw/ is never written, and an empty or wrong raw/ never empties the wiki: paths that put
what mindgraph writes inside raw/ are refused when the config is loaded, a run that would
remove most pages is held unless --allow-removals, and the trust records of removed pages
come back with their notes. Plus the first-hour messages: init's bad folders, an empty raw/,
a config key misspelt, -C to a folder that does not exist."""

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


def run(*args, **kwargs):
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)


def hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def workspace(tmp_path):
    """An initialised workspace with 30 notes ingested (more than the guard's 20)."""
    base = tmp_path / "vault"
    assert run("init", base).exit_code == 0
    for i in range(30):
        (base / "raw" / "en").mkdir(exist_ok=True)
        (base / "raw" / "en" / f"Note {i}.md").write_text(f"# Note {i}\nText number {i}.\n")
    result = run("ingest", "-C", base)
    assert result.exit_code == 0, result.output
    return base


def set_paths(base: Path, text: str) -> None:
    (base / "mindgraph.yml").write_text(text)


# -- 1. nothing mindgraph writes may be in raw/ ---------------------------------------------------

@pytest.mark.parametrize("config, key, line", [
    ("paths:\n  wiki: raw/en\n", "paths.wiki", 2),
    ("paths: {state: raw/.mg}\n", "paths.state", 1),
    ("compile: {}\npaths:\n  raw: notes\n  wiki: notes\n", None, None),
    ("paths:\n  raw: .\n  wiki: compiled\n", "paths.wiki", 3),
    ("serve:\n  usage_log: ../raw/usage.jsonl\n", "serve.usage_log", 2),
])
def test_what_mindgraph_writes_inside_raw_is_refused_by_every_command(workspace, config, key,
                                                                       line):
    before = hashes(workspace / "raw")
    set_paths(workspace, config)
    for command in (["ingest"], ["stats"], ["search", "note"], ["embed"], ["check"],
                    ["graph", "hubs"]):
        result = run(*command, "-C", workspace)
        assert result.exit_code == 2, (command, result.output)
        if key is None:
            assert "must be different folders" in result.output
            continue
        assert f"mindgraph.yml:{line}: '{key}' (" in result.output
        assert "inside 'paths.raw'" in result.output or "is 'paths.raw'" in result.output
        assert "raw/ is never written" in result.output and f"set {key} to" in result.output
    assert hashes(workspace / "raw") == before          # nothing written into raw/


def test_a_path_into_raw_through_a_symlink_or_dotdot_is_refused_too(workspace):
    (workspace / "elsewhere").symlink_to(workspace / "raw" / "en")
    set_paths(workspace, "paths:\n  wiki: elsewhere\n")
    assert "inside 'paths.raw'" in run("stats", "-C", workspace).output
    set_paths(workspace, "paths:\n  state: wiki/../raw/state\n")
    result = run("stats", "-C", workspace)
    assert result.exit_code == 2 and "mindgraph.yml:2: 'paths.state'" in result.output


def test_raw_inside_wiki_is_refused_at_load_with_its_line(workspace):
    set_paths(workspace, "compile: {}\npaths:\n  raw: wiki/notes\n")
    result = run("stats", "-C", workspace)
    assert result.exit_code == 2
    assert "mindgraph.yml:3: 'paths.raw'" in result.output and "inside 'paths.wiki'" \
        in result.output and "Move one" in result.output


def test_an_environment_override_into_raw_is_named(workspace):
    result = run("stats", "-C", workspace, env={"MINDGRAPH_PATHS__WIKI": "raw/en"})
    assert result.exit_code == 2
    assert "Environment variable MINDGRAPH_PATHS__WIKI: 'paths.wiki'" in result.output


# -- 2. an empty or wrong raw/ does not empty the wiki --------------------------------------------

def test_an_empty_raw_folder_is_held_and_nothing_is_removed(workspace):
    (workspace / "rawz").mkdir()
    config = (workspace / "mindgraph.yml").read_text()
    set_paths(workspace, config.replace("  raw: raw ", "  raw: rawz"))
    pages = hashes(workspace / "wiki")
    result = run("ingest", "-C", workspace)
    assert result.exit_code == 1
    assert f"raw/ ({workspace / 'rawz'}) has no notes" in result.output
    assert "remove 30 of the 30 wiki pages" in result.output
    assert "--allow-removals" in result.output and "Nothing was removed" in result.output
    assert hashes(workspace / "wiki") == pages
    as_json = run("ingest", "-C", workspace, "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["error"] == "RemovalsHeld"
    set_paths(workspace, config)            # pointed back: nothing to redo
    again = run("ingest", "-C", workspace)
    assert again.exit_code == 0 and "Ingested 0, unchanged 30, skipped 0" in again.output


def test_more_than_half_and_more_than_20_is_held_fewer_is_not(workspace):
    notes = sorted((workspace / "raw" / "en").glob("*.md"))
    for note in notes[:10]:
        note.unlink()
    result = run("ingest", "-C", workspace)
    assert result.exit_code == 0 and "removed 10" in result.output    # a third: applied
    for note in notes[10:26]:           # 16 of the 20 left: more than half, not more than 20
        note.unlink()
    assert run("ingest", "-C", workspace).exit_code == 0
    for note in notes[26:]:             # the last 4: every page left
        note.unlink()
    held = run("ingest", "-C", workspace)
    assert held.exit_code == 1 and "remove 4 of the 4 wiki pages" in held.output
    applied = run("ingest", "-C", workspace, "--allow-removals")
    assert applied.exit_code == 0 and "removed 4" in applied.output
    assert not list((workspace / "wiki").rglob("*.md"))


def test_a_run_removing_22_of_30_pages_is_held(workspace):
    for note in sorted((workspace / "raw" / "en").glob("*.md"))[:22]:
        note.unlink()
    held = run("ingest", "-C", workspace)
    assert held.exit_code == 1 and "remove 22 of the 30 wiki pages compiled from notes (73%)" in held.output
    assert "has 8 notes" in held.output
    assert len(list((workspace / "wiki").rglob("*.md"))) == 30
    dry = run("ingest", "-C", workspace, "--dry-run")   # a dry run still shows the plan
    assert dry.exit_code == 0 and "removed 22" in dry.output
    assert "Without --dry-run this run would be held: ingest held" in dry.output
    assert json.loads(run("ingest", "-C", workspace, "--dry-run", "--json").stdout)[
        "held"].startswith("ingest held")


def verify_all(base: Path) -> None:
    planned = run("verify", "-C", base, "--json")
    assert planned.exit_code == 0, planned.output
    plan = json.loads(planned.output)
    applied = run("verify", "-C", base, "--apply", plan["plan"], "--approve", plan["digest"])
    assert applied.exit_code == 0, applied.output


def test_a_held_run_mentions_trust_records_only_when_the_pages_hold_them(workspace):
    notes = sorted((workspace / "raw" / "en").glob("*.md"))
    away = workspace / "away"
    away.mkdir()
    for note in notes:
        note.rename(away / note.name)
    held = run("ingest", "-C", workspace)
    assert held.exit_code == 1 and "remove 30 of the 30 wiki pages" in held.output
    assert "trust records" not in held.output and "verify --apply" not in held.output
    for note in away.iterdir():
        note.rename(workspace / "raw" / "en" / note.name)
    verify_all(workspace)
    for note in notes:
        note.rename(away / note.name)
    held = run("ingest", "-C", workspace)
    assert held.exit_code == 1
    assert "(every one), with the trust records `mindgraph verify --apply` wrote in them." \
        in " ".join(held.output.split())


def test_trust_records_of_removed_pages_come_back_with_their_notes(workspace):
    verify_all(workspace)
    page = workspace / "wiki" / "en" / "Note 1.md"
    assert "verification:" in page.read_text()
    record = page.read_text().split("verification:", 1)[1]
    moved = workspace / "away"
    (workspace / "raw" / "en").rename(moved)
    result = run("ingest", "-C", workspace, "--allow-removals")
    assert result.exit_code == 0 and "removed 30" in result.output
    assert not page.exists()
    (workspace / "raw" / "en").mkdir()
    for note in moved.iterdir():
        note.rename(workspace / "raw" / "en" / note.name)
    (workspace / "raw" / "en" / "Note 4.md").write_text("# Note 4\nChanged since.\n")
    back = run("ingest", "-C", workspace)
    assert back.exit_code == 0, back.output
    assert "en/Note 1.md: its trust record (verification, evidence) was restored" in back.output
    assert page.read_text().split("verification:", 1)[1] == record
    # a note that came back changed starts unverified, as any new page
    assert "verification:" not in (workspace / "wiki" / "en" / "Note 4.md").read_text()


# -- 3. init's bad folders ------------------------------------------------------------------------

def test_init_names_a_folder_it_cannot_create(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    under_file = run("init", tmp_path / "file.txt" / "sub")
    assert under_file.exit_code == 2
    assert "Error: cannot create the folder" in under_file.output
    assert f"{tmp_path / 'file.txt'} is a file, not a folder" in under_file.output
    assert "Traceback" not in under_file.output and under_file.exception.__class__ is SystemExit
    missing = run("init", "/proc/nope")
    assert missing.exit_code == 2 and "Error: cannot create the folder /proc/nope (" \
        in missing.output


# /bin, /sbin and /lib: links to /usr's folders on merged-/usr systems (were accepted)
# /usr/local's, /usr's other folders and the shared scratch folders (were accepted)
@pytest.mark.parametrize("folder", ["/", "/etc", "/usr/../var", "/tmp/..", "/bin", "/sbin",
                                    "/lib", "/usr/bin", "/usr/local", "/usr/local/bin",
                                    "/usr/local/etc", "/usr/local/lib", "/usr/local/sbin",
                                    "/usr/local/share/", "/usr/share", "/usr/include",
                                    "/usr/libexec", "/usr/src", "/var/tmp", "/dev/shm", "/tmp",
                                    "/var/lib", "/home"])
def test_init_refuses_the_root_and_system_folders(folder):
    made = [Path(folder).resolve() / name for name in ("mindgraph.yml", "raw", "wiki")]
    existed = [path.exists() for path in made]
    result = run("init", folder)
    scratch = folder in ("/tmp", "/var/tmp", "/dev/shm")
    assert result.exit_code == 2
    assert ("is a scratch folder every user shares" if scratch else "is a system folder") \
        in result.output
    assert (f"e.g. {folder}/notes or ~/notes" if scratch else "e.g. ~/notes") in result.output
    assert "Traceback" not in result.output
    assert [path.exists() for path in made] == existed       # nothing written there


def test_init_accepts_a_project_folder_inside_a_shared_scratch_folder():
    base = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="mindgraph-init-"))
    try:
        result = run("init", base / "notes")
        assert result.exit_code == 0, result.output
        assert (base / "notes" / "mindgraph.yml").is_file()
    finally:
        shutil.rmtree(base)


# -- 4. an empty raw/ says so ---------------------------------------------------------------------

def test_an_empty_raw_folder_says_what_to_do_in_ingest_stats_and_search(tmp_path):
    base = tmp_path / "fresh"
    assert run("init", base).exit_code == 0
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    ingest = run("ingest", "-C", base)
    assert ingest.exit_code == 0
    assert f"raw/ ({base / 'raw'}) has no notes yet: put Markdown files there" in ingest.output
    stats = run("stats", "-C", base)
    assert f"raw       0 files: raw/ ({base / 'raw'}) has no notes yet" in stats.output
    assert "never ingested" not in stats.output
    assert run("embed", "-C", base).exit_code == 0
    search = run("search", "--hybrid", "foo", "-C", base)
    assert "the wiki has no pages to embed yet" in search.output
    assert "run `mindgraph embed`" not in search.output
    (base / "raw" / "a.md").write_text("# A\nSome text.\n")
    assert "never ingested" not in run("stats", "-C", base).output     # it was, when empty
    assert "has no notes" not in run("ingest", "-C", base).output


def test_stats_before_any_ingest_says_never_ingested(tmp_path):
    base = tmp_path / "fresh"
    assert run("init", base).exit_code == 0
    (base / "raw" / "a.md").write_text("# A\nSome text.\n")
    assert (f"raw       0 files: never ingested: {base / 'raw'} holds notes; run `mindgraph "
            f"ingest`") in run("stats", "-C", base).output


def test_a_query_before_the_first_ingest_says_to_run_ingest_not_only_no_match(tmp_path):
    notes = tmp_path / "vault"
    notes.mkdir()
    (notes / "Sync.md").write_text("# Sync\nSync keeps notes the same on every device.\n")
    base = tmp_path / "kb"
    assert run("init", base, "--raw", notes).exit_code == 0
    never = (f"The wiki has no pages yet: the notes in {notes} were never compiled. "
             f"Run `mindgraph ingest` first.")
    search = run("search", "sync", "-C", base)
    assert (search.exit_code, search.output) == (0, f"No page matches 'sync'.\n{never}\n")
    # --hybrid too (it said "put notes in raw/" of a raw/ full of notes)
    hashing = {"MINDGRAPH_EMBEDDING__PROVIDER": "hashing", "MINDGRAPH_EMBEDDING__DIMENSION": "64"}
    hybrid = run("search", "--hybrid", "sync", "-C", base, env=hashing)
    assert hybrid.exit_code == 0 and hybrid.output.endswith(f"No page matches.\n{never}\n")
    assert "put notes in raw/" not in hybrid.output, hybrid.output
    hybrid_json = json.loads(run("search", "--hybrid", "sync", "-C", base, "--json",
                                     env=hashing).output)
    assert hybrid_json["results"] == [] and hybrid_json["note"] == never
    as_json = json.loads(run("search", "sync", "-C", base, "--json").output)
    assert as_json["count"] == 0 and as_json["note"] == never
    check = run("check", "-C", base)
    assert check.exit_code == 0 and check.output.endswith(f"{never}\n")
    assert run("graph", "hubs", "-C", base).output == f"0 hubs. {never}\n"
    assert run("graph", "orphans", "-C", base).output == f"0 orphans. {never}\n"
    assert run("graph", "communities", "-C", base).output == (
        f"0 communities of 2 or more pages. {never}\n")
    embed = run("embed", "-C", base)
    assert embed.exit_code == 0 and embed.output.endswith(f"{never}\n"), embed.output
    for argv in (["get", "Sync"], ["links", "Sync"], ["graph", "path", "Sync", "Sync"]):
        missing = run(*argv, "-C", base)
        assert missing.exit_code == 1, argv
        assert f"No page named 'Sync'. {never}" in missing.output, argv
    assert run("ingest", "-C", base).exit_code == 0
    search = run("search", "sync", "-C", base)
    assert search.exit_code == 0 and "1. Sync.md" in search.output
    assert "no pages" not in search.output
    assert "no pages" not in run("check", "-C", base).output
    assert "no pages" not in run("graph", "orphans", "-C", base).output
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "Sync.md").write_text("---\ntitle: [unclosed\n---\n# Sync\n")
    base = tmp_path / "kb2"
    assert run("init", base, "--raw", broken).exit_code == 0
    assert run("ingest", "-C", base).exit_code == 1          # its one note fails: no page
    assert run("search", "sync", "-C", base).output.endswith(
        "The wiki has no pages: the last ingest compiled none; `mindgraph ingest` lists why.\n")


# -- 5. config messages ---------------------------------------------------------------------------

def test_an_unknown_key_or_section_has_its_line_and_a_suggestion(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("paths:\n  raw: raw\n\ncompile:\n  model: x\n"
                                            "  provder: anthropic\n")
    result = run("stats", "-C", tmp_path)
    assert result.exit_code == 2
    assert "mindgraph.yml:6: unknown key 'compile.provder'. Did you mean 'provider'?" \
        in result.output
    (tmp_path / "mindgraph.yml").write_text("compile: {}\nretreival: {}\n")
    assert "mindgraph.yml:2: unknown section 'retreival'. Did you mean 'retrieval'?" \
        in run("stats", "-C", tmp_path).output
    (tmp_path / "mindgraph.yml").write_text("adapters:\n  - name: a\n    targt: x\n")
    assert "mindgraph.yml:3: unknown key 'adapters[0].targt'. Did you mean 'target'?" \
        in run("stats", "-C", tmp_path).output


def test_dir_option_to_a_missing_folder_says_it_does_not_exist(tmp_path):
    result = run("-C", tmp_path / "nope", "stats")
    assert result.exit_code == 2
    assert f"{tmp_path / 'nope'} does not exist (no such folder)" in result.output
    assert "it has no mindgraph.yml" not in result.output


# /root was refused as a system folder (suggesting ~/notes, i.e. /root/notes) while
# /home/user, the same thing for another user, was accepted
@pytest.mark.parametrize("folder", ["$HOME", "$HOME/../home-of-test", "/root", "/home/someone",
                                    "/home/someone/", "/Users/someone"])
def test_init_refuses_a_home_folder_suggesting_a_subfolder(folder, tmp_path):
    home = tmp_path / "home-of-test"
    home.mkdir()
    asked = folder.replace("$HOME", str(home))
    made = [Path(asked).resolve() / name for name in ("mindgraph.yml", "raw", "wiki")]
    existed = [path.exists() for path in made]
    result = CliRunner().invoke(cli, ["init", asked], env={"HOME": str(home)})
    assert result.exit_code == 2, result.output
    shown = os.path.normpath(asked)
    assert f"Error: {shown} is a home folder; mindgraph would write raw/, wiki/ and " \
        f"mindgraph.yml among its files. Give `mindgraph init` a subfolder, e.g. " \
        f"{shown}/notes" in result.output
    assert [path.exists() for path in made] == existed


def test_init_accepts_a_subfolder_of_the_home_folder(tmp_path):
    home = tmp_path / "home-of-test"
    home.mkdir()
    result = CliRunner().invoke(cli, ["init", str(home / "notes")], env={"HOME": str(home)})
    assert result.exit_code == 0, result.output
    assert (home / "notes" / "mindgraph.yml").is_file()


@pytest.mark.parametrize("asked", ["~", "~/notes"])
def test_init_refuses_an_unexpanded_tilde(asked, tmp_path, monkeypatch):
    """A quoted '~' reached init unexpanded: it made a folder named '~' here and told the
    user to run `-C ~`, which the shell then turns into the home folder."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", asked])
    assert result.exit_code == 2, result.output
    assert "the shell did not expand '~' (it was quoted)" in result.output
    assert not (tmp_path / "~").exists()


def test_a_raw_folder_moved_away_is_named_at_its_config_line_by_ingest_watch_and_check(
        tmp_path):
    """`check` said of a vault renamed after an ingest that 74 of its notes were "deleted
    from raw/ since the last ingest" (those whose pages had findings), and `watch` watched the
    missing folder in silence; `ingest` alone named it, without the config line."""
    notes = tmp_path / "vault"
    notes.mkdir()
    (notes / "A.md").write_text("# A\nSee [[missing]].\n")
    base = tmp_path / "kb"
    assert run("init", base, "--raw", notes).exit_code == 0
    assert run("ingest", "-C", base).exit_code == 0
    notes.rename(tmp_path / "vault-old")
    config = base / "mindgraph.yml"
    line = config.read_text().split("\n").index("  raw: ../vault     # your notes; "
                                                 "mindgraph never writes here") + 1
    said = (f"{config}:{line}: raw folder {notes} does not exist (paths.raw is '../vault'). "
            f"Set paths.raw to the folder of your notes (moved or renamed?), or create it.")
    for argv in (["ingest"], ["watch"], ["check"], ["check", "--json"]):
        result = run(*argv, "-C", base)
        assert result.exit_code == 2, (argv, result.output)
        assert said in " ".join(result.output.split()), (argv, result.output)
        assert "raw-gone" not in result.output and "Watching" not in result.output
    moved = run("ingest", "-C", base, env={"MINDGRAPH_PATHS__RAW": "../elsewhere"})
    assert moved.exit_code == 2
    assert ("Environment variable MINDGRAPH_PATHS__RAW: raw folder "
            f"{tmp_path / 'elsewhere'} does not exist (paths.raw is '../elsewhere'). Set "
            "MINDGRAPH_PATHS__RAW to the folder") in " ".join(moved.output.split())
    (tmp_path / "vault-old").rename(notes)
    assert run("check", "-C", base).exit_code == 0
    hand_kept = tmp_path / "hand"          # a wiki kept by hand: no raw/, no config
    (hand_kept / "wiki").mkdir(parents=True)
    (hand_kept / "wiki" / "A.md").write_text("# A\n")
    assert run("check", "-C", hand_kept).exit_code == 0


def test_a_command_run_inside_a_vault_names_the_init_that_makes_its_workspace(tmp_path):
    """`cd vault && mindgraph search x` said to `mindgraph init DIR`, which the vault itself
    refuses (notes outside raw/): the fix is a workspace beside it, named with --raw."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "Home.md").write_text("# Home\n")
    result = run("search", "x", "-C", vault)
    assert result.exit_code == 2
    assert (f"or, as this folder holds notes, make a workspace for them beside it: "
            f"`mindgraph init {vault}-wiki --raw {vault}`.") in " ".join(result.output.split())
    assert run("init", f"{vault}-wiki", "--raw", vault).exit_code == 0   # the fix works
    other = tmp_path / "project"              # a README among other files is no vault
    other.mkdir()
    for name in ("README.md", "setup.py", "main.py"):
        (other / name).write_text("x\n")
    said = " ".join(run("search", "x", "-C", other).output.split())
    assert "or create one with `mindgraph init DIR`." in said and "--raw" not in said


def test_a_command_run_in_a_vault_sub_folder_names_the_vault_not_the_sub_folder(tmp_path):
    """`cd vault/Plugins && mindgraph search x` said to make a workspace of Plugins alone,
    inside the vault: the workspace to make is the whole vault's, beside it."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "Plugins").mkdir()
    for name in ("Canvas.md", "Graph view.md"):
        (vault / "Plugins" / name).write_text(f"# {name[:-3]}\n")
    said = " ".join(run("search", "x", "-C", vault / "Plugins").output.split())
    assert f"`mindgraph init {vault}-wiki --raw {vault}`." in said


def test_a_command_run_among_notes_names_the_workspace_that_compiles_them(tmp_path,
                                                                          monkeypatch):
    """An Obsidian user made `vault-wiki` for `vault` as init says, then ran a command from
    their vault (or a folder of it): told to make a workspace that already exists, whose
    init keeps the config and changes nothing. The workspace beside it is named instead."""
    vault = tmp_path / "vault"
    (vault / "Plugins").mkdir(parents=True)
    for name in ("Home.md", "Help.md", "Plugins/Canvas.md", "Plugins/Graph view.md"):
        (vault / name).write_text(f"# {Path(name).stem}\n")
    assert run("init", tmp_path / "vault-wiki", "--raw", vault).exit_code == 0
    for folder in (vault, vault / "Plugins"):
        monkeypatch.chdir(folder)
        result = run("search", "canvas", "--json")
        assert result.exit_code == 2
        detail = json.loads(result.stdout)["detail"]
        assert detail == (f"{folder} is not a mindgraph workspace: its notes are compiled by "
                          f"the workspace {tmp_path / 'vault-wiki'} (whose paths.raw names "
                          f"them). Run the command there (`cd {tmp_path / 'vault-wiki'}`) or "
                          f"pass -C {tmp_path / 'vault-wiki'}.")
    assert run("ingest", "-C", tmp_path / "vault-wiki").exit_code == 0    # the fix works
    found = run("search", "canvas", "--json", "-C", tmp_path / "vault-wiki")
    assert [r["page"] for r in json.loads(found.stdout)["results"]] == ["Plugins/Canvas.md"]
