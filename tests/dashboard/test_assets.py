"""The vendored libraries are the pinned builds, with their licences; the page loads nothing
inline and nothing from elsewhere."""

import hashlib
import re

from mindgraph.dashboard import assets


def test_every_vendored_file_matches_its_pinned_hash_and_has_its_licence():
    assert assets.vendor_problems() == []
    entries = assets.vendor_manifest()
    assert {e["package"] for e in entries} == {"graphology", "sigma", "graphology-library"}
    for entry in entries:
        data = (assets.STATIC / "vendor" / entry["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert entry["npm_integrity"].startswith("sha512-") and entry["version"]


def test_a_changed_vendored_file_is_reported(tmp_path, monkeypatch):
    static = tmp_path / "static"
    (static / "vendor" / "licenses").mkdir(parents=True)
    (static / "vendor" / "MANIFEST.json").write_bytes(assets.MANIFEST.read_bytes())
    for entry in assets.vendor_manifest():
        (static / "vendor" / entry["file"]).write_bytes(b"// changed")
    monkeypatch.setattr(assets, "STATIC", static)
    monkeypatch.setattr(assets, "MANIFEST", static / "vendor" / "MANIFEST.json")
    problems = assets.vendor_problems()
    assert len(problems) == 6
    assert any("sha256 differs" in p and "sigma@3.0.3" in p for p in problems)
    assert any("licence file licenses/sigma.LICENSE.txt missing" in p for p in problems)


def test_the_page_has_no_inline_script_style_or_outside_resource():
    html = assets.static_files()["index.html"][0].decode()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all('src="/dashboard/static/' in attrs and not body.strip()
                           for attrs, body in scripts)
    assert not re.search(r"\son\w+=|\sstyle=|<style", html)
    assert not re.search(r"(src|href)=\"(https?:)?//", html)


def test_static_files_are_a_fixed_map_with_the_highlight_stylesheet():
    files = assets.static_files()
    assert {"index.html", "dashboard.js", "dashboard.css", "highlight.css",
            "vendor/sigma.min.js", "vendor/licenses/sigma.LICENSE.txt"} <= set(files)
    assert b".page-body pre .hl-k {" in files["highlight.css"][0]
    assert files["dashboard.js"][1].startswith("text/javascript")


def test_the_page_list_shows_the_graphs_notes_as_search_results_show_theirs():
    """The graph's ``notes`` (why a wiki has no page) go under the "0 of 0 pages" count, in
    a list of the same class as the search results' notes."""
    files = assets.static_files()
    html, script = files["index.html"][0].decode(), files["dashboard.js"][0].decode()
    count = html.index('<p id="list-count"')
    assert html.index('<ul id="list-notes" class="notes">') > count
    assert '<ul id="results-notes" class="notes">' in html
    assert ('$("list-notes").replaceChildren(...(data.notes || []).map((d) => el("li", {}, d)));'
            in script.split("async function load()", 1)[1].split("\n  }\n", 1)[0])
