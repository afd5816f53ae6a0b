"""What a response says besides its ranking: the query's language, an interpretation of the
top hit, follow-up queries in the query's language, and snippets for any page."""

from __future__ import annotations

import itertools
import re
from typing import Any, Sequence

from ..page.html_words import html_words
from ..page.language import page_language, query_language  # noqa: F401 - query_language re-exported
from ..page.links import MDLINK_RE, WIKILINK_RE, parse_wikilink_inner, replace_links
from ..page.markdown import replace_comments
from ..page.model import Page
from ..text.answer_labels import INTENT_WORDS
from .analyzer import iter_highlights, merge_spans
from .snippet_marks import marked, outside_code

SNIPPET_CHARS = 240
_CALLOUT = re.compile(r"(?m)^[ \t]*>[ \t]*\[![^\]\n]*\][+-]?")
_QUOTE = re.compile(r"(?m)^[ \t]*(?:>[ \t]?)+")
_CODE_SPAN = re.compile(r"(`[^`\n]*`)")
_HEADING_MARK = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+(?=\S)")
_FENCE = re.compile(r"(?m)^[ \t]*(?:`{3,}|~{3,})[^\n`]*$")     # ```md, ~~~ (the code stays)
_FENCED_BLOCK = re.compile(r"(?ms)(^[ \t]*(?:`{3,}|~{3,})[^\n]*\n.*?^[ \t]*(?:`{3,}|~{3,})[ \t]*$)")


def language_weight(page: Page, query_lang: str, factor: float) -> float:
    """``factor`` for a page in another language than the query's, else 1 (and 1 for
    queries in a script we do not name): ``retrieval.other_language_factor``."""
    if factor >= 1.0 or query_lang == "other" or page_language(page) == query_lang:
        return 1.0
    return factor


def interpretation(lang: str, title: str, heading: str, intent: str) -> str:
    """One sentence saying what the top hit is, in the query's language."""
    where = f"{title} › {heading}" if heading else title
    intent = INTENT_WORDS.get(lang, {}).get(intent, intent)
    if lang == "ja":
        return f"最も関連する情報は「{where}」にあります（意図: {intent}）。"
    if lang == "zh":
        return f"最相关的内容在「{where}」（意图：{intent}）。"
    return f"The best match is '{where}' (intent: {intent})."


def weak_interpretation(lang: str, title: str, heading: str, similarity: float) -> str:
    """The sentence in place of ``interpretation`` when no page has the query's words and the
    closest by meaning is below the noise level: no best match is announced."""
    where = f"{title} › {heading}" if heading else title
    if lang == "ja":
        return (f"クエリの語を含むページはありません。意味が最も近い「{where}」も関連は弱い"
                f"です（類似度 {similarity:.2f}）。")
    if lang == "zh":
        return (f"没有页面包含查询的词语。意思最接近的「{where}」关联也很弱"
                f"（相似度 {similarity:.2f}）。")
    return (f"Nothing matched the query's words; the closest page by meaning, '{where}', "
            f"is a weak match (similarity {similarity:.2f}).")


def follow_ups(lang: str, title: str, neighbours: Sequence[str], sections: Sequence[str]
               ) -> list[str]:
    """Up to three next queries: a neighbour's relation, a section, what links here."""
    out: list[str] = []
    for other in neighbours[:2]:
        out.append({"ja": f"{title}と{other}の関係は？", "zh": f"{title}和{other}有什么关系？"}
                   .get(lang, f"How does {title} relate to {other}?"))
    for heading in sections[:1]:
        out.append({"ja": f"{title}の「{heading}」について", "zh": f"{title}的「{heading}」是什么？"}
                   .get(lang, f"{title}: {heading}"))
    if len(out) < 3:
        out.append({"ja": f"{title}にリンクしているページは？", "zh": f"哪些页面链接到{title}？"}
                   .get(lang, f"What links to {title}?"))
    return out[:3]


def readable(markdown: str) -> str:
    """Markdown as a reader sees it, on one line: callout and quote markers, comments, bold
    markers, heading markers, raw HTML tags and link syntax gone (a link becomes its words), so a snippet spends its
    characters on content and its own bold marks the query's words alone."""
    text = replace_comments(markdown, lambda _: " ")
    # the HTML a note writes as prose goes, and the '#####' of a heading too deep to make a
    # section of its own; the HTML (or '# comment') a code block shows is its content
    text = "".join(piece if index % 2 else _HEADING_MARK.sub("", html_words(piece))
                   for index, piece in enumerate(_FENCED_BLOCK.split(text)))
    text = _CALLOUT.sub("", text)
    text = _QUOTE.sub("", text)
    text = _FENCE.sub(" ", text)
    # in `code`, link syntax and ** are text; elsewhere a link becomes its words, and the
    # page's own bold goes (it would nest with the snippet's: ****Canvas**)
    text = "".join(piece if piece.startswith("`") else _link_words(piece).replace("**", "")
                   for piece in _CODE_SPAN.split(text))
    return " ".join(text.split())


def _link_words(text: str) -> str:
    return replace_links(text, lambda target, heading, _block, alias:
                         alias or target or heading or "")


def embeds_shown(markdown: str) -> str:
    """What a text that a reader sees only as embeds shows, named ("(embeds Search › Embed
    search results in a note)"): a section of one ``![[...]]`` has no words of its own, and
    an empty snippet reads as a broken result; "" when ``markdown`` embeds nothing."""
    names: list[str] = []
    for match in WIKILINK_RE.finditer(markdown):
        if match.group(1):
            target, heading, _block, alias = parse_wikilink_inner(match.group(2))
            names.append(alias or " › ".join(part for part in (target, heading) if part))
    names += [match.group(2) or match.group(3).strip("<>")
              for match in MDLINK_RE.finditer(markdown) if match.group(1)]
    names = [name for name in dict.fromkeys(names) if name]
    return f"(embeds {', '.join(names)})" if names else ""


def embed_label(embedded: Any) -> str:
    """How a snippet taken from an embed (``embeds.Embedded``) says where its words are from."""
    return f"(embedded from {embedded.name}) "


def snippet_for(page: Page, section_id: str | None, terms: Sequence[str],
                embedded: Sequence[Any] = ()) -> str:
    """A window of the section (or the page) around the first query term, terms in **bold**;
    ``embedded``: what the section's embeds show, searched after its own text."""
    section = page.section(section_id) if section_id else None
    own = (section.text if section else "") or page.indexed_body
    text = readable(own)
    if embedded and terms and next(iter_highlights(text, terms), None) is None:
        for shown in embedded:      # the section's own text has no query word: an embed's
            inner = readable(shown.text)
            if next(iter_highlights(inner, terms), None) is not None:
                return embed_label(shown) + _window(inner, terms)
    return _window(text, terms) if text else embeds_shown(own)


def _window(text: str, terms: Sequence[str]) -> str:
    found = iter_highlights(text, terms) if terms else iter(())
    first = next(found, None)
    start = 0 if first is None else max(0, first[0] - SNIPPET_CHARS // 3)
    start, end = outside_code(text, start, min(len(text), start + SNIPPET_CHARS))
    # spans come in order: stop reading (and scanning the text) past the window
    spans = [] if first is None else \
        [first, *itertools.takewhile(lambda span: span[0] < end, found)]
    window = [(s - start, e - start) for s, e in merge_spans(spans) if s >= start and e <= end]
    return (("…" if start > 0 else "") + marked(text[start:end], window)
            + ("…" if end < len(text) else ""))
