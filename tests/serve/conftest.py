"""Fixtures of the server tests."""

import pytest


@pytest.fixture
def workspace(tmp_path):
    """A workspace with two linked wiki pages, one raw note (not compiled yet) and a code
    folder of one module."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Home.md").write_text("# Home\n\nTrunks and [[Packing]].\n")
    (tmp_path / "wiki" / "Packing.md").write_text("# Packing\n\nFold the trunks.\n")
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "zeppelins.md").write_text("# Zeppelins\n\nAirships carry trunks.\n")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "packing.py").write_text("def pack():\n    pass\n")
    return tmp_path
