"""The filesystem adapter, and loading adapters by name or dotted path."""

import os
import sys

import pytest

from mindgraph.adapters import FilesystemAdapter, RawDocument, load_adapter
from mindgraph.adapters.base import DataSourceAdapter
from mindgraph.config import AdapterSettings
from mindgraph.errors import AdapterError

NOTE_APP = '''
from mindgraph.adapters import RawDocument

class NotesApp:
    """A note-app adapter: notes with id, title, content, tags and modified time."""

    target = "app"

    def __init__(self, notes=(), base_url="notes://"):
        self.notes = list(notes)
        self.base_url = base_url

    def url_for(self, note_id):
        return f"{self.base_url}{note_id}"

    def fetch(self):
        return [RawDocument(f"---\\ntags: {n['tags']}\\nurl: {self.url_for(n['id'])}\\n---\\n"
                            f"{n['content']}\\n", f"{n['title']}.md", {"mtime": n["modified"]})
                for n in self.notes]
'''


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    """The name of an importable module holding a custom adapter class."""
    (tmp_path / "mg_test_plugins.py").write_text(NOTE_APP)
    (tmp_path / "mg_broken_plugin.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "mg_test_plugins"
    for name in ("mg_test_plugins", "mg_broken_plugin"):
        sys.modules.pop(name, None)


def test_filesystem_adapter_keeps_folders_and_skips_hidden_and_symlinks(tmp_path):
    src = tmp_path / "src"
    (src / "a" / "b").mkdir(parents=True)
    (src / "a" / "b" / "deep.md").write_text("deep")
    (src / "top.txt").write_text("top")
    (src / "pic.png").write_bytes(b"png")
    (src / ".obsidian").mkdir()
    (src / ".obsidian" / "x.md").write_text("config")
    os.symlink(tmp_path, src / "loop")
    os.symlink(src / "top.txt", src / "alias.md")
    adapter = FilesystemAdapter(src, target="inbox")
    assert isinstance(adapter, DataSourceAdapter)
    docs = adapter.fetch()
    assert [d.filename for d in docs] == ["top.txt", "a/b/deep.md"]
    assert docs[1].data == b"deep" and docs[1].metadata["mtime"] > 0
    assert [d.filename for d in FilesystemAdapter(src, extensions=["png"]).fetch()] == \
        ["pic.png"]


def test_filesystem_adapter_missing_folder_says_which_option(tmp_path):
    with pytest.raises(AdapterError, match="does not exist. Fix options.path"):
        FilesystemAdapter(tmp_path / "nope").fetch()


def test_load_builtin_by_name_resolves_path_against_base_dir(tmp_path):
    (tmp_path / "notes").mkdir()
    entry = AdapterSettings(name="mine", type="filesystem", options={"path": "notes"})
    loaded = load_adapter(entry, tmp_path)
    assert loaded.adapter.root == tmp_path / "notes"
    assert loaded.target == "mine"        # the name, when no target is configured
    entry = AdapterSettings(name="mine", type="filesystem", target="../x",
                            options={"path": "notes"})
    assert load_adapter(entry, tmp_path).target == "x"


@pytest.mark.parametrize("type_name", ["mg_test_plugins.NotesApp", "mg_test_plugins:NotesApp"])
def test_load_custom_adapter_from_dotted_path(plugin_module, type_name):
    entry = AdapterSettings(name="app", type=type_name, options={
        "notes": [{"id": 7, "title": "Buy milk", "content": "2 litres", "tags": ["todo"],
                   "modified": 1.5}]})
    loaded = load_adapter(entry)
    assert loaded.target == "app"
    [doc] = loaded.adapter.fetch()
    assert isinstance(doc, RawDocument) and doc.filename == "Buy milk.md"
    assert "url: notes://7" in doc.content


@pytest.mark.parametrize("type_name, message", [
    ("nosuch_module_xyz.Adapter", "cannot import module 'nosuch_module_xyz' .* on PYTHONPATH"),
    ("mg_test_plugins.Missing", "has no attribute 'Missing'"),
    ("mg_test_plugins.RawDocument", "not an adapter class: it needs a fetch"),
    ("mg_broken_plugin.X", "importing 'mg_broken_plugin' failed with RuntimeError: boom"),
    ("notion", "unknown adapter type 'notion'. Built-in types: filesystem"),
])
def test_load_errors_name_the_problem_and_the_fix(plugin_module, type_name, message):
    with pytest.raises(AdapterError, match=message):
        load_adapter(AdapterSettings(name="x", type=type_name))


def test_bad_options_are_reported(plugin_module, tmp_path):
    with pytest.raises(AdapterError, match=r"rejected its options \['colour'\]"):
        load_adapter(AdapterSettings(name="x", type="mg_test_plugins.NotesApp",
                                     options={"colour": "red"}))
    with pytest.raises(AdapterError, match="needs options.path"):
        load_adapter(AdapterSettings(name="x", type="filesystem"))


def test_one_extension_written_as_a_string_is_one_extension(tmp_path):
    from mindgraph.adapters.filesystem import FilesystemAdapter

    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.d").write_text("b")
    found = [d.filename for d in FilesystemAdapter(tmp_path, extensions="md").fetch()]
    assert found == ["a.md"]                       # not ".m" and ".d" letter by letter
