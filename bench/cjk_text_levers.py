"""Japanese and Chinese text levers of bench/bench_retrieval_levers.py: katakana long-vowel
marks, Chinese part-of-speech stop words, the vault's own words as terms and single Han
characters as terms (each switched on around one lever's index and queries)."""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterator


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mindgraph.page.language import page_language  # noqa: E402
from mindgraph.retrieval.analyzer import analyze  # noqa: E402
from mindgraph.retrieval.hybrid import HybridRetriever  # noqa: E402
from mindgraph.retrieval.keyword import KeywordIndex  # noqa: E402
import mindgraph.retrieval.analyzer as _analyzer  # noqa: E402
import mindgraph.text.cjk as _cjk  # noqa: E402
from lever_support import CJK, rebuilt  # noqa: E402

_CHOON = {"on": False}
KATAKANA_ONLY = re.compile("^[\u30a1-\u30fa\u30fc]+$")


def _choon_terms(original: Callable[..., tuple[str, ...]]) -> Callable[..., tuple[str, ...]]:
    """The analyser's CJK word terms with a katakana word's final long-vowel mark dropped when
    the lever is on (JIS Z 8301: フィルター / フィルタ, コンピューター / コンピュータ, both
    spellings in the vault), in pages and questions alike."""
    def terms(word: Any) -> tuple[str, ...]:
        out = original(word)
        if not _CHOON["on"]:
            return out
        return tuple(t[:-1] if len(t) >= 4 and t.endswith("ー") and KATAKANA_ONLY.match(t)
                     else t for t in out)
    terms.patched = True  # type: ignore[attr-defined]
    return terms


class SwitchedIndex(KeywordIndex):
    """An index built, and searched, inside ``switch()`` (the analyser changed for the time
    being: the same pages and parameters)."""

    switch: Callable[[], Any]

    @classmethod
    def over(cls, base: KeywordIndex, pages: Any, switch: Callable[[], Any]
             ) -> "SwitchedIndex":
        with switch():
            built = KeywordIndex.build(pages, base.params)
        out = cls.__new__(cls)
        out.__dict__.update(built.__dict__)
        out.switch = switch
        return out

    def search(self, *args: Any, **kw: Any) -> list[Any]:
        with self.switch():
            return super().search(*args, **kw)

    def page_scores(self, *args: Any, **kw: Any) -> dict[str, float]:
        with self.switch():
            return super().page_scores(*args, **kw)


@contextlib.contextmanager
def _choon_on() -> Iterator[None]:
    _CHOON["on"] = True
    try:
        yield
    finally:
        _CHOON["on"] = False


_ZH_TAGS: dict[str, frozenset[str]] = {}


def _zh_word_tags(original: Callable[..., Any]) -> Callable[..., Any]:
    """jieba's word classes, with ``_ZH_TAGS["on"]`` function words too while it is set."""
    def word(surface: str, tag: str) -> Any:
        function, noun, parts = original(surface, tag)
        if not function and tag in _ZH_TAGS.get("on", frozenset()):
            return True, noun, ()
        return function, noun, parts
    word.patched = True  # type: ignore[attr-defined]
    return word


def _zh_tags_on(tags: frozenset[str]) -> Callable[[], Any]:
    @contextlib.contextmanager
    def switch() -> Iterator[None]:
        if not getattr(_cjk._zh_word, "patched", False):
            _cjk._zh_word = _zh_word_tags(_cjk._zh_word)
        _ZH_TAGS["on"] = tags
        _cjk._zh_node.cache_clear()
        _cjk.words.cache_clear()
        try:
            yield
        finally:
            _ZH_TAGS.pop("on", None)
            _cjk._zh_node.cache_clear()
            _cjk.words.cache_clear()
    return switch


def zh_tags_lever(tags: str) -> Callable[[HybridRetriever], HybridRetriever]:
    """Chinese words of jieba's ``tags`` (d adverb, r pronoun, c conjunction, p preposition,
    m numeral, q classifier, f direction, t time) stop words too, in pages and questions."""
    return lambda r: rebuilt(r, SwitchedIndex.over(r.keyword, r.pages.values(),
                                                   _zh_tags_on(frozenset(tags.split()))))


def choon_lever(r: HybridRetriever) -> HybridRetriever:
    if not getattr(_analyzer._word_terms, "patched", False):   # once, when first asked for
        _analyzer._word_terms = _choon_terms(_analyzer._word_terms)
    return rebuilt(r, SwitchedIndex.over(r.keyword, r.pages.values(), _choon_on))


_VAULT_WORDS: dict[str, frozenset[str]] = {}
VAULT_WORD_CHARS = 10


def vault_words(pages: Any) -> frozenset[str]:
    """The vault's own vocabulary: each CJK run (at most ``VAULT_WORD_CHARS`` characters) of
    a page's title, aliases, headings and link targets that its language's segmenter cuts
    into two words or more (页面预览 → 页面|预览), the first and last of them content words
    (not 什么是, の数式), normalised as the analyser reads text."""
    found: set[str] = set()
    for page in pages:
        lang = page_language(page)
        hint = lang if lang in CJK else None
        names = [page.title, *page.aliases, *(s.heading for s in page.sections)]
        for link in page.links:
            names += [link.target.rsplit("/", 1)[-1].removesuffix(".md"),
                      link.heading or "", link.alias or ""]
        for name in names:
            for run in _cjk.CJK_RUN.findall(_analyzer.normalize(name)):
                if 2 <= len(run) <= VAULT_WORD_CHARS:
                    run_lang = _cjk.run_language(run, hint)
                    cut = _cjk.words(run, run_lang) if run_lang in CJK else ()
                    # whole words, beginning and ending with a content word (not 什么是)
                    if len(cut) > 1 and not cut[0].function and not cut[-1].function \
                            and cut[0].start == 0 and cut[-1].end == len(run):
                        found.add(run)
    return frozenset(found)


def _vault_word_terms(original: Callable[..., None]) -> Callable[..., None]:
    """The analyser's CJK run terms, plus each vault word (``_VAULT_WORDS["on"]``) that runs
    of two to five whole words of the run spell, while the lever is on."""
    def terms(run: str, lang: str, append: Callable[[str], None], query: bool) -> None:
        original(run, lang, append, query)
        known = _VAULT_WORDS.get("on")
        if not known or lang not in CJK:
            return
        cut = _cjk.words(run, lang)
        for i in range(len(cut)):
            for j in range(i + 1, min(i + 5, len(cut))):
                phrase = run[cut[i].start:cut[j].end]
                if phrase in known:
                    append(phrase)
    terms.patched = True  # type: ignore[attr-defined]
    return terms


def vault_words_lever(r: HybridRetriever) -> HybridRetriever:
    """Vault words (``vault_words``: titles, aliases, headings, link targets) are terms of
    their own wherever pages and questions spell them with whole words, as if the segmenters
    knew them (jieba's add_word; MeCab has no such call at run time, so the analyser
    does it for both)."""
    known = vault_words(r.pages.values())

    @contextlib.contextmanager
    def switch() -> Iterator[None]:
        if not getattr(_analyzer._cjk_terms, "patched", False):
            _analyzer._cjk_terms = _vault_word_terms(_analyzer._cjk_terms)
        _VAULT_WORDS["on"] = known
        try:
            yield
        finally:
            _VAULT_WORDS.pop("on", None)
    return rebuilt(r, SwitchedIndex.over(r.keyword, r.pages.values(), switch))


CHAR_MARK = "字:"       # a character term: never a word's (the analyser's hold no colon)
_CHARS: dict[str, bool] = {}


def _char_word_terms(original: Callable[..., tuple[str, ...]]
                     ) -> Callable[..., tuple[str, ...]]:
    """The analyser's terms of a CJK word, plus each Han character of a content word as a
    term of its own (``CHAR_MARK`` + the character) while the lever is on."""
    def terms(word: Any) -> tuple[str, ...]:
        out = original(word)
        if not _CHARS.get("on") or not out:
            return out
        return (*out, *(CHAR_MARK + c for c in dict.fromkeys(word.text)
                        if _HAN_CHAR.match(c)))
    terms.patched = True  # type: ignore[attr-defined]
    return terms


_HAN_CHAR = re.compile(_cjk.HAN_CHAR)


@contextlib.contextmanager
def _chars_on() -> Iterator[None]:
    if not getattr(_analyzer._word_terms, "patched", False):
        _analyzer._word_terms = _char_word_terms(_analyzer._word_terms)
    _CHARS["on"] = True
    try:
        yield
    finally:
        _CHARS.pop("on", None)


class CharIndex(SwitchedIndex):
    """Words and their Han characters in one index; a question's characters weigh
    ``char_weight`` against its words' 1."""

    char_weight = 0.3

    def query_terms(self, query: str) -> list[str]:
        return [t for t in super().query_terms(query) if not t.startswith(CHAR_MARK)]

    def _char_extra(self, query: str, extra: Any) -> dict[str, float]:
        with self.switch():
            chars = [t for t in dict.fromkeys(analyze(query, query=True))
                     if t.startswith(CHAR_MARK)]
        out = dict(extra or {})
        for term in chars:
            out.setdefault(term, self.char_weight)
        return out

    def search(self, query: str, limit: int = 10, extra: Any = None, concepts: Any = ()
               ) -> list[Any]:
        return super().search(query, limit, self._char_extra(query, extra), concepts)

    def page_scores(self, query: str, paths: Any, extra: Any = None, concepts: Any = ()
                    ) -> dict[str, float]:
        return super().page_scores(query, paths, self._char_extra(query, extra), concepts)


def chars_lever(weight: float) -> Callable[[HybridRetriever], HybridRetriever]:
    """Han characters of content words indexed beside the words (pages and questions), the
    question's at ``weight``."""
    def make(r: HybridRetriever) -> HybridRetriever:
        index = CharIndex.over(r.keyword, r.pages.values(), _chars_on)
        index.char_weight = weight
        return rebuilt(r, index)
    return make
