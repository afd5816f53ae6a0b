"""`limit_listing` of a custom adapter loaded from a dotted path in mindgraph.yml.

The protocol (adapters/base.py, ``ListingLimits``) is ``limit_listing(max_bytes,
max_notes=None)``. An adapter written against the older one-argument form used to get a
TypeError from inside pull, reported as if its fetch() had raised it; now that form is called
as it is (pull still cuts the notes at limits.max_pull_notes), and a signature that fits
neither is refused when the adapter loads, naming its module and the signature to give it.
"""

import json
import sys

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

PLUGIN = '''
from mindgraph.adapters import RawDocument

class Base:
    calls = []

    def __init__(self, count=3):
        self.count = count

    def fetch(self):
        return [RawDocument(f"note {n}", f"n{n}.md") for n in range(self.count)]

class Documented(Base):
    def limit_listing(self, max_bytes, max_notes=None):
        Base.calls.append(("documented", max_bytes, max_notes))

class KeywordOnly(Base):
    def limit_listing(self, max_bytes, *, max_notes=None):
        Base.calls.append(("keyword", max_bytes, max_notes))

class OldForm(Base):
    def limit_listing(self, max_bytes):
        Base.calls.append(("old", max_bytes))

class Broken(Base):
    def limit_listing(self):
        Base.calls.append(("broken",))
'''


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    (tmp_path / "raw").mkdir()
    (tmp_path / "mg_listing_plugins.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("mg_listing_plugins", None)


def pull_with(workspace, cls, count=3):
    (workspace / "mindgraph.yml").write_text(
        "limits: {max_pull_notes: 2, max_page_bytes: 2000000, max_pull_bytes: 2000000}\n"
        f"adapters:\n  - name: app\n    type: mg_listing_plugins.{cls}\n"
        f"    options: {{count: {count}}}\n")
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--json"],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout), sys.modules["mg_listing_plugins"]


@pytest.mark.parametrize("cls, call", [("Documented", ("documented", 2000000, 2)),
                                       ("KeywordOnly", ("keyword", 2000000, 2)),
                                       ("OldForm", ("old", 2000000))])
def test_the_documented_and_the_old_form_are_called(workspace, cls, call):
    code, report, plugin = pull_with(workspace, cls, count=2)
    assert code == 0 and report["written"] == 2
    assert plugin.Base.calls == [call]


def test_the_old_form_is_still_cut_at_max_pull_notes(workspace):
    code, report, _ = pull_with(workspace, "OldForm", count=5)
    assert code == 1 and report["written"] == 2 and report["limited_adapters"] == 1


def test_a_signature_that_fits_neither_is_refused_at_load_naming_module_and_signature(
        workspace):
    code, report, plugin = pull_with(workspace, "Broken")
    assert code == 1 and report["failed_adapters"] == 1 and report["written"] == 0
    [failed] = [f for f in report["files"] if f["status"] == "failed"]
    assert failed["reason"] == (
        "adapter 'app': mg_listing_plugins.Broken.limit_listing() cannot be called as "
        "limit_listing(max_bytes, max_notes) (adapters/base.py, ListingLimits). Define it in "
        "module 'mg_listing_plugins' as `def limit_listing(self, max_bytes: int | None, "
        "max_notes: int | None = None) -> None`, or remove it.")
    assert plugin.Base.calls == []           # refused before it was called, or fetch() run
