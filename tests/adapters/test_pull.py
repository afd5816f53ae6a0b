"""`pull`: documents land under raw/<target>/ and nowhere else; idempotent; never deletes."""

import os
import sys

import pytest

from mindgraph.adapters import pull
from mindgraph.config import load_settings
from mindgraph.errors import ConfigError

HOSTILE = '''
from mindgraph.adapters import RawDocument

class Hostile:
    def __init__(self, names=(), fail=False):
        self.names = names
        self.fail = fail

    def fetch(self):
        if self.fail:
            raise ConnectionError("service down")
        return [RawDocument(f"content of {n}", n, {"mtime": 1_600_000_000}) for n in self.names]
'''


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A base folder with raw/ and an importable hostile adapter module."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "mg_hostile.py").write_text(HOSTILE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("mg_hostile", None)


def configure(workspace, names, target="inbox", extra=""):
    listed = ", ".join(repr(n) for n in names)
    (workspace / "mindgraph.yml").write_text(
        f"adapters:\n  - name: h\n    type: mg_hostile.Hostile\n    target: {target!r}\n"
        f"    options: {{names: [{listed}]}}\n{extra}")
    return load_settings(workspace)


def all_files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_hostile_names_stay_inside_raw_target(workspace):
    names = ["../../escape.md", "/etc/cron.d/x.md", "a/../../../b.md", "..\\..\\win.md",
             "ok/Note.md", "..", "con.md"]
    settings = configure(workspace, names)
    report = pull(settings)
    outside = sorted(p.name for p in workspace.iterdir())
    assert outside == [".mindgraph", "mg_hostile.py", "mindgraph.yml", "raw"]
    assert all_files(workspace / ".mindgraph") == ["pull.lock", "pulled/h.json"]  # pull's
    assert all_files(workspace / "raw") == ["inbox/_con.md", "inbox/a/b.md", "inbox/escape.md",
                                            "inbox/etc/cron.d/x.md", "inbox/ok/Note.md",
                                            "inbox/win.md"]
    assert report.written == 6 and report.rejected == 1 and not report.ok
    assert (workspace / "raw" / "inbox" / "ok" / "Note.md").stat().st_mtime == 1_600_000_000


def test_symlink_in_raw_cannot_lead_a_document_outside(workspace, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    os.symlink(outside, workspace / "raw" / "inbox")
    settings = configure(workspace, ["x.md", "sub/y.md"])
    report = pull(settings)
    assert report.written == 0 and report.rejected == 2
    assert "symlink" in report.files[0].reason
    assert list(outside.iterdir()) == []


def test_second_pull_is_unchanged_and_nothing_is_deleted(workspace):
    settings = configure(workspace, ["a.md", "b.md"])
    assert pull(settings).written == 2
    (workspace / "raw" / "inbox" / "mine.md").write_text("written by the person")
    settings = configure(workspace, ["a.md"])
    report = pull(settings)
    assert (report.written, report.unchanged) == (0, 1)
    assert all_files(workspace / "raw") == ["inbox/a.md", "inbox/b.md", "inbox/mine.md"]


def test_dry_run_writes_nothing(workspace):
    settings = configure(workspace, ["a.md"])
    report = pull(settings, dry_run=True)
    assert report.written == 1 and report.dry_run
    assert all_files(workspace / "raw") == []


def test_duplicate_names_are_rejected_and_case_twins_filed_beside(workspace):
    settings = configure(workspace, ["x/A.md", "./x/A.md", "X/a.md"])
    report = pull(settings)
    assert report.written == 2 and report.rejected == 1
    assert "distinct file names" in report.files[1].reason      # one path twice: refused
    # a path that differs only in case is one file on macOS and Windows: filed beside it
    assert report.files[2].path == "inbox/X/a (h 0beed4).md"
    assert report.files[2].reason.startswith("'X/a.md' and raw/inbox/x/A.md are one file name")
    assert all_files(workspace / "raw") == ["inbox/X/a (h 0beed4).md", "inbox/x/A.md"]


def test_a_failing_adapter_fails_alone(workspace, tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    (src / "n.md").write_text("note")
    settings = configure(workspace, ["a.md"], extra=(
        f"  - name: down\n    type: mg_hostile.Hostile\n    options: {{fail: true}}\n"
        f"  - name: files\n    type: filesystem\n    options: {{path: {src}}}\n"))
    report = pull(settings)
    assert report.failed_adapters == 1 and report.written == 2
    failed = [f for f in report.files if f.status == "failed"]
    assert "ConnectionError: service down" in failed[0].reason
    assert all_files(workspace / "raw") == ["files/n.md", "inbox/a.md"]
    only = pull(settings, ["files"])
    assert only.failed_adapters == 0 and only.unchanged == 1
    with pytest.raises(ConfigError, match="no adapter named nope"):
        pull(settings, ["nope"])


def test_a_file_and_a_folder_of_one_name_two_adapters_on_one_file_and_odd_content(
        workspace, tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    (src / "n.md").write_text("note")
    os.mkfifo(src / "pipe.md")                                # would block a read forever
    settings = configure(workspace, ["d.md/child.md", "d.md", "n.md"], extra=(
        f"  - name: files\n    type: filesystem\n    target: inbox\n"
        f"    options: {{path: {src}}}\n"))
    report = pull(settings)                                   # no traceback, no hang
    reasons = {f.path: f.reason for f in report.files if f.status == "rejected"}
    assert "a file and a folder share that name" in reasons["inbox/d.md"]
    assert "adapter 'h' already pulled inbox/n.md" in reasons["inbox/n.md"]
    assert (workspace / "raw" / "inbox" / "n.md").read_text() == "content of n.md"
    again = pull(settings)                                     # the same every run
    assert [(f.path, f.status) for f in again.files] == \
        [(f.path, "unchanged" if f.status == "written" else f.status) for f in report.files]
    assert not any("pipe" in f.path for f in report.files)


def test_content_that_is_not_bytes_is_rejected(workspace):
    (workspace / "mg_odd.py").write_text(
        "from mindgraph.adapters import RawDocument\n"
        "class Odd:\n"
        "    def fetch(self):\n"
        "        return [RawDocument(None, 'none.md'), RawDocument(b'ok', 'nan.md',\n"
        "                {'mtime': float('nan')}), RawDocument(b'x', 'big.md', {'mtime': 1e30})]\n")
    (workspace / "mindgraph.yml").write_text("adapters:\n  - name: o\n    type: mg_odd.Odd\n")
    try:
        report = pull(load_settings(workspace))
    finally:
        sys.modules.pop("mg_odd", None)
    assert [(f.path, f.status) for f in report.files] == \
        [("o/none.md", "rejected"), ("o/nan.md", "written"), ("o/big.md", "written")]
    assert "not bytes" in report.files[0].reason


BIG = '''
from mindgraph.adapters import RawDocument

class Big:
    target = "app"

    def fetch(self):
        return [RawDocument("x" * 5000, "huge.md"), RawDocument("small", "small.md")]
'''


def test_a_file_over_the_page_cap_is_skipped_unread_and_named_with_the_setting(workspace):
    from click.testing import CliRunner

    from mindgraph.cli import cli

    source = workspace / "notes"
    source.mkdir()
    (source / "small.md").write_text("# Small\n")
    (source / "big.md").write_bytes(b"# Big\n" + b"y" * 4000)
    (workspace / "mg_big.py").write_text(BIG)
    (workspace / "mindgraph.yml").write_text(
        "compile:\n  max_note_bytes: 1000\nlimits:\n  max_page_bytes: 2000\nadapters:\n"
        "  - name: notes\n    type: filesystem\n    target: notes\n    options: {path: notes}\n"
        "  - name: app\n    type: mg_big.Big\n")
    try:
        result = CliRunner().invoke(cli, ["pull", "-C", str(workspace)])
    finally:
        sys.modules.pop("mg_big", None)
    assert result.exit_code == 0, result.output                 # a skip is no failure
    assert all_files(workspace / "raw") == ["app/small.md", "notes/small.md"]
    for name, size in (("big.md", "4,006"), ("huge.md", "5,000")):
        assert (f"{name}: {size} bytes is over limits.max_page_bytes (2,000), which no command "
                f"would read; not pulled (never truncated). Split it at the source or raise "
                f"limits.max_page_bytes in mindgraph.yml.") in result.output
    assert "Written 2, unchanged 0, rejected 0, skipped 2, failed adapters 0" in result.output


def test_the_filesystem_adapter_does_not_read_a_file_over_its_cap(tmp_path, monkeypatch):
    from mindgraph.adapters import filesystem

    (tmp_path / "big.md").write_bytes(b"z" * 3000)
    read = []
    monkeypatch.setattr(filesystem, "read_bytes",
                        lambda path, **kw: read.append(path.name) or b"")
    adapter = filesystem.FilesystemAdapter(tmp_path, max_bytes=2000)
    assert adapter.fetch() == [] and read == []
    assert adapter.oversized == [("big.md", 3000)]


ENDLESS = '''
from mindgraph.adapters import RawDocument

class Endless:
    """A note app listing notes for ever (a hostile or a huge one)."""
    remote = True

    def __init__(self, count=None, **_):
        self.count = count
        self.listed = 0

    def fetch(self):
        while self.count is None or self.listed < self.count:
            self.listed += 1
            yield RawDocument(f"note {self.listed}", f"n{self.listed}.md", {})
'''


def test_a_pull_takes_at_most_max_pull_notes_and_says_how_to_raise_it(workspace):
    """An app listing without end filled raw/ (and the disk) with every note it listed."""
    import json

    from click.testing import CliRunner

    from mindgraph.cli import cli

    (workspace / "mg_endless.py").write_text(ENDLESS)

    def pull_cli(limits, count, *args):
        (workspace / "mindgraph.yml").write_text(
            f"{limits}adapters:\n  - name: app\n    type: mg_endless.Endless\n    target: app\n"
            f"    options: {{count: {count}}}\n")
        return CliRunner().invoke(cli, ["pull", "-C", str(workspace), *args])

    try:
        assert pull_cli("", 3).exit_code == 0
        result = pull_cli("limits:\n  max_pull_notes: 2\n", 40)
        listing = json.loads(pull_cli("limits:\n  max_pull_notes: 2\n", 40, "--json").output)
    finally:
        sys.modules.pop("mg_endless", None)
    assert result.exit_code == 1, result.output
    assert ("limited     [app] -: adapter 'app' listed more than limits.max_pull_notes (2) "
            "notes; pulled the first 2 as listed, left out at least 1 (the listing was read "
            "no further), and no note of it removed this run. Raise limits.max_pull_notes in "
            "mindgraph.yml") in result.output
    assert ("Written 0, unchanged 2, rejected 0, skipped 0, failed adapters 0, adapters cut at "
            "a pull limit 1 (left out at least 1)") in result.output
    # n3.md is past the limit, not gone from the app: a cut listing removes nothing
    assert all_files(workspace / "raw") == ["app/n1.md", "app/n2.md", "app/n3.md"]
    assert listing["limited_adapters"] == 1 and listing["unchanged"] == 2
    assert listing["left_out"] == 1 and listing["files"][0]["left_out_at_least"] is True
    assert [f["status"] for f in listing["files"]] == ["limited", "unchanged", "unchanged"]


def test_max_pull_notes_must_be_at_least_one(workspace):
    with pytest.raises(ConfigError, match="limits.max_pull_notes"):
        configure(workspace, ["a.md"], extra="limits:\n  max_pull_notes: 0\n")


SIZED = '''
from mindgraph.adapters import RawDocument

class Sized:
    """A note app whose notes are large: ``count`` notes of ``size`` bytes each."""
    remote = True
    listed = 0      # every instance's, for the test to read

    def __init__(self, count, size, **_):
        self.count, self.size = count, size

    def fetch(self):
        for i in range(1, self.count + 1):
            Sized.listed += 1
            yield RawDocument(f"{i:<{self.size}}", f"n{i}.md", {})
'''


def test_a_pull_takes_at_most_max_pull_bytes_and_says_how_to_raise_it(workspace):
    """max_pull_notes bounded the number of notes, not their size: 10,000 notes of up to
    limits.max_page_bytes each, 50 GB from one app. Now one pull takes at most
    limits.max_pull_bytes of an adapter's notes and reads its listing no further."""
    import json

    from click.testing import CliRunner

    from mindgraph.cli import cli

    (workspace / "mg_sized.py").write_text(SIZED)
    (workspace / "mindgraph.yml").write_text(
        "limits:\n  max_page_bytes: 2000000\n  max_pull_bytes: 3500000\nadapters:\n  - name: app\n    type: "
        "mg_sized.Sized\n    target: app\n    options: {count: 40, size: 1000000}\n")
    try:
        result = CliRunner().invoke(cli, ["pull", "-C", str(workspace)])
        listed = sys.modules["mg_sized"].Sized.listed
        report = json.loads(CliRunner().invoke(cli, ["pull", "-C", str(workspace),
                                                     "--json"]).output)
    finally:
        sys.modules.pop("mg_sized", None)
    assert result.exit_code == 1, result.output
    assert ("limited     [app] -: adapter 'app' listed more than limits.max_pull_bytes "
            "(3,500,000) bytes of notes; pulled the first 3 as listed (3,000,000 bytes), left "
            "out at least 1 (the listing was read no further), and no note of it removed this "
            "run. Raise limits.max_pull_bytes in mindgraph.yml") in result.output
    assert "Written 3," in result.output and "adapters cut at a pull limit 1" in result.output
    assert listed == 4                                  # the listing read no further
    assert all_files(workspace / "raw") == ["app/n1.md", "app/n2.md", "app/n3.md"]
    assert report["limited_adapters"] == 1 and report["unchanged"] == 3


def test_max_pull_bytes_must_hold_one_note_of_the_largest_size(workspace):
    with pytest.raises(ConfigError, match="limits.max_pull_bytes.*limits.max_page_bytes"):
        configure(workspace, ["a.md"], extra="limits:\n  max_pull_bytes: 4000000\n")
