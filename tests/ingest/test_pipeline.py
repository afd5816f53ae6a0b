"""run_ingest end to end (offline): incremental, raw/ untouched, bad input reported per file."""

import fcntl
import os

import pytest
import yaml

from mindgraph.config import load_settings
from mindgraph.errors import ConfigError, IngestError, RemovalsHeld
from mindgraph.ingest import STATE_FILENAME, IngestState, run_ingest
from mindgraph.page.markdown import split_frontmatter

from ingest_helpers import read_wiki, tree_hashes


def meta(workspace, rel):
    return yaml.safe_load(split_frontmatter(read_wiki(workspace, rel))[0])


def state(settings):
    return IngestState.load(settings.state_dir / STATE_FILENAME)


def test_compiles_every_note_keeping_folders(workspace, settings, write_raw):
    write_raw("Index.md", "# Home\nSee the projects index.")
    write_raw("projects/Index.md", "Projects list. Alpha is the first project.")
    write_raw("areas/Index.md", "Areas list.")
    write_raw("notes/plain.txt", "A plain text note about alpha.")
    write_raw("Alpha.markdown", "Alpha is a project.")
    report = run_ingest(settings)
    assert report.ingested == 5 and report.failed == 0 and report.ok
    wiki = sorted(p.relative_to(workspace / "wiki").as_posix()
                  for p in (workspace / "wiki").rglob("*.md"))
    assert wiki == ["Alpha.md", "Index.md", "areas/Index.md", "notes/plain.md",
                    "projects/Index.md"]
    assert meta(workspace, "notes/plain.md")["provenance"]["sources"][0]["path"] == "notes/plain.txt"
    assert "[[Alpha|alpha]]" in read_wiki(workspace, "notes/plain.md")
    assert {r.status for r in state(settings).files.values()} == {"ingested"}


def test_raw_is_never_written(workspace, settings, write_raw):
    write_raw("a.md", "# A\nText about B.")
    write_raw("b.md", "B text.")
    write_raw("bad.md", "---\ntitle: [oops\n---\nbody")
    write_raw("bin.md", b"\x00\x01binary")
    write_raw("latin1.md", "caf\xe9".encode("latin-1"))
    write_raw("empty.md", "")
    write_raw("pic.png", b"\x89PNG")
    os.symlink("loop2", workspace / "raw" / "loop1")
    os.symlink("loop1", workspace / "raw" / "loop2")
    before = tree_hashes(workspace / "raw")
    stats = {p: os.stat(workspace / "raw" / p, follow_symlinks=False).st_mtime_ns
             for p in before}
    run_ingest(settings)
    (workspace / "raw" / "b.md").unlink()
    before.pop("b.md")
    run_ingest(settings, force=True)
    run_ingest(settings, dry_run=True)
    assert tree_hashes(workspace / "raw") == before
    assert all(os.stat(workspace / "raw" / p, follow_symlinks=False).st_mtime_ns == stats[p]
               for p in before)


def test_a_symlink_in_wiki_cannot_lead_writes_into_raw(workspace, settings, write_raw):
    write_raw("sub/x.md", "Note x.")
    (workspace / "wiki").mkdir()
    os.symlink(workspace / "raw" / "sub", workspace / "wiki" / "sub")
    before = tree_hashes(workspace / "raw")
    report = run_ingest(settings)
    assert report.failed == 1
    assert "would be written outside wiki/" in report.files[0].reason
    assert tree_hashes(workspace / "raw") == before


def test_rerun_skips_everything_and_one_change_recompiles_one(workspace, settings, write_raw):
    for i in range(5):
        write_raw(f"n{i}.md", f"Note {i} text.")
    run_ingest(settings)
    pages = tree_hashes(workspace / "wiki")
    again = run_ingest(settings)
    assert (again.ingested, again.skipped, again.files) == (0, 5, ())
    assert tree_hashes(workspace / "wiki") == pages
    write_raw("n3.md", "Note 3 changed text.")
    third = run_ingest(settings)
    assert [(f.path, f.status) for f in third.files] == [("n3.md", "ingested")]
    assert third.skipped == 4


def test_a_new_page_relinks_only_the_notes_that_mention_it(workspace, settings, write_raw):
    write_raw("a.md", "We use Kubernetes here.")
    write_raw("b.md", "Nothing relevant.")
    run_ingest(settings)
    write_raw("Kubernetes.md", "Kubernetes is a container orchestrator.")
    report = run_ingest(settings)
    assert sorted(f.path for f in report.by_status("ingested")) == ["Kubernetes.md", "a.md"]
    assert "[[Kubernetes]]" in read_wiki(workspace, "a.md")


def test_deleted_note_removes_its_page_and_empty_folders(workspace, settings, write_raw):
    write_raw("deep/er/gone.md", "Soon gone.")
    write_raw("stay.md", "Stays.")
    run_ingest(settings)
    (workspace / "raw" / "deep" / "er" / "gone.md").unlink()
    report = run_ingest(settings)
    assert [(f.path, f.status) for f in report.files] == [("deep/er/gone.md", "removed")]
    assert report.removed == 1
    assert not (workspace / "wiki" / "deep").exists()
    assert "deep/er/gone.md" not in state(settings).files


def test_a_page_written_by_a_killed_run_is_ours_when_its_note_goes(workspace, settings,
                                                                   write_raw):
    """A run killed after writing a recompiled page and before recording it leaves the record
    pending with the old page's hash; deleting the note then must remove that page, not keep
    it as hand-edited (seen in the watcher's SIGKILL test)."""
    write_raw("note.md", "First text.")
    run_ingest(settings)
    first = state(settings)
    write_raw("note.md", "Second text, recompiled.")
    run_ingest(settings)
    second = state(settings).files["note.md"]
    # the state as the killed run left it: pending on the new raw text, the old page's hash
    first.transition("note.md", "pending", sha256=second.sha256, compiler=second.compiler)
    first.save()
    (workspace / "raw" / "note.md").unlink()
    report = run_ingest(settings, allow_removals=True)   # its only page: held otherwise
    assert [(f.path, f.status) for f in report.files] == [("note.md", "removed")]
    assert not (workspace / "wiki" / "note.md").exists()


def test_deleted_note_with_hand_edited_page_is_kept_and_marked(workspace, settings, write_raw):
    write_raw("edited.md", "Original text.")
    run_ingest(settings)
    page = workspace / "wiki" / "edited.md"
    page.write_text(page.read_text() + "\nMy own addition.\n")
    (workspace / "raw" / "edited.md").unlink()
    with pytest.raises(RemovalsHeld, match="remove 1 of the 1 wiki pages"):
        run_ingest(settings)                # its only page, even if kept: held
    report = run_ingest(settings, allow_removals=True)
    assert report.kept == 1 and report.removed == 0
    assert "edited by hand" in report.files[0].reason
    text = page.read_text()
    assert "My own addition." in text
    assert meta(workspace, "edited.md")["source_deleted"] is True
    assert run_ingest(settings).files == ()       # no longer ours: left alone


def test_empty_note_is_skipped_and_emptying_a_note_removes_its_page(workspace, settings,
                                                                     write_raw):
    write_raw("e.md", "   \n")
    write_raw("f.md", "Has text.")
    report = run_ingest(settings)
    assert ("e.md", "skipped", "empty note; nothing to compile.") in \
        [(f.path, f.status, f.reason) for f in report.files]
    write_raw("f.md", "")
    report = run_ingest(settings, allow_removals=True)   # its only page: held otherwise
    assert ("f.md", "removed") in [(f.path, f.status) for f in report.files]
    assert not (workspace / "wiki" / "f.md").exists()


def test_bad_inputs_get_reasons_naming_file_line_and_fix(workspace, write_raw):
    (workspace / "mindgraph.yml").write_text("compile:\n  max_note_bytes: 1000\n")
    settings = load_settings(workspace)
    write_raw("good.md", "A good note.")
    write_raw("yaml.md", "---\ntitle: ok\nbad: [unclosed\n---\nbody")
    write_raw("utf.md", "line one\nline two caf\xe9\n".encode("latin-1"))
    write_raw("bin.md", b"PK\x03\x04\x00\x00binary")
    write_raw("huge.md", "x" * 1001)
    write_raw("notes.pdf", b"%PDF")
    os.symlink("loop-b", workspace / "raw" / "loop-a")
    os.symlink("loop-a", workspace / "raw" / "loop-b")
    report = run_ingest(settings)
    reasons = {f.path: (f.status, f.reason) for f in report.files}
    assert reasons["good.md"][0] == "ingested"
    assert reasons["yaml.md"][0] == "failed"
    assert reasons["yaml.md"][1].startswith("yaml.md:3: frontmatter is not valid YAML")
    assert "Fix the YAML" in reasons["yaml.md"][1]
    assert reasons["utf.md"] == ("failed", "utf.md:2: not valid UTF-8 (byte 0xe9 at offset "
                                           "21). Re-save the file as UTF-8.")
    assert reasons["bin.md"][1].startswith("bin.md:1: looks like a binary file")
    assert reasons["huge.md"][1].startswith("huge.md: 1001 bytes is over "
                                            "compile.max_note_bytes (1000)")
    assert reasons["notes.pdf"][0] == "skipped" and "not a note (.pdf)" in reasons["notes.pdf"][1]
    assert reasons["loop-a"] == ("skipped", "symlink loop; not followed. Remove the symlink "
                                            "from raw/.")
    assert report.failed == 4 and report.ingested == 1


def test_failed_note_is_retried_and_fixed_next_run(workspace, settings, write_raw):
    write_raw("x.md", "---\na: [\n---\ntext")
    assert run_ingest(settings).failed == 1
    assert state(settings).get("x.md").status == "failed"
    assert run_ingest(settings).failed == 1                # retried, still broken
    write_raw("x.md", "---\na: [1]\n---\ntext")
    report = run_ingest(settings)
    assert (report.failed, report.ingested) == (0, 1)
    assert state(settings).get("x.md").status == "ingested"


def test_name_collision_between_md_and_txt(workspace, settings, write_raw):
    write_raw("dup.md", "From md.")
    write_raw("dup.txt", "From txt.")
    report = run_ingest(settings)
    failed = report.by_status("failed")
    assert [f.path for f in failed] == ["dup.txt"]
    assert "same wiki page as dup.md" in failed[0].reason
    assert "From md." in read_wiki(workspace, "dup.md")


def test_force_only_and_dry_run(workspace, settings, write_raw):
    write_raw("a/one.md", "One.")
    write_raw("a/two.md", "Two.")
    write_raw("b/three.md", "Three.")
    dry = run_ingest(settings, dry_run=True)
    assert dry.ingested == 3 and dry.dry_run
    assert {f.status for f in dry.files} == {"pending"}
    assert not (workspace / "wiki").exists() and not settings.state_dir.exists()
    only = run_ingest(settings, only=["a"])
    assert sorted(f.path for f in only.files) == ["a/one.md", "a/two.md"]
    assert not (workspace / "wiki" / "b").exists()
    assert run_ingest(settings, only=["b/three.md"]).ingested == 1
    forced = run_ingest(settings, force=True)
    assert forced.ingested == 3 and forced.skipped == 0
    with pytest.raises(ConfigError, match="--only nope.md: no note or folder"):
        run_ingest(settings, only=["nope.md"])


def test_hand_edits_survive_until_the_raw_note_changes(workspace, settings, write_raw):
    write_raw("a.md", "Text.")
    run_ingest(settings)
    page = workspace / "wiki" / "a.md"
    page.write_text(page.read_text() + "edit\n")
    assert run_ingest(settings).files == ()
    assert page.read_text().endswith("edit\n")
    write_raw("a.md", "New text.")
    report = run_ingest(settings)
    assert "edited by hand" in report.files[0].reason
    assert not page.read_text().endswith("edit\n")
    page.unlink()
    assert run_ingest(settings).ingested == 1 and page.exists()


def test_a_second_concurrent_run_is_refused(workspace, settings, write_raw):
    write_raw("a.md", "Text.")
    settings.state_dir.mkdir()
    with open(settings.state_dir / "ingest.lock", "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        with pytest.raises(IngestError, match="another `mindgraph ingest` is running"):
            run_ingest(settings)
    assert run_ingest(settings).ingested == 1


def test_temp_files_of_a_killed_run_are_cleaned(workspace, settings, write_raw):
    write_raw("a.md", "Text.")
    (workspace / "wiki" / "sub").mkdir(parents=True)
    leftover = workspace / "wiki" / "sub" / ".a.md.abcd1234.tmp"
    leftover.write_text("torn")
    run_ingest(settings)
    assert not leftover.exists()


def test_wiki_and_state_inside_raw_are_refused(tmp_path):
    """raw/ is never written: a wiki or state folder in it is refused when the config loads
    (tests/cli/test_raw_safety.py runs the commands)."""
    (tmp_path / "mindgraph.yml").write_text("paths:\n  raw: .\n  wiki: ../compiled\n"
                                            "  state: cache\n")
    with pytest.raises(ConfigError, match=r"mindgraph.yml:4: 'paths.state' .* is inside "
                                          r"'paths.raw'"):
        load_settings(tmp_path)
    (tmp_path / "mindgraph.yml").write_text("paths:\n  raw: .\n  wiki: compiled\n")
    with pytest.raises(ConfigError, match=r"mindgraph.yml:3: 'paths.wiki' .* is inside "
                                          r"'paths.raw'.*set paths.wiki to a place outside "
                                          r"raw/ .*\(e.g. \.\./wiki\)"):
        load_settings(tmp_path)


def test_raw_inside_wiki_is_refused(tmp_path):
    (tmp_path / "wiki" / "raw").mkdir(parents=True)
    (tmp_path / "mindgraph.yml").write_text("paths:\n  raw: wiki/raw\n")
    with pytest.raises(ConfigError, match="mindgraph.yml:2: 'paths.raw' .* is inside "
                                          "'paths.wiki'"):
        load_settings(tmp_path)


def test_missing_raw_folder_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not a mindgraph workspace"):
        run_ingest(load_settings(tmp_path))
    (tmp_path / "mindgraph.yml").write_text("paths:\n  raw: notes\n")
    with pytest.raises(ConfigError, match="raw folder .*notes does not exist"):
        run_ingest(load_settings(tmp_path))


def test_wiki_pages_get_the_usual_file_mode_not_a_private_one(workspace, write_raw):
    import os
    import stat

    from mindgraph.fsutil import _UMASK

    write_raw("a.md", "A note.")
    run_ingest(load_settings(workspace))
    page = next((workspace / "wiki").glob("*.md"))
    assert stat.S_IMODE(page.stat().st_mode) == 0o666 & ~_UMASK     # as open() makes files
    os.chmod(page, 0o640)
    write_raw("a.md", "A changed note.")
    run_ingest(load_settings(workspace))
    assert stat.S_IMODE(page.stat().st_mode) == 0o640                 # a chosen mode is kept
    state = workspace / ".mindgraph" / ".ingest-state.json"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600                # state stays private


def test_a_lone_surrogate_escaped_in_frontmatter_fails_that_note_alone(workspace, settings,
                                                                      write_raw):
    """YAML's "\\udfff" escape reads as a lone surrogate, which no UTF-8 text can hold: the
    note fails with the field to fix, and the run goes on (a title or alias holding one
    stopped the whole ingest with a UnicodeEncodeError in the title index's digest)."""
    write_raw("good.md", "# Good\n\nA good note.\n")
    write_raw("title.md", '---\ntitle: "x\\udfffy"\n---\n# T\n\nBody.\n')
    write_raw("key.md", '---\ntags: [a]\n"k\\ud800": v\n---\nBody.\n')
    report = run_ingest(settings)
    reasons = {f.path: (f.status, f.reason) for f in report.files}
    assert reasons["good.md"][0] == "ingested"
    assert reasons["title.md"] == ("failed", (
        "title.md:2: frontmatter field 'title' holds a lone surrogate (an escape from \\ud800 "
        "to \\udfff), which no UTF-8 text can hold. Remove the escape, or write the character "
        "itself."))
    assert reasons["key.md"][0] == "failed"
    assert reasons["key.md"][1].startswith("key.md:3: frontmatter field 'k\\ud800' holds")
    assert (workspace / "wiki" / "good.md").exists()
