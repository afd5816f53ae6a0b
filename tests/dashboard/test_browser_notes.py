"""What a note's markdown becomes in a real headless Chromium: the parts where the browser,
not the renderer's string, decides what a person sees (an element the HTML parser moves, a
class the stylesheet colours, a link the page opens).

Any console error or warning, uncaught error or dialog fails a test. Skipped only when no
chromium is installed (.ci/run installs Debian's).
"""

from __future__ import annotations

import base64
import struct
import time
import zlib
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from browser_support import ConsoleWatch, chromium_path, live_server, open_dashboard, shot
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve import attachment_tickets
from mindgraph.serve.rest import create_app

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    chromium_path() is None,
    reason="no chromium installed (apt-get install chromium; .ci/run does)")]

NOTES = {
    "Math.md": "# Math\n\nEnergy is $$E=mc^2$$ for a body at rest.\n\n$$\nx_1 + x_2\n$$\n",
    "Callouts.md": "# Callouts\n\n> [!title] Not a title class\n> The body text.\n\n"
                   "> [!note] A note\n> Body.\n\n> [!tldr] Short\n> Body.\n\n"
                   "> [!abstract] Long\n> Body.\n",
    "Pictures.md": "# Pictures\n\nA map: <img src=\"map.png\" alt=\"The map\"> and "
                   "![[map.png|The same map]].\n",
    "Sync.md": "# 同期\n\n同期の設定を変更します。Obsidian Syncで同期する。\n",
    "Trunks.md": "# Trunks\n\nFold the trunks <b>before</b> packing; <img src=x "
                 "onerror=\"window.__owned=1\"> trunks are heavy.\n",
    "Headings.md": "# Headings\n\n## Second level\n\nText.\n\n### Third level\n\nText.\n",
    "Paper.md": "# Paper\n\nRead [[paper.pdf|the paper]].\n",
    "Code.md": "# Code\n\nWrite `a ** b` for a power, `**bold**` for bold and "
               "`zeppelin.json` for the zeppelin data.\n",
}


def _png(width: int, height: int) -> bytes:
    """A valid grey PNG of that size (a browser decodes it: naturalWidth is its width)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0,
                                                                 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _pdf(text: str) -> bytes:
    """A valid one-page PDF that says ``text`` in big black letters on a white page."""
    stream = f"BT /F1 60 Tf 20 30 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 120] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    table = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, table)
    return bytes(out)


RAW = {"map.png": _png(7, 5), "paper.pdf": _pdf("PDF")}


@pytest.fixture(scope="module")
def notes_url(tmp_path_factory):
    """A server over a small wiki of the notes in ``NOTES``."""
    base = tmp_path_factory.mktemp("notes")
    (base / "wiki").mkdir()
    (base / "raw").mkdir()
    for name, data in RAW.items():
        (base / "raw" / name).write_bytes(data)
    for name, text in NOTES.items():
        (base / "wiki" / name).parent.mkdir(parents=True, exist_ok=True)
        (base / "wiki" / name).write_text(text)
    with live_server(create_app(Mindgraph(settings_from_dict({}, base_dir=base)))) as url:
        yield url


def _open(browser, url, path):
    page, watch = open_dashboard(browser, url + "/#page=" + quote(path))
    page.wait_for_function("(p) => window.mindgraph.state.selected === p", arg=path)
    return page, watch


def test_inline_display_math_stays_inside_its_paragraph(browser, notes_url):
    """``$$E=mc^2$$`` within a sentence was a <div> in a <p>: the browser closed the
    paragraph at it, and the rest of the sentence became a paragraph of its own."""
    page, watch = _open(browser, notes_url, "Math.md")
    body = page.locator("#detail .page-body")
    sentence = body.locator("p", has_text="Energy is")
    assert sentence.count() == 1
    assert sentence.locator(".math").inner_text() == "E=mc^2"
    assert "for a body at rest." in sentence.inner_text()
    block = body.locator("div.math.block")
    assert block.count() == 1 and "x_1 + x_2" in block.inner_text()
    assert body.locator("p").count() == 1
    assert watch.problems == []
    page.close()


_CALLOUT_LOOK_JS = """() => [...document.querySelectorAll('#detail .callout')].map((c) => {
    const body = c.querySelector('p'), look = getComputedStyle(c);
    return {title: c.querySelector('.callout-title').textContent, classes: c.className,
            border: look.borderLeftColor, body_weight: getComputedStyle(body).fontWeight}; })"""


def test_a_callout_is_drawn_as_its_obsidian_type_and_any_other_as_a_note(browser, notes_url):
    """``> [!title]`` took the class of the dashboard's callout titles (the whole box drawn
    bold); an unknown type is a note that keeps its title, an alias looks like its type."""
    page, watch = _open(browser, notes_url, "Callouts.md")
    unknown, note, alias, abstract = page.evaluate(_CALLOUT_LOOK_JS)
    assert unknown["title"] == "Not a title class"
    assert unknown["body_weight"] == note["body_weight"] == "400"
    assert unknown["border"] == note["border"] and unknown["classes"] == note["classes"]
    assert alias["border"] == abstract["border"] != note["border"]
    assert alias["title"] == "Short"
    assert watch.problems == []
    page.close()


def test_a_notes_img_of_a_vault_file_shows_it_as_an_embed_does(browser, notes_url):
    """``<img src="map.png">`` in a note stayed text; it shows the file from raw/, fetched
    through the attachment route as ``![[map.png]]`` is."""
    page, watch = _open(browser, notes_url, "Pictures.md")
    images = page.locator("#detail .page-body img.attachment-image")
    assert images.count() == 2
    page.wait_for_function("""() => [...document.querySelectorAll(
        '#detail .page-body img.attachment-image')].every((i) => i.complete && i.src)""")
    sizes = page.evaluate("""() => [...document.querySelectorAll(
        '#detail .page-body img.attachment-image')].map((i) => [i.alt, i.naturalWidth])""")
    assert sizes == [["The map", 7], ["The same map", 7]]
    assert "<img" not in page.inner_text("#detail .page-body")
    assert watch.problems == []
    page.close()


_SNIPPETS_JS = """() => [...document.querySelectorAll('#results-list .snippet')].map((s) => ({
    text: s.textContent, marks: [...s.querySelectorAll('mark')].map((m) => m.textContent),
    elements: [...s.querySelectorAll('*')].map((e) => e.tagName)}))"""


def _search(page, query):
    page.fill("#search", query)
    page.press("#search", "Enter")
    page.wait_for_function("(q) => document.getElementById('results-title').textContent"
                           ".includes(q)", arg=query)
    return page.evaluate(_SNIPPETS_JS)


def test_search_snippets_mark_the_matched_words_as_text(browser, notes_url):
    """A snippet showed its highlight markers raw (``**同期**の設定``); the matched words are
    <mark> elements now, whole, and the note's own HTML is never markup there (its tags are
    dropped, its words kept)."""
    page, watch = open_dashboard(browser, notes_url)
    [sync] = [s for s in _search(page, "同期") if "Sync" in s["text"]]
    assert sync["text"] == "同期の設定を変更します。Obsidian Syncで同期する。"
    assert sync["marks"] == ["同期", "同期"] and set(sync["elements"]) == {"MARK"}
    [trunks] = _search(page, "trunks")
    assert "**" not in trunks["text"] and trunks["marks"] == ["trunks", "trunks"]
    assert "before" in trunks["text"] and "<b>" not in trunks["text"]   # its words, as text
    assert set(trunks["elements"]) == {"MARK"}
    assert page.evaluate("window.__owned === undefined")
    assert watch.problems == []
    page.close()


def test_search_snippets_leave_the_markup_inside_code_spans_as_text(browser, notes_url):
    """``a ** b`` in inline code was read as the start of a mark: from it to the next **,
    the snippet marked " b` for a power, `" and showed the rest's markers raw. What is inside
    a code span is text now, and a match in one marks the whole span."""
    page, watch = open_dashboard(browser, notes_url)
    [code] = _search(page, "zeppelin")
    assert code["text"] == ("Write `a ** b` for a power, `**bold**` for bold and "
                            "`zeppelin.json` for the zeppelin data."), code
    assert code["marks"] == ["`zeppelin.json`", "zeppelin"], code
    assert watch.problems == []
    page.close()


# How much of a screenshot is the white of a PDF's page and the black of its text, counted by
# the browser (it decodes the PNG): a viewer that refused to draw shows neither.
_PAGE_AND_TEXT_JS = """async (png) => {
    const image = new Image();
    image.src = 'data:image/png;base64,' + png;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width; canvas.height = image.height;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, image.width, image.height).data;
    let white = 0, black = 0;
    for (let i = 0; i < pixels.length; i += 4) {
        const low = Math.min(pixels[i], pixels[i + 1], pixels[i + 2]);
        const high = Math.max(pixels[i], pixels[i + 1], pixels[i + 2]);
        if (low > 245) white++;
        if (high < 25) black++;
    }
    return {white, black};
}"""


def test_a_pdf_opens_sandboxed_like_every_attachment_and_its_viewer_draws_it(browser,
                                                                            notes_url):
    """A pdf was the one attachment served without the CSP ``sandbox`` (browsers' viewers were
    said to refuse a sandboxed document: true of a sandboxed frame, which the dashboard never
    makes). Opened from its link, in its own tab, it is sandboxed now, and Chromium's viewer
    still draws its page and text."""
    page, watch = _open(browser, notes_url, "Paper.md")
    with page.context.expect_event("response", lambda r: "/dashboard/attachment" in r.url
                                   ) as served, page.expect_popup() as opened:
        page.locator("#detail .page-body a.attachment", has_text="the paper").click()
    popup = opened.value
    popup.wait_for_load_state()
    assert popup.url.startswith(notes_url + "/dashboard/attachment?target=paper.pdf")
    policy = served.value.all_headers()["content-security-policy"]
    assert "sandbox" in [directive.strip() for directive in policy.split(";")], policy
    deadline = time.monotonic() + 60                    # the viewer draws the page
    while True:
        drawn = page.evaluate(_PAGE_AND_TEXT_JS, base64.b64encode(popup.screenshot()).decode())
        if drawn["white"] > 10_000 and drawn["black"] > 500 or time.monotonic() > deadline:
            break
        popup.wait_for_timeout(500)
    if not (drawn["white"] > 10_000 and drawn["black"] > 500):
        shot(popup, "pdf-not-drawn.png")
    assert drawn["white"] > 10_000 and drawn["black"] > 500, drawn
    assert watch.problems == []
    popup.close()
    page.close()


_HEADING_LOOK_JS = """() => Object.fromEntries(['h2', 'h3'].map((tag) => {
    const look = getComputedStyle(document.querySelector('#detail .page-body ' + tag));
    return [tag, {size: parseFloat(look.fontSize), transform: look.textTransform,
                  color: look.color}]; }))"""


def test_a_notes_third_level_heading_is_not_drawn_as_the_panels_titles(browser, notes_url):
    """A ``###`` heading took the panel's small grey capitals (TRUST, BACKLINKS…) and a ``##``
    the page title's look: each level has its own size now, larger than the text."""
    page, watch = _open(browser, notes_url, "Headings.md")
    looks = page.evaluate(_HEADING_LOOK_JS)
    panel = page.evaluate("parseFloat(getComputedStyle(document.querySelector("
                          "'#detail-body > h3')).fontSize)")
    text = page.evaluate("parseFloat(getComputedStyle(document.querySelector("
                         "'#detail .page-body p')).fontSize)")
    assert looks["h2"]["size"] > looks["h3"]["size"] > text
    assert looks["h3"]["size"] > panel and looks["h3"]["transform"] == "none"
    assert looks["h2"]["color"] == looks["h3"]["color"]
    assert watch.problems == []
    page.close()


SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>'
       b'opener && (opener.__owned = 1)</script><rect width="10" height="10"/></svg>')
TOKEN = "t" * 40


def test_behind_a_token_attachments_open_by_their_sandboxed_route_never_a_blob(browser,
                                                                               tmp_path):
    """Each attachment was fetched with the token and shown from a blob: URL: opened in a
    tab, a document of the dashboard's own origin, not the route's sandbox. The image and
    the opened file are the route's URL now (signed for the viewer), sandboxed: an opaque
    origin, no script run."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "map.png").write_bytes(RAW["map.png"])
    (tmp_path / "raw" / "drawing.svg").write_bytes(SVG)
    (tmp_path / "wiki" / "Files.md").write_text("# Files\n\n![[map.png]]\n\n"
                                                "Open [[drawing.svg|the drawing]].\n")
    app = create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path)), TOKEN)
    with live_server(app) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        watch = ConsoleWatch(page)
        page.goto(url + "/#page=Files.md")
        page.fill("#token", TOKEN)
        page.press("#token", "Enter")
        page.wait_for_function("() => window.mindgraph.state.selected === 'Files.md'")
        image = page.locator("#detail .page-body img.attachment-image")
        page.wait_for_function("""() => { const i = document.querySelector(
            '#detail .page-body img.attachment-image'); return i.complete && i.naturalWidth; }""")
        assert image.evaluate("i => i.src").startswith(url + "/dashboard/attachment?")
        with page.expect_popup() as opened:
            page.locator("#detail .page-body a.attachment", has_text="the drawing").click()
        popup = opened.value
        popup.wait_for_load_state()
        assert popup.url.startswith(url + "/dashboard/attachment?target=drawing.svg")
        assert popup.evaluate("self.origin") == "null"           # sandboxed: opaque origin
        assert page.evaluate("window.__owned === undefined")
        watch.problems = [p for p in watch.problems if "401" not in p]   # before signing in
        assert watch.problems == []
        popup.close()
        page.close()


def test_an_attachment_in_the_outgoing_links_is_not_drawn_broken(browser, notes_url):
    """The detail's outgoing links drew an embedded picture, which resolves to its file
    (`check` and `stats` count it an attachment), struck through in red like a link to no
    page. It is the file's name, marked an attachment."""
    page, watch = _open(browser, notes_url, "Pictures.md")
    items = page.evaluate("""() => [...document.querySelectorAll('#detail .links-list li')]
        .filter((li) => li.textContent.includes('map.png'))
        .map((li) => [...li.querySelectorAll('span, a')].map((e) => e.className))""")
    assert items and all("wikilink broken" not in classes for classes in items), items
    assert any("attachment" in classes for classes in items), items
    assert watch.problems == []
    page.close()


def test_a_penalty_in_a_results_explanation_reads_minus_not_plus_minus(browser, notes_url):
    """An English question found the Japanese note with its other-language penalty shown
    as "other_language +-0.0572"; a penalty reads "other_language −0.0572"."""
    page, watch = open_dashboard(browser, notes_url)
    page.fill("#search", "Obsidian Sync")
    page.press("#search", "Enter")
    page.wait_for_function("() => document.getElementById('results-title').textContent"
                           ".includes('Obsidian Sync')")
    why = page.evaluate("""() => [...document.querySelectorAll('#results-list li')]
        .map((li) => li.querySelector('.why').textContent)""")
    assert not any("+-" in line for line in why), why
    assert any("other_language −0." in line for line in why), why
    assert watch.problems == []
    page.close()


def _expires(url):
    return int(parse_qs(urlsplit(url).query)["expires"][0])


_IMAGE_JS = "document.querySelector('#detail .page-body img.attachment-image')"
_ASLEEP_JS = "() => clearTimeout(window.mindgraph.state.renewal.timer)"   # no timer runs


def test_a_page_left_open_renews_its_attachment_tickets(browser, tmp_path, monkeypatch):
    """A page's attachment URLs were signed for an hour: left open longer, its images and
    links got a 401. It renews them before they expire (here tickets of 3 s in 1 s buckets,
    not an hour in ten minutes), and an image or a link whose ticket ended while the page's
    timers slept (a computer asleep) is renewed when it fails or is clicked."""
    monkeypatch.setattr(attachment_tickets, "TICKET_TTL_S", 3)
    monkeypatch.setattr(attachment_tickets, "TICKET_BUCKET_S", 1)
    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "map.png").write_bytes(RAW["map.png"])
    (tmp_path / "raw" / "paper.pdf").write_bytes(RAW["paper.pdf"])
    (tmp_path / "wiki" / "Files.md").write_text("# Files\n\n![[map.png]]\n\n"
                                                "Read [[paper.pdf|the paper]].\n")
    app = create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path)), TOKEN)
    with live_server(app) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        watch = ConsoleWatch(page)
        page.goto(url + "/#page=Files.md")
        page.fill("#token", TOKEN)
        page.press("#token", "Enter")
        page.wait_for_function(f"() => {{ const i = {_IMAGE_JS}; "
                               "return i && i.complete && i.naturalWidth; }")
        link = page.locator("#detail .page-body a.attachment")
        first, first_link = page.evaluate(f"{_IMAGE_JS}.src"), link.get_attribute("href")
        # renewed before it ends: a later expiry, the image loaded from it, the link too
        page.wait_for_function(f"(f) => {_IMAGE_JS}.src !== f", arg=first, timeout=20_000)
        page.wait_for_function(f"() => {_IMAGE_JS}.complete && {_IMAGE_JS}.naturalWidth")
        renewed = page.evaluate(f"{_IMAGE_JS}.src")
        assert _expires(renewed) > _expires(first)
        page.wait_for_function("(f) => document.querySelector('#detail .page-body "
                               "a.attachment').getAttribute('href') !== f", arg=first_link)
        while time.time() <= _expires(first) + 1:
            time.sleep(0.2)
        assert page.request.get(first).status == 401          # what it renewed
        # asleep: no timer runs, every ticket of the page ends; then the image is asked
        # for again (not from the browser's memory: a URL it has not loaded) and the link
        # is clicked
        page.evaluate(_ASLEEP_JS)
        stale = page.evaluate(f"{_IMAGE_JS}.src")
        while time.time() <= _expires(stale) + 1:
            time.sleep(0.2)
        page.evaluate(f"() => {{ const i = {_IMAGE_JS}; i.dataset.src += '&again=1'; "
                      "i.src = i.dataset.src; }")
        page.wait_for_function(f"(s) => {_IMAGE_JS}.src !== s && {_IMAGE_JS}.complete && "
                               f"{_IMAGE_JS}.naturalWidth", arg=stale, timeout=20_000)
        assert "missing" not in page.evaluate(f"{_IMAGE_JS}.className")
        page.evaluate(_ASLEEP_JS)
        stale_link = link.get_attribute("href")
        while time.time() <= _expires(stale_link) + 1:
            time.sleep(0.2)
        with page.expect_popup() as opened:
            link.click()
        popup = opened.value
        popup.wait_for_url(lambda u: "paper.pdf" in u and "ticket=" in u
                           and _expires(u) > _expires(stale_link), timeout=20_000)
        assert page.request.get(popup.url).status == 200
        assert all("401" in p for p in watch.problems), watch.problems   # the stale ones
        popup.close()
        page.close()
