"""A re-run with nothing changed reads no note, recomputes no links digest and does not
rewrite the state (issue 20: no-op ingest <= 0.3 s on the vault, <= 10 s at 100k); whatever
changes a note's bytes is still seen."""

import os
import subprocess
import sys

from mindgraph.ingest import STATE_FILENAME, IngestState, run_ingest
from mindgraph.ingest import index as index_mod
from mindgraph.ingest.index import IndexEntry, TitleIndex
from mindgraph.ingest.notes import RACY_NS

from ingest_helpers import read_wiki, tree_hashes

OLD = 1_600_000_000     # an mtime long before the run: not "racy"


def age(path):
    """Give ``path`` an old mtime (a touch: the bytes stay)."""
    os.utime(path, (OLD, OLD))


def counting(monkeypatch, module, name, owner=None):
    """Count the calls of a real function (it still runs)."""
    calls = []
    target = owner if owner is not None else module
    real = getattr(target, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, spy)
    return calls


def not_racy(monkeypatch):
    """The run happens long after the files were written (RACY_NS ago or more)."""
    from mindgraph.ingest import notes
    real = notes.time.time_ns
    monkeypatch.setattr(notes.time, "time_ns", lambda: real() + 2 * RACY_NS)


def vault(write_raw):
    write_raw("Alpha.md", "# Alpha\nAlpha uses Beta.")
    write_raw("Beta.md", "# Beta\nBeta is used by Alpha and Gamma.")
    write_raw("notes/Gamma.md", "---\naliases: [G]\n---\n# Gamma\nGamma mentions Alpha.")


def test_a_no_op_run_reads_no_note_and_leaves_the_state_file_alone(settings, write_raw,
                                                                   monkeypatch, workspace):
    vault(write_raw)
    not_racy(monkeypatch)
    run_ingest(settings)
    path = settings.state_dir / STATE_FILENAME
    records = IngestState.load(path).files
    assert all(r.stat for r in records.values())
    before = os.stat(path)
    pages = tree_hashes(workspace / "wiki")
    reads = counting(monkeypatch, None, "read_note", owner=_notes_module())
    digests = counting(monkeypatch, None, "links_digest", owner=index_mod.TitleIndex)
    report = run_ingest(settings)
    assert (report.ingested, report.skipped, reads, digests) == (0, 3, [], [])
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert tree_hashes(workspace / "wiki") == pages


def _notes_module():
    from mindgraph.ingest import notes
    return notes


def test_same_size_new_bytes_under_the_old_mtime_are_seen(settings, write_raw, monkeypatch,
                                                          workspace):
    """cp -p / rsync -t keep the mtime: the ctime still tells the write."""
    vault(write_raw)
    not_racy(monkeypatch)
    run_ingest(settings)
    note = write_raw("Alpha.md", "# Alpha\nAlpha uses beta.")     # same length, same mtime
    assert os.stat(note).st_size == len("# Alpha\nAlpha uses Beta.")
    report = run_ingest(settings)
    assert [(f.path, f.status) for f in report.files] == [("Alpha.md", "ingested")]
    assert "[[Beta|beta]]" in read_wiki(workspace, "Alpha.md")


def test_a_touched_note_is_hashed_not_recompiled_and_its_stat_recorded(settings, write_raw,
                                                                        monkeypatch):
    vault(write_raw)
    not_racy(monkeypatch)
    run_ingest(settings)
    path = settings.state_dir / STATE_FILENAME
    old = IngestState.load(path).files["Beta.md"].stat
    age(settings.raw_dir / "Beta.md")
    report = run_ingest(settings)
    assert (report.ingested, report.skipped) == (0, 3)
    new = IngestState.load(path).files["Beta.md"].stat
    assert new and new != old and new.split("/")[1] == str(OLD * 10**9)
    # size, mtime, ctime and inode: a note replaced by another file is not taken for it
    assert new.split("/")[3] == str(os.stat(settings.raw_dir / "Beta.md").st_ino)
    reads = counting(monkeypatch, None, "read_note", owner=_notes_module())
    assert run_ingest(settings).skipped == 3 and reads == []


def test_a_stat_seen_within_the_racy_window_is_not_trusted(settings, write_raw):
    vault(write_raw)
    run_ingest(settings)            # the files were written just now: racy
    records = IngestState.load(settings.state_dir / STATE_FILENAME).files
    assert {r.stat for r in records.values()} == {""}


def test_force_reads_every_note(settings, write_raw, monkeypatch):
    vault(write_raw)
    not_racy(monkeypatch)
    run_ingest(settings)
    reads = counting(monkeypatch, None, "read_note", owner=_notes_module())
    assert run_ingest(settings, force=True).ingested == 3 and len(reads) == 3


def test_a_new_page_still_relinks_the_unread_notes_that_mention_it(settings, write_raw,
                                                                   monkeypatch, workspace):
    vault(write_raw)
    write_raw("Other.md", "Nothing relevant here.")
    not_racy(monkeypatch)
    run_ingest(settings)
    write_raw("notes/Delta.md", "# Delta\nA new page.")
    write_raw("Beta.md", "# Beta\nBeta is used by Alpha and Gamma and Delta.")
    report = run_ingest(settings)
    assert sorted(f.path for f in report.by_status("ingested")) == ["Beta.md", "notes/Delta.md"]
    assert "[[Delta]]" in read_wiki(workspace, "Beta.md")
    write_raw("Gamma.md", "# Gamma\nA second Gamma, at the top.")   # Gamma is now ambiguous
    report = run_ingest(settings)
    relinked = sorted(f.path for f in report.by_status("ingested"))
    assert "Gamma.md" in relinked and "Other.md" not in relinked


def test_links_basis_changes_whenever_the_links_digest_can():
    """Equal bases imply equal digests: every change of the index a digest reads changes the
    basis of a note that mentions the term."""
    base = [IndexEntry("a/Alpha.md", "Alpha"), IndexEntry("b/Beta.md", "Beta", ("Bee",)),
            IndexEntry("Gamma.md", "Gamma")]
    variants = [
        base,
        base + [IndexEntry("c/Alpha.md", "Alpha")],             # Alpha now in two folders
        base + [IndexEntry("x/Beta.md", "Other")],              # a second file named Beta
        [IndexEntry("a/Alpha.md", "Alpha"), IndexEntry("b/Beta.md", "Beta"),
         IndexEntry("Gamma.md", "Gamma")],                       # the alias Bee went
        [IndexEntry("a/Alpha.md", "Alpha"), IndexEntry("b/B2.md", "Beta", ("Bee",)),
         IndexEntry("Gamma.md", "Gamma")],                       # Beta's page moved
    ]
    mentions = ("alpha", "beta", "bee", "gamma")
    seen = {}
    for entries in variants:
        for generic in ((), ["gamma"] * 30):
            index = TitleIndex(entries).with_generic([mentions] * 30 if generic else [])
            for source in ("a/Note.md", "b/Note.md", "Note.md"):
                basis = index.links_basis(mentions, source)
                digest = index.links_digest(mentions, source)
                assert seen.setdefault(basis, digest) == digest


def test_ingested_elsewhere_follows_every_change_of_the_records(tmp_path):
    state = IngestState(tmp_path / STATE_FILENAME)
    state.transition("a.md", "pending", wiki="a.md")
    assert not state.ingested_elsewhere("b.txt", "a.md")        # pending owns nothing yet
    state.transition("a.md", "ingested")
    assert state.ingested_elsewhere("b.txt", "a.md") and not state.ingested_elsewhere("a.md", "a.md")
    state.refresh("a.md", wiki="moved.md")
    assert not state.ingested_elsewhere("b.txt", "a.md") and state.ingested_elsewhere("b", "moved.md")
    state.save()
    loaded = IngestState.load(tmp_path / STATE_FILENAME)
    assert loaded.ingested_elsewhere("b", "moved.md")
    loaded.drop("a.md")
    assert not loaded.ingested_elsewhere("b", "moved.md")


def test_importing_the_pipeline_loads_no_search_engine():
    """ingest's start-up: enrich's records without its service (keyword index, SciPy)."""
    code = ("import sys, mindgraph.ingest.pipeline; "
            "print(sorted(m for m in ('scipy', 'mindgraph.enrich.service', "
            "'mindgraph.retrieval') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_no_op_run_builds_no_term_set_and_counts_no_mention(settings, write_raw,
                                                              monkeypatch):
    """The term set and the generic terms of the last run are kept (a memo in the state):
    building them again took seconds of a no-op run at 100,000 notes."""
    vault(write_raw)
    not_racy(monkeypatch)
    run_ingest(settings)
    run_ingest(settings)
    terms = counting(monkeypatch, index_mod, "usable_term")
    generic = counting(monkeypatch, None, "with_generic", owner=index_mod.TitleIndex)
    path = settings.state_dir / STATE_FILENAME
    before = os.stat(path)
    report = run_ingest(settings)
    assert (report.ingested, report.skipped, terms, generic) == (0, 3, [], [])
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns


def test_generic_terms_are_found_again_when_a_note_goes(settings, write_raw, monkeypatch,
                                                        workspace):
    """Notes titled with bare numbers add no term: with them gone, no note is scanned again,
    yet the share of notes mentioning Beta grows and Beta turns generic (unlinked)."""
    monkeypatch.setattr(index_mod, "GENERIC_MIN_NOTES", 1)
    write_raw("Alpha.md", "# Alpha\nAlpha uses Beta.")
    write_raw("Beta.md", "# Beta\nBeta text.")
    for n in range(100, 104):
        write_raw(f"{n}.md", f"# {n}\nplain")
    not_racy(monkeypatch)
    run_ingest(settings)
    assert "[[Beta]]" in read_wiki(workspace, "Alpha.md")
    assert run_ingest(settings).ingested == 0
    for n in range(100, 103):
        (settings.raw_dir / f"{n}.md").unlink()
    report = run_ingest(settings)
    assert [f.path for f in report.by_status("ingested")] == ["Alpha.md"]
    assert "[[Beta]]" not in read_wiki(workspace, "Alpha.md")


def test_a_damaged_index_memo_is_found_again(settings, write_raw, monkeypatch, workspace):
    vault(write_raw)
    not_racy(monkeypatch)
    run_ingest(settings)
    path = settings.state_dir / STATE_FILENAME
    pages = tree_hashes(workspace / "wiki")
    text = path.read_text()
    assert '"index":{' in text
    path.write_text(text.replace('"index":{', '"index":{"generic":["not","text"],', 1))
    assert run_ingest(settings).ingested == 0
    assert tree_hashes(workspace / "wiki") == pages


def test_a_no_op_run_lists_the_wiki_folders_instead_of_a_stat_per_page(settings, write_raw,
                                                                       monkeypatch, workspace):
    vault(write_raw)
    not_racy(monkeypatch)
    run_ingest(settings)
    wiki = str(workspace / "wiki")
    real = os.path.isfile
    stats = []

    def isfile(path):
        if str(path).startswith(wiki):
            stats.append(path)
        return real(path)

    monkeypatch.setattr(os.path, "isfile", isfile)
    assert run_ingest(settings).skipped == 3 and stats == []
    (workspace / "wiki" / "notes" / "Gamma.md").unlink()        # a page deleted by hand
    report = run_ingest(settings)
    assert [f.path for f in report.by_status("ingested")] == ["notes/Gamma.md"]
    assert (workspace / "wiki" / "notes" / "Gamma.md").is_file()


def test_a_note_that_failed_keeps_no_mentions_of_its_old_text(settings, write_raw, workspace):
    """A note whose new bytes could not be compiled must not keep the mentions scanned from
    its old bytes under its new hash: once it compiles (a limit raised, the same bytes) they
    would be reused as if they were its own."""
    import dataclasses
    vault(write_raw)
    run_ingest(settings)
    path = settings.state_dir / STATE_FILENAME
    assert IngestState.load(path).files["Alpha.md"].mentions       # it mentions Beta
    write_raw("Alpha.md", "# Alpha\nAlpha talks of Gamma now. " + "x" * 400)
    small = dataclasses.replace(settings, compile=dataclasses.replace(settings.compile,
                                                                      max_note_bytes=200))
    report = run_ingest(small)
    assert [o.path for o in report.by_status("failed")] == ["Alpha.md"]
    record = IngestState.load(path).files["Alpha.md"]
    assert record.status == "failed" and not record.terms          # nothing to reuse
    run_ingest(settings)
    record = IngestState.load(path).files["Alpha.md"]
    assert record.status == "ingested" and "gamma" in record.mentions
    assert "beta" not in record.mentions


def test_force_trusts_no_index_memo(settings, write_raw, workspace):
    """A memo that names a wrong generic term (damaged, or kept from other term rules) is
    reused by a no-op run until a note changes; ``--force`` must find the terms again."""
    import json
    vault(write_raw)
    run_ingest(settings)
    pages = tree_hashes(workspace / "wiki")
    assert "[[Beta]]" in (workspace / "wiki" / "Alpha.md").read_text()
    path = settings.state_dir / STATE_FILENAME
    data = json.loads(path.read_text())
    data["index"]["generic"] = "beta"        # well-formed, and wrong
    path.write_text(json.dumps(data))
    assert run_ingest(settings, force=True).ingested == 3
    assert tree_hashes(workspace / "wiki") == pages


def test_the_generic_terms_memo_is_tied_to_the_term_rules(monkeypatch):
    entries = [IndexEntry("Alpha.md", "Alpha", ()), IndexEntry("Beta.md", "Beta", ())]
    notes, mentions = [("Alpha.md", "h1")], [("beta",)]
    _, memo = TitleIndex(entries).with_generic_recalled({}, notes, mentions)
    monkeypatch.setattr(index_mod, "_code_digest", lambda: "other rules")
    _, again = TitleIndex(entries).with_generic_recalled(memo, notes, mentions)
    assert again["generic_of"] != memo["generic_of"]
