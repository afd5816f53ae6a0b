"""The readable text of an HTML page, one block (paragraph, list item, heading) a paragraph.

The stdlib ``html.parser`` is used rather than beautifulsoup4: it is the parser bs4 itself
uses by default, it tolerates broken markup, and all verification needs is the text with its
block boundaries (for sentence splitting) and without scripts, styles and templates: a tree
API would add a dependency for nothing.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe",
                   "object"})
_BLOCK = frozenset({"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4",
                    "h5", "h6", "br", "hr", "tr", "td", "th", "table", "section", "article",
                    "header", "footer", "nav", "aside", "main", "blockquote", "pre", "figure",
                    "figcaption", "title", "summary", "details", "caption", "form", "body"})
_SPACE = re.compile(r"\s+")


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.current: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _SKIP:
            self.skipping += 1
        elif tag in _BLOCK:
            self._end_block()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCK:
            self._end_block()

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.current.append(data)

    def _end_block(self) -> None:
        text = _SPACE.sub(" ", "".join(self.current)).strip()
        if text:
            self.blocks.append(text)
        self.current = []


def html_to_text(html: str) -> str:
    """The text of ``html``: blocks separated by blank lines, whitespace collapsed."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    parser._end_block()
    return "\n\n".join(parser.blocks) + ("\n" if parser.blocks else "")
