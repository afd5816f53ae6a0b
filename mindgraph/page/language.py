"""The language of a text, a query or a page, read from the scripts of its letters.

Names are short codes: "ja" (kana among CJK), "zh" (Han only), "ko" (Hangul), "en" (mostly
Latin letters: English and every other Latin-script language), "other" (mostly another
script: Thai, Arabic, Cyrillic, ...). Retrieval uses them to prefer pages in the query's
language; the LLM compiler uses them to write a page in its note's language, and the offline
linker to link a note only to pages in its own language (``prose_language``).
"""

from __future__ import annotations

import re

from .markdown import mask_code, mask_comments
from .model import Page

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_ASCII_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_WIDE_LETTER = re.compile(r"[^\W\d_\x00-\x7f]")   # letters beyond ASCII (few in English)
# a character ``text_language`` counts as CJK, or a letter beyond ASCII
_NOT_ASCII_PROSE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af\u1100-\u11ff"
                              r"\u3130-\u318f]|[^\W\d_\x00-\x7f]")
_PROSE_HEAD = 8000      # characters of a body read for its prose (text_language takes 3,000)
# What is not prose: URLs, link targets (the text shown is kept), HTML tags
_NOT_PROSE = re.compile(r"(?:https?|ftp|file|obsidian)://\S+|www\.\S+|\]\([^)\n]*\)"
                        r"|<[^<>\n]*>|\[\[[^\]|\n]*\|?|\]\]")


def query_language(query: str) -> str:
    """"ja" when the query has kana, "zh" when it has Han characters only, "ko" for Hangul,
    "other" when most of its letters are of another non-Latin script (Thai, Arabic,
    Cyrillic, ...), else "en"."""
    if _KANA.search(query):
        return "ja"
    if _HAN.search(query):
        return "zh"
    if _HANGUL.search(query):
        return "ko"
    letters = [ch for ch in query if ch.isalpha()]
    foreign = sum(1 for ch in letters if ord(ch) > 0x24F)    # beyond Latin Extended-B
    return "other" if letters and foreign * 2 > len(letters) else "en"


def text_language(text: str, sample: int = 3000) -> str:
    """The language of a page, as ``query_language`` names them, from the share of its
    letters: mostly CJK → "ja" when kana are among them, "ko" for Hangul, else "zh"; mostly
    Latin → "en"; mostly another script → "other". A few CJK words in an English page (a
    language list) do not make it Chinese."""
    head = text[:sample]
    kana = len(_KANA.findall(head))
    han = len(_HAN.findall(head))
    hangul = len(_HANGUL.findall(head))
    ascii_ = head.encode("ascii", "ignore")     # Latin letters counted in C, 10x faster
    latin = len(ascii_) - len(ascii_.translate(None, _ASCII_LETTERS))
    cjk = kana + han + hangul
    if cjk * 2 >= latin and cjk:        # a CJK character carries about a word's worth
        return _cjk_language(kana, han, hangul)
    letters = latin + len(_WIDE_LETTER.findall(head))
    if letters and (letters - latin - cjk) * 2 > letters:
        return "other"
    return "en"


def _cjk_language(kana: int, han: int, hangul: int) -> str:
    """Which CJK language letters in these numbers write: kana among them → "ja"."""
    if kana * 20 >= kana + han + hangul:
        return "ja"
    return "ko" if hangul > han else "zh"


def prose_language(title: str, body: str) -> str:
    """``text_language`` of a note's prose: its title and body without code, comments,
    URLs, link targets and HTML tags, the text links are added in. A Chinese page that sets
    up a domain (URLs, DNS names in code) is Chinese, not English as its letters say; and a
    page titled in Chinese, Japanese or Korean whose prose is mostly Latin names (a list of
    contributors) is in the language of its title, as its CJK letters tell."""
    body = body[:_PROSE_HEAD]
    if _NOT_ASCII_PROSE.search(title) is None and _NOT_ASCII_PROSE.search(body) is None:
        return "en"     # no letter beyond ASCII: English, as below, without masking anything
    if "`" in body or "%%" in body or "<!--" in body:
        body = "\n".join(mask_code(mask_comments(body).split("\n")))
    text = title + "\n" + _NOT_PROSE.sub(" ", body)
    found = text_language(text)
    if found in ("en", "other") and text_language(title) in ("ja", "zh", "ko"):
        head = text[:3000]
        return _cjk_language(len(_KANA.findall(head)), len(_HAN.findall(head)),
                             len(_HANGUL.findall(head)))
    return found


_PAGE_LANGUAGES: dict[str, str] = {}
_PAGE_LANGUAGES_MAX = 200_000      # content hashes; a long-lived server sees every edit


def page_language(page: Page) -> str:
    """``prose_language`` of a page's title and body, memoised by content hash: the language
    its vectors' model, its keyword analyzer and the query-language preference go by. (Read
    from every letter, URLs and HTML included, 6 of the 883 vault pages were English: a
    Chinese list of contributors, a page of domain settings, which then had no vector for
    a question in their language.)"""
    found = _PAGE_LANGUAGES.get(page.content_hash)
    if found is None:
        if len(_PAGE_LANGUAGES) >= _PAGE_LANGUAGES_MAX:
            _PAGE_LANGUAGES.clear()
        found = _PAGE_LANGUAGES[page.content_hash] = prose_language(page.title, page.body)
    return found
