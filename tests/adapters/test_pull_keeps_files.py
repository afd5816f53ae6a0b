"""`mindgraph pull` never loses a file a person wrote, and a title is one safe file name.

Through the CLI against the fake TickTick open API on a local port (and the filesystem
adapter): a note at an item's path that pull did not write, or a pulled note edited since,
is kept and the item filed beside it under a name of its own, the same at every pull; a
title's ``/`` makes no folder, and items whose safe names meet do not overwrite each other.
"""

import json
import unicodedata

import pytest
from click.testing import CliRunner
from ticktick_fake import FakeTickTick, pull_workspace

from mindgraph.cli import cli

ERRANDS = "6226ff9877acee87727f6bca"
PASSPORT = "63b7bebb91c0a5474805fcd4"
PASSPORT_NOTE = "ticktick/Errands/Renew passport.md"


@pytest.fixture
def fake():
    return FakeTickTick()


@pytest.fixture
def workspace(tmp_path, fake, monkeypatch):
    """A workspace whose `tasks` adapter is the fake TickTick, listed afresh at every pull."""
    with pull_workspace(tmp_path, fake, monkeypatch) as base:
        yield base


def pull(workspace, *args, code=0):
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), *args],
                                catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def add_task(fake, task_id, title, project=ERRANDS, content="from the app"):
    fake.tasks[task_id] = {"id": task_id, "projectId": project, "title": title,
                           "content": content, "status": 0, "tags": [],
                           "modifiedTime": "2026-11-30T18:02:11.000+0000"}


def raw_files(workspace):
    root = workspace / "raw"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_a_persons_note_at_an_items_path_is_kept_and_the_item_filed_beside_it(workspace,
                                                                             fake):
    mine = workspace / "raw" / "ticktick" / "Errands" / "Buy stamps.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("# Buy stamps\nMy own list: 10 stamps, 2 for abroad.\n")
    add_task(fake, "6a1f00000000000000000001", "Buy stamps")

    first = pull(workspace, "--json")
    assert mine.read_text() == "# Buy stamps\nMy own list: 10 stamps, 2 for abroad.\n"
    beside = [f for f in json.loads(first.stdout)["files"] if f["instead_of"]]
    assert len(beside) == 1 and beside[0]["status"] == "written"
    copy = beside[0]["path"]
    assert beside[0]["instead_of"] == "ticktick/Errands/Buy stamps.md"
    assert copy.startswith("ticktick/Errands/Buy stamps (tasks ") and copy.endswith(").md")
    assert "pull did not write there" in beside[0]["reason"] and copy in beside[0]["reason"]
    assert (f"kept        [tasks] ticktick/Errands/Buy stamps.md: raw/ticktick/Errands/Buy "
            f"stamps.md holds a file pull did not write there") in first.stderr
    assert "item_id: 6a1f00000000000000000001" in (workspace / "raw" / copy).read_text()

    fake.tasks["6a1f00000000000000000001"]["content"] = "ten stamps"   # changed in the app
    second = pull(workspace)
    assert f"written     [tasks] {copy}" in second.stdout            # the same copy, updated
    assert "ten stamps" in (workspace / "raw" / copy).read_text()
    assert mine.read_text().startswith("# Buy stamps\nMy own list")
    assert len([f for f in raw_files(workspace) if "Buy stamps" in f]) == 2

    mine.unlink()                   # the person lets the item have its path again
    third = pull(workspace, "--json")
    outcome = {f["path"]: f["status"] for f in json.loads(third.stdout)["files"]
               if f["status"] != "unchanged"}
    assert outcome == {"ticktick/Errands/Buy stamps.md": "written", copy: "removed"}
    assert "ten stamps" in mine.read_text()
    assert not (workspace / "raw" / copy).exists()


def test_a_pulled_note_edited_in_raw_is_never_overwritten(workspace, fake):
    pull(workspace)
    note = workspace / "raw" / PASSPORT_NOTE
    edited = note.read_text() + "\nMy own addition: the consulate closes at noon.\n"
    note.write_text(edited)

    again = pull(workspace)                           # the item did not change: no revert
    assert note.read_text() == edited
    fake.tasks[PASSPORT]["content"] = "Rebooked for Friday."
    changed = pull(workspace, "--json")
    assert note.read_text() == edited
    filed = {f["path"]: f for f in json.loads(changed.stdout)["files"]}
    copy = next(p for p, f in filed.items() if f["instead_of"] == PASSPORT_NOTE)
    assert "Rebooked for Friday." in (workspace / "raw" / copy).read_text()
    assert "kept        [tasks] ticktick/Errands/Renew passport.md" in again.stderr

    fake.delete(PASSPORT)                              # gone from the app: the copy goes,
    gone = pull(workspace, "--json")                   # the person's edited note stays
    outcome = {f["path"]: f["status"] for f in json.loads(gone.stdout)["files"]
               if f["status"] != "unchanged"}
    assert outcome == {copy: "removed"}
    assert note.read_text() == edited


def test_a_title_is_one_safe_file_name_and_alike_names_do_not_overwrite(workspace, fake):
    long_ja = "長い題名の覚え書き" * 40                   # 1,080 bytes of UTF-8
    titles = {
        "6b0000000000000000000001": "Milk/eggs",
        "6b0000000000000000000002": "Milk_eggs",
        "6b0000000000000000000003": "..\\..\\up",
        "6b0000000000000000000004": "COM1.backup",
        "6b0000000000000000000005": "bell\x07and\nnewline\u202e",
        "6b0000000000000000000006": ".hidden",
        "6b0000000000000000000007": long_ja + "一",
        "6b0000000000000000000008": long_ja + "二",
        "6b0000000000000000000009": "...",
    }
    fake.projects.append({"id": "6226ff9877acee87727f6bce", "name": "Home/Work",
                          "closed": False, "kind": "TASK"})
    for task_id, title in titles.items():
        add_task(fake, task_id, title, content=f"content {task_id}")
    add_task(fake, "6b000000000000000000000a", "Plan/Week", "6226ff9877acee87727f6bce")
    pull(workspace)

    errands = workspace / "raw" / "ticktick" / "Errands"
    assert all(p.is_file() for p in errands.iterdir())          # no title made a folder
    assert sorted(p.name for p in (workspace / "raw" / "ticktick").iterdir()) == [
        "Errands", "Home_Work", "Inbox", "Reading notes", "Work"]
    assert (workspace / "raw" / "ticktick" / "Home_Work" / "Plan_Week.md").is_file()
    by_id = {}
    for path in errands.iterdir():
        name = path.name
        assert len(name.encode("utf-8")) <= 255 and name.endswith(".md"), name
        assert not name.startswith(".") and name.split(".")[0].upper() != "COM1"
        assert not any(unicodedata.category(c) == "Cc" for c in name), name
        assert "\u202e" not in name
        text = path.read_text()
        by_id[text.split("item_id: ")[1].split("\n")[0].strip("'\"")] = name
    assert set(titles) <= set(by_id)                   # every item has its own file
    for task_id in titles:
        assert f"content {task_id}" in (errands / by_id[task_id]).read_text()
    assert by_id["6b0000000000000000000001"] == "Milk_eggs.md"
    assert by_id["6b0000000000000000000002"] == "Milk_eggs (6b000000).md"
    assert by_id["6b0000000000000000000004"] == "_COM1.backup.md"
    assert by_id["6b0000000000000000000006"] == "hidden.md"
    assert by_id["6b0000000000000000000009"] == "Untitled.md"


def test_the_filesystem_adapter_keeps_a_persons_note_too(tmp_path):
    source = tmp_path / "vault"
    source.mkdir()
    (source / "Idea.md").write_text("# Idea\nfrom the vault\n")
    (source / "Same.md").write_text("# Same\n")
    (tmp_path / "raw" / "vault").mkdir(parents=True)
    mine = tmp_path / "raw" / "vault" / "Idea.md"
    mine.write_text("# Idea\nwritten in raw/ by hand\n")
    (tmp_path / "raw" / "vault" / "Same.md").write_text("# Same\n")   # already pulled bytes
    (tmp_path / "mindgraph.yml").write_text(
        "adapters:\n  - name: vault\n    type: filesystem\n    target: vault\n"
        "    options: {path: vault}\n")

    result = pull(tmp_path, "--json")
    assert mine.read_text() == "# Idea\nwritten in raw/ by hand\n"
    files = {f["path"]: f for f in json.loads(result.stdout)["files"]}
    copy = next(p for p, f in files.items() if f["instead_of"] == "vault/Idea.md")
    assert copy.startswith("vault/Idea (vault ") and copy.endswith(").md")
    assert (tmp_path / "raw" / copy).read_text() == "# Idea\nfrom the vault\n"
    assert files["vault/Same.md"]["status"] == "unchanged"    # its own bytes: pull's, no copy
    assert len(raw_files(tmp_path)) == 3

    (source / "Same.md").write_text("# Same\nchanged in the vault\n")
    pull(tmp_path)
    assert (tmp_path / "raw" / "vault" / "Same.md").read_text().endswith("in the vault\n")
    assert len(raw_files(tmp_path)) == 3


def test_create_names_the_copy_pull_files_beside_a_persons_note(workspace, fake):
    config = workspace / "mindgraph.yml"         # the corpus cache on: create knows the lists
    config.write_text(config.read_text().replace("cache_ttl_s: 0", "cache_ttl_s: 300"))
    mine = workspace / "raw" / "ticktick" / "Errands" / "Buy stamps.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("# Buy stamps\nmine\n")
    made = CliRunner().invoke(cli, ["create", "Buy stamps", "--project", "Errands", "--json",
                                    "-C", str(workspace)], catch_exceptions=False)
    said = json.loads(made.stdout)["raw_note"]
    assert said.startswith("ticktick/Errands/Buy stamps (tasks ")
    written = [f["path"] for f in json.loads(pull(workspace, "--json").stdout)["files"]
               if f["instead_of"]]
    assert written == [said] and mine.read_text() == "# Buy stamps\nmine\n"
    updated = CliRunner().invoke(cli, ["update", said, "--append", "ten", "--json", "-C",
                                       str(workspace)], catch_exceptions=False)
    assert json.loads(updated.stdout)["item"]["id"] == json.loads(made.stdout)["item"]["id"]


def test_an_edited_copy_is_kept_when_the_item_goes_back_to_its_path(workspace, fake):
    mine = workspace / "raw" / "ticktick" / "Errands" / "Buy stamps.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("mine\n")
    add_task(fake, "6a1f00000000000000000001", "Buy stamps")
    first = json.loads(pull(workspace, "--json").stdout)
    copy = next(f["path"] for f in first["files"] if f["instead_of"])
    (workspace / "raw" / copy).write_text("the copy, edited by hand\n")
    mine.unlink()

    back = pull(workspace)
    assert (workspace / "raw" / copy).read_text() == "the copy, edited by hand\n"
    assert f"kept        [tasks] {copy}: raw/{copy}: the copy pull wrote beside" in back.stdout
    assert "item_id: 6a1f00000000000000000001" in mine.read_text()
    assert copy not in pull(workspace).stdout             # said once: it is the person's now
    fake.delete("6a1f00000000000000000001")             # the item's own note goes,
    gone = json.loads(pull(workspace, "--json").stdout)   # the person's copy stays, unsaid
    assert {f["path"]: f["status"] for f in gone["files"] if f["status"] != "unchanged"} == {
        "ticktick/Errands/Buy stamps.md": "removed"}
    assert (workspace / "raw" / copy).read_text() == "the copy, edited by hand\n"


def test_a_title_that_is_another_items_copy_name_overwrites_nothing(workspace, fake):
    import hashlib

    mine = workspace / "raw" / "ticktick" / "Errands" / "Buy stamps.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("mine\n")
    copy_of = hashlib.sha256(b"6a1f00000000000000000001").hexdigest()[:6]
    add_task(fake, "6a1f00000000000000000001", "Buy stamps", content="the real item")
    add_task(fake, "6a1f00000000000000000002", f"Buy stamps (tasks {copy_of})",
             content="an item titled as the copy")
    result = pull(workspace, "--json", code=1)
    files = json.loads(result.stdout)["files"]
    rejected = [f for f in files if f["status"] == "rejected"]
    assert len(rejected) == 1 and "give the documents distinct" in rejected[0]["reason"]
    assert rejected[0]["path"] == f"Errands/Buy stamps (tasks {copy_of}).md"   # the 2nd item
    copy = workspace / "raw" / "ticktick" / "Errands" / f"Buy stamps (tasks {copy_of}).md"
    assert "the real item" in copy.read_text() and mine.read_text() == "mine\n"


def test_an_editors_save_between_pulls_check_and_its_write_is_kept(workspace, fake,
                                                                 monkeypatch):
    """pull checked the file's hash, then wrote its temp file and renamed it over the path:
    a save landing in between was replaced. The hash is checked again just before the
    rename; a file changed since is kept and the document filed beside it."""
    import importlib
    from pathlib import Path

    pull(workspace)
    note = (workspace / "raw" / PASSPORT_NOTE).resolve()
    fake.tasks[PASSPORT]["content"] = "Rebooked for Friday."
    saved = "# Renew passport\nMy edit, saved while pull was writing.\n"
    module = importlib.import_module("mindgraph.adapters.pull")
    real = module.atomic_write_bytes

    def editor_saves_meanwhile(path, data, *args, **kwargs):
        if Path(path).resolve() == note and note.read_text() != saved:
            note.write_text(saved)               # after pull's check, before its write
        real(path, data, *args, **kwargs)

    monkeypatch.setattr(module, "atomic_write_bytes", editor_saves_meanwhile)
    result = pull(workspace, "--json")

    assert note.read_text() == saved
    filed = {f["path"]: f for f in json.loads(result.stdout)["files"]}
    copy = next(p for p, f in filed.items() if f["instead_of"] == PASSPORT_NOTE)
    assert filed[copy]["status"] == "written"
    assert "Rebooked for Friday." in (workspace / "raw" / copy).read_text()
    assert f"kept        [tasks] {PASSPORT_NOTE}" in result.stderr
    monkeypatch.setattr(module, "atomic_write_bytes", real)
    again = json.loads(pull(workspace, "--json").stdout)       # the edit is the person's now
    assert {f["path"]: f["status"] for f in again["files"] if f["instead_of"]} == {
        copy: "unchanged"}
    assert note.read_text() == saved
