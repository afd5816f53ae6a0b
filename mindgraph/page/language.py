"""The language of a text, a query or a page, read from the scripts of its letters.

Names are short codes: "ja" (kana among CJK), "zh" (Han only), "ko" (Hangul), "en" (mostly
Latin letters: English and every other Latin-script language), "other" (mostly another
script: Thai, Arabic, Cyrillic, ...). Retrieval uses them to prefer pages in the query's
language; the LLM compiler uses them to write a page in its note's language.
"""

from __future__ import annotations

import re

from .model import Page

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_LATIN = re.compile("[A-Za-z]")
_LETTER = re.compile(r"[^\W\d_]")      # letters (a regex counts them in C, not per character)


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
    latin = len(_LATIN.findall(head))
    cjk = kana + han + hangul
    if cjk * 2 >= latin and cjk:        # a CJK character carries about a word's worth
        if kana * 20 >= cjk:
            return "ja"
        return "ko" if hangul > han else "zh"
    letters = len(_LETTER.findall(head))
    if letters and (letters - latin - cjk) * 2 > letters:
        return "other"
    return "en"


_PAGE_LANGUAGES: dict[str, str] = {}
_PAGE_LANGUAGES_MAX = 200_000      # content hashes; a long-lived server sees every edit


def page_language(page: Page) -> str:
    """``text_language`` of a page's title and body, memoised by content hash."""
    found = _PAGE_LANGUAGES.get(page.content_hash)
    if found is None:
        if len(_PAGE_LANGUAGES) >= _PAGE_LANGUAGES_MAX:
            _PAGE_LANGUAGES.clear()
        found = _PAGE_LANGUAGES[page.content_hash] = text_language(page.title + "\n" + page.body)
    return found
