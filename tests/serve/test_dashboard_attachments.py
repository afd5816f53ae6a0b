"""GET /dashboard/attachment through the real app: an image a page embeds is shown (as an
<img> whose file the route serves from raw/), and nothing else is served: no path outside
raw/, no ``..`` however encoded that leaves raw/, no symlink out, no type but image, pdf, audio
and video."""

from __future__ import annotations

import html as html_lib
import os
import re
import time
from urllib.parse import parse_qsl, urlsplit

import pytest
from fastapi.testclient import TestClient

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.attachment_tickets import (TICKET_BUCKET_S, TICKET_TTL_S,
                                                 ticket_authorization, ticket_expiry,
                                                 ticket_query)
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
TOKEN = "a" * 40
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24


@pytest.fixture
def attachments(workspace, tmp_path_factory):
    """The serve workspace with raw/assets/diagram.png, a pdf, a page embedding them, and
    hostile files in raw/: symlinks to /etc/passwd and to an image outside the workspace."""
    raw = workspace / "raw"
    (raw / "assets").mkdir()
    (raw / "assets" / "diagram.png").write_bytes(PNG)
    (raw / "assets" / "paper.pdf").write_bytes(b"%PDF-1.4\n")
    (raw / "page.html").write_text("<script>alert(1)</script>")
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.png").write_bytes(PNG + b"secret")
    os.symlink("/etc/passwd", raw / "passwd.png")
    os.symlink(outside / "secret.png", raw / "escape.png")
    os.symlink(outside, raw / "elsewhere")
    (workspace / "wiki" / "Gallery.md").write_text(
        "# Gallery\n\n![[assets/diagram.png|300]]\n\nInline ![[diagram.png]] and "
        "![[paper.pdf]].\n")
    return workspace


def _client(workspace, token=None, host=None):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    return TestClient(create_app(mg, token, host), base_url=LOCAL)


def test_an_image_embed_is_an_img_whose_file_the_route_serves(attachments):
    client = _client(attachments)
    html = client.get("/dashboard/page", params={"page": "Gallery"}).json()["html"]
    assert ('<img class="attachment-image" data-src="/dashboard/attachment?'
            'target=assets%2Fdiagram.png&amp;page=Gallery.md" alt="diagram.png" width="300">'
            in html)
    assert '<a class="attachment" href="/dashboard/attachment?target=paper.pdf' in html
    response = client.get("/dashboard/attachment?target=assets%2Fdiagram.png&page=Gallery.md")
    assert response.status_code == 200 and response.content == PNG
    assert response.headers["content-type"] == "image/png"
    assert response.headers["x-content-type-options"] == "nosniff"
    # By file name alone, as Obsidian resolves it; a pdf as application/pdf.
    assert client.get("/dashboard/attachment",
                      params={"target": "diagram.png", "page": "Gallery"}).content == PNG
    pdf = client.get("/dashboard/attachment", params={"target": "paper.pdf"})
    assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"


def test_a_path_up_from_the_pages_folder_is_served_as_obsidian_reads_it(attachments):
    """``![[../assets/diagram.png]]`` in raw/notes/Sub.md is raw/assets/diagram.png: the
    page drew it as an image, and the route refused any ``..`` (a broken picture). A path
    that climbs is read from the page's folder only: never a file of that name elsewhere."""
    (attachments / "raw" / "notes").mkdir()
    (attachments / "raw" / "notes" / "Sub.md").write_text(
        "# Sub\n\n![[../assets/diagram.png]]\n\n![up](../assets/diagram.png)\n\n"
        "![[../diagram.png]]\n")
    (attachments / "wiki" / "notes").mkdir()
    (attachments / "wiki" / "notes" / "Sub.md").write_text(
        (attachments / "raw" / "notes" / "Sub.md").read_text())
    client = _client(attachments)
    html = client.get("/dashboard/page", params={"page": "notes/Sub"}).json()["html"]
    assert html.count('<img class="attachment-image"') == 2
    assert '"not found in raw/">../diagram.png</span>' in html   # raw/diagram.png: none
    for target in ("../assets/diagram.png", "..%2Fassets%2Fdiagram.png"):
        response = client.get(f"/dashboard/attachment?target={target}&page=notes%2FSub.md")
        assert response.status_code == 200 and response.content == PNG
    for target in ("../diagram.png", "../../assets/diagram.png", "../../../etc/passwd.png"):
        assert client.get("/dashboard/attachment", params={
            "target": target, "page": "notes/Sub.md"}).status_code == 404


@pytest.mark.parametrize("query", [
    "target=../wiki/Home.md", "target=..%2Fwiki%2FHome.md", "target=%2e%2e/%2e%2e/etc/passwd",
    "target=%2e%2e%2f%2e%2e%2fetc%2fhosts.png", "target=/etc/passwd", "target=%2Fetc%2Fpasswd",
    "target=assets/../../wiki/Home.md", "target=C:%5Cwindows%5Cwin.ini",
    "target=passwd.png", "target=escape.png", "target=elsewhere/secret.png", "target=secret.png",
    "target=zeppelins.md", "target=page.html", "target=assets", "target=diagram.png%00.html",
    "target=nothing.png", "target=diagram.png&page=..%2F..%2Fetc%2Fpasswd",
])
def test_nothing_outside_raw_and_no_other_type_is_served(attachments, query):
    response = _client(attachments).get("/dashboard/attachment?" + query)
    assert response.status_code in (404, 422), response.text
    assert b"root:" not in response.content and b"\x89PNG" not in response.content
    assert b"<script" not in response.content and b"Airships" not in response.content
    assert b"Trunks and" not in response.content and b"localhost" not in response.content


def test_the_attachment_route_has_the_dashboards_token_and_guard(attachments):
    client = _client(attachments, token=TOKEN, host="0.0.0.0")
    url = "/dashboard/attachment?target=assets%2Fdiagram.png"
    assert client.get(url).status_code == 401
    signed = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get(url, headers=signed).content == PNG
    assert client.get(url, headers={**signed, "Origin": "https://evil.example"}
                      ).status_code == 403
    assert _client(attachments).get(url, headers={"Host": "evil.example"}).status_code == 421


def test_an_embed_of_a_missing_file_is_shown_missing_and_never_fetched(attachments):
    """An image whose file is not in raw/ (the shared Obsidian Help vault has none of its
    pictures) was an <img> the page's script asked the route for: a 404 in the browser's
    console for each. It is the embed's name, marked missing, with no address to fetch."""
    (attachments / "wiki" / "Lost.md").write_text(
        "# Lost\n\n![[assets/never-made.png]]\n\nand ![[assets/diagram.png]] and "
        "![gone](lost/photo.jpg)\n")
    html = _client(attachments).get("/dashboard/page", params={"page": "Lost"}).json()["html"]
    assert ('<span class="attachment missing" title="not found in raw/">'
            'assets/never-made.png</span>') in html
    assert '<span class="attachment missing" title="not found in raw/">gone</span>' in html
    assert "never-made" not in html.split("data-src")[-1] and html.count("data-src") == 1
    assert 'data-src="/dashboard/attachment?target=assets%2Fdiagram.png' in html


def test_an_svg_opened_on_its_own_is_sandboxed(attachments):
    """An SVG can hold a script: opened directly (a link, "open image in new tab") it would
    run in the dashboard's origin. Its CSP sandboxes it (no scripts, an opaque origin), a
    byte range of it too; so is a pdf (it was not: browsers' viewers refuse a sandboxed
    frame, but the dashboard opens a pdf in a tab of its own, where they draw it)."""
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/documents")'
           b'</script></svg>')
    (attachments / "raw" / "assets" / "evil.svg").write_bytes(svg)
    client = _client(attachments)
    for headers in ({}, {"range": "bytes=0-9"}):
        response = client.get("/dashboard/attachment", params={"target": "assets/evil.svg"},
                              headers=headers)
        assert response.status_code in (200, 206)
        assert response.headers["content-type"] == "image/svg+xml"
        assert response.headers["x-content-type-options"] == "nosniff"
        directives = [d.strip() for d in response.headers["content-security-policy"].split(";")]
        assert "sandbox" in directives and "default-src 'none'" in directives
    pdf = client.get("/dashboard/attachment", params={"target": "paper.pdf"})
    assert "sandbox" in [d.strip() for d in pdf.headers["content-security-policy"].split(";")]


def _signed_sources(client, page, headers):
    html = client.get("/dashboard/page", params={"page": page}, headers=headers).json()["html"]
    return [html_lib.unescape(m) for m in re.findall(r'(?:data-src|href)="(/dashboard/'
                                                     r'attachment\?[^"]+)"', html)]


def test_behind_a_token_a_rendered_attachment_url_opens_its_one_file_without_it(attachments):
    """The dashboard fetched each attachment with the token and showed it from a blob: URL,
    a document of the dashboard's own origin and policy, not the route's sandbox. The page
    names each file by its route URL now, signed for the viewer: that URL opens that file
    (sandboxed) with no header, and no other file, page, expiry, path or token with it."""
    client = _client(attachments, token=TOKEN, host="0.0.0.0")
    signed = {"Authorization": f"Bearer {TOKEN}"}
    image, inline, pdf = _signed_sources(client, "Gallery", signed)
    assert "&expires=" in image and "&ticket=" in image and "paper.pdf" in pdf
    response = client.get(image)
    assert response.status_code == 200 and response.content == PNG
    assert "sandbox" in response.headers["content-security-policy"]
    assert client.get(pdf).status_code == 200 and client.get(inline).content == PNG
    query = dict(parse_qsl(urlsplit(image).query))
    expired = ticket_query(client.app.state.auth, f"Bearer {TOKEN}", query["target"],
                           query["page"], query["file"], now=time.time() - TICKET_TTL_S - TICKET_BUCKET_S - 5)
    other = _client(attachments, token="c" * 40, host="0.0.0.0").app.state.auth
    forged = ticket_query(other, "Bearer " + "c" * 40, query["target"], query["page"],
                          query["file"])
    for changed in (image.replace("diagram.png", "paper.pdf"),          # another file
                    image.replace("page=Gallery.md", "page=Other.md"),   # another page
                    re.sub(r"expires=(\d+)", lambda m: f"expires={int(m[1]) + 1}", image),
                    image.replace("/dashboard/attachment", "/dashboard/page"),
                    image + "&target=paper.pdf",                          # given twice
                    image.split("&file=")[0] + expired,
                    image.split("&file=")[0] + forged):
        assert client.get(changed).status_code == 401, changed
    assert client.get(image, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get(image, headers={"Origin": "https://evil.example"}).status_code == 403
    # a server that needs no token signs nothing
    assert all("ticket" not in url for url in _signed_sources(_client(attachments),
                                                              "Gallery", {}))


def test_a_ticket_with_an_endless_expiry_is_refused_not_an_error(attachments):
    """``expires`` of 5,000 digits: int() refused it (Python's 4,300-digit limit), so a request
    with no token got a 500 and the server logged a traceback for each one."""
    client = _client(attachments, token=TOKEN, host="0.0.0.0")
    response = client.get("/dashboard/attachment", params={
        "target": "diagram.png", "page": "Gallery.md", "file": "assets/diagram.png",
        "expires": "9" * 5000, "ticket": "0" * 64})
    assert response.status_code == 401


def test_a_markdown_link_to_an_attachment_opens_the_file(attachments):
    """``[the paper](assets/paper.pdf)`` was resolved as a page: no page has that name, so
    the dashboard drew it struck through as a broken link ("no such page"), while `check`
    and `stats` count it an attachment. It opens the file by the attachment route, signed
    behind a token as the embeds are; a file not in raw/ is marked missing."""
    (attachments / "wiki" / "Plans.md").write_text(
        "# Plans\n\nSee [the paper](assets/paper.pdf) and [old](assets/gone.pdf).\n")
    client = _client(attachments, token=TOKEN, host="0.0.0.0")
    signed = {"Authorization": f"Bearer {TOKEN}"}
    html = client.get("/dashboard/page", params={"page": "Plans"}, headers=signed).json()["html"]
    assert "broken" not in html and "no such page" not in html
    assert '<span class="attachment missing" title="not found in raw/">old</span>' in html
    assert ('<a class="attachment" href="/dashboard/attachment?target=assets%2Fpaper.pdf'
            '&amp;page=Plans.md&amp;file=assets%2Fpaper.pdf&amp;expires=') in html
    [pdf] = _signed_sources(client, "Plans", signed)
    response = client.get(pdf)
    assert response.status_code == 200 and response.content == b"%PDF-1.4\n"


def test_a_notes_img_keeps_its_size_beside_its_alt_text(attachments):
    """``<img src="x.png" alt="the cat" width="80">`` lost its width (the alt took the one
    place a size could go) and drew a big photo at full size; it keeps both now, as
    ``![[x.png|80]]`` keeps its size."""
    (attachments / "wiki" / "Sized.md").write_text(
        '# Sized\n\n<img src="assets/diagram.png" alt="The diagram" width="120" height="40">'
        '\n\n<img src="assets/diagram.png" width="90">\n\n<img src="assets/diagram.png" '
        'alt="Plain">\n')
    html = _client(attachments).get("/dashboard/page", params={"page": "Sized"}).json()["html"]
    assert 'alt="The diagram" width="120" height="40">' in html
    assert 'alt="diagram.png" width="90">' in html
    assert 'alt="Plain">' in html


def test_an_embedded_pages_attachments_are_found_from_that_page(attachments):
    """``![[b/c/Inner]]`` in a/Outer.md showed Inner's ``![[pic.png]]`` as a/pic.png and its
    ``![[../../assets/diagram.png]]`` as missing (it climbs out of raw/ from a/): the embedded
    text's attachments were resolved from the outer page's folder. Obsidian resolves them from
    the embedded page's: b/c/pic.png, assets/diagram.png; so do its links (``[[Sibling]]``
    is b/c/Sibling.md)."""
    raw, wiki = attachments / "raw", attachments / "wiki"
    for folder, colour in (("a", b"outer"), ("b/c", b"inner")):
        (raw / folder).mkdir(parents=True)
        (raw / folder / "pic.png").write_bytes(PNG + colour)
        (wiki / folder).mkdir(parents=True)
        (wiki / folder / "Sibling.md").write_text(f"# Sibling\n\nIn {folder}.\n")
    (wiki / "b" / "c" / "Inner.md").write_text(
        "# Inner\n\n![[pic.png]] ![[../../assets/diagram.png]] [[Sibling]]\n")
    (wiki / "a" / "Outer.md").write_text("# Outer\n\n![[b/c/Inner]]\n\nInline ![[b/c/Inner]].\n")
    client = _client(attachments)
    html = client.get("/dashboard/page", params={"page": "a/Outer"}).json()["html"]
    assert "not found in raw/" not in html, html
    sources = [html_lib.unescape(m) for m in re.findall(r'data-src="([^"]+)"', html)]
    assert len(sources) == 4, html                        # block and inline embed, two each
    assert [client.get(url).content for url in sources] == [PNG + b"inner", PNG] * 2
    assert html.count('data-page="b/c/Sibling.md"') == 2 and 'data-page="a/Sibling.md"' \
        not in html


def test_a_pages_attachment_urls_are_the_same_within_a_time_bucket(attachments):
    """Each render signed an expiry of its own second plus an hour: the same page's URLs (and
    so its JSON, and the images the browser had) changed on every view. The expiry is the end
    of a ten-minute bucket an hour or more on: every render within one bucket signs the same
    URLs; a ticket still names one file, its token's key id and an expiry the gate checks."""
    client = _client(attachments, token=TOKEN, host="0.0.0.0")
    auth, signed = client.app.state.auth, f"Bearer {TOKEN}"
    start = TICKET_BUCKET_S * 1000                        # a bucket's start, in Unix time
    tickets = {now: ticket_query(auth, signed, "diagram.png", "Gallery.md",
                                 "assets/diagram.png", now=now)
               for now in (start + 1, start + 300.5, start + TICKET_BUCKET_S,
                           start + TICKET_BUCKET_S + 1)}
    first, middle, end, next_bucket = tickets.values()
    assert first == middle == end != next_bucket
    for now in tickets:
        assert now + TICKET_TTL_S <= ticket_expiry(now) < now + TICKET_TTL_S + TICKET_BUCKET_S
    scope = {"path": "/dashboard/attachment", "headers": [],
             "query_string": ("target=diagram.png&page=Gallery.md" + first).encode()}
    assert ticket_authorization(auth, scope, now=start + 1) == signed.encode()
    assert ticket_authorization(auth, scope, now=ticket_expiry(start + 1) + 1) is None
    assert re.search(r"&ticket=[0-9a-f]+\.", first)     # <key id>.<HMAC>
    # two views of the page, a second apart, name the same URLs (unless a bucket ends between)
    before = time.time()
    views = [_signed_sources(client, "Gallery", {"Authorization": signed})]
    time.sleep(1.1)
    views.append(_signed_sources(client, "Gallery", {"Authorization": signed}))
    if ticket_expiry(before) == ticket_expiry(time.time()):
        assert views[0] == views[1]


def test_a_rendered_page_is_revalidated_by_its_tag(attachments):
    """With URLs new on every view, the page's JSON could not be kept by the browser. It is
    the same within a bucket now, tagged (ETag): asked again with the tag, the answer is a
    304 with no body; a changed page, or another token's view (its own tickets), is a 200."""
    client = _client(attachments, token=TOKEN, host="0.0.0.0")
    signed = {"Authorization": f"Bearer {TOKEN}"}
    before = time.time()
    first = client.get("/dashboard/page", params={"page": "Gallery"}, headers=signed)
    tag = first.headers["etag"]
    assert first.status_code == 200 and tag.startswith('W/"')
    assert first.headers["cache-control"] == "private, no-cache"
    again = client.get("/dashboard/page", params={"page": "Gallery"},
                       headers={**signed, "If-None-Match": tag})
    if ticket_expiry(before) == ticket_expiry(time.time()):
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    (attachments / "wiki" / "Gallery.md").write_text("# Gallery\n\nNow ![[paper.pdf]].\n")
    changed = client.get("/dashboard/page", params={"page": "Gallery"},
                         headers={**signed, "If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["etag"] != tag
    plain = _client(attachments).get("/dashboard/page", params={"page": "Gallery"})
    assert plain.status_code == 200 and plain.headers["etag"] not in (tag, changed.headers["etag"])
