"""An embed of a note the caller does not see shows nothing in its view's search: a view's
keyword index resolves embeds over the view's pages only."""

from __future__ import annotations

from mindgraph.core import Mindgraph

from scopes_support import set_tokens, write_workspace


def test_a_view_indexes_no_text_of_an_embedded_note_it_does_not_see(tmp_path, monkeypatch):
    write_workspace(tmp_path)
    config = tmp_path / "mindgraph.yml"
    config.write_text(config.read_text() + "\nindex:\n  expand_embeds: true\n")
    set_tokens(monkeypatch)
    mg = Mindgraph.open(tmp_path)
    try:
        assert mg.ingest().ok
        handbook = next((tmp_path / "wiki").rglob("Handbook.md"))
        handbook.write_text(handbook.read_text() + "\n![[Bob Notes]]\n\n![[Roadmap]]\n")
        owner = {h.path for h in mg.search("walrusinfo")}
        assert "acme/shared/Handbook.md" in owner        # the owner sees Bob's note, embedded
        alice = mg.as_identity(mg.scopes.identity("alice"))
        assert {h.path for h in alice.search("walrusinfo")} == set()
        # an embed alice may read is shown to her: the nearest Roadmap, acme's
        hits = {h.path: h for h in alice.search("acme roadmap")}
        assert "acme/shared/Handbook.md" in hits
        assert "embed" in hits["acme/shared/Handbook.md"].fields
    finally:
        mg.close()
