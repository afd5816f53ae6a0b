"""The Aho-Corasick matcher finds exactly the title regex's matches.

``term_spans(index, text)`` must equal ``[m.span() for m in index.pattern.finditer(text)]``
and ``term_matcher.scan_mentions`` must equal ``TitleIndex.scan_mentions`` (the regex), on the
real Obsidian Help vault, on crafted texts (leftmost-longest choices, word boundaries, CJK)
and on random texts glued from titles, markup and the characters whose case the regex folds
unlike ``str.lower`` (İ, ẞ/ß, ſ, the Kelvin sign, ı, σ/ς, µ/μ, ﬅ/ﬆ).
"""

import _sre
import random
import re

import pytest

from mindgraph.ingest.index import IndexEntry, TitleIndex
from mindgraph.ingest.linker import add_links
from mindgraph.ingest.term_matcher import (_EXTRA_CASES, fold, is_term, matcher, scan_mentions,
                                           shorter_terms, term_spans)
from mindgraph.page.parse import parse_page


def regex_spans(index: TitleIndex, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in index.pattern.finditer(text)] if index.pattern else []


def assert_same(index: TitleIndex, texts) -> None:
    matched: set[str] = set()
    for text in texts:
        spans = term_spans(index, text)
        assert spans == regex_spans(index, text), repr(text)
        assert scan_mentions(index, text) == index.scan_mentions(text), repr(text)
        matched.update(text[start:end] for start, end in spans)
    # what the linker asks of a mention it may cut short, without the regex
    for text in matched:
        assert shorter_terms(index, text) == index._shorter_terms(text), repr(text)
        for stop in range(1, len(text) + 1):
            assert is_term(index, text[:stop]) == \
                (index.pattern.fullmatch(text[:stop]) is not None), repr(text[:stop])


def index_of(*terms: str) -> TitleIndex:
    return TitleIndex(IndexEntry(f"p{n}.md", term) for n, term in enumerate(terms))


def test_the_vault_is_matched_as_the_regex_matches_it(corpora):
    root = corpora / "obsidian-help"
    notes = {f.relative_to(root).as_posix(): f.read_text(encoding="utf-8")
             for f in sorted(root.rglob("*.md"))}
    entries = []
    for path, text in notes.items():
        page = parse_page(text, path)
        entries.append(IndexEntry(path, page.title, page.aliases))
    index = TitleIndex(entries)
    assert matcher(index) is not None           # the automaton is used, not the regex
    assert_same(index, notes.values())
    assert sum(len(term_spans(index, t)) for t in notes.values()) > 20_000


CRAFTED_TERMS = ("Alpha", "Alpha Beta", "Alpha Beta Gamma Delta", "Beta Gamma", "Sync",
                 "Obsidian Sync", "C++ tips", "Node.js", "同期", "同期設定", "コマンド",
                 "コマンドパレット", "核心插件", "插件", "Markdown", "Straße", "Kelvin",
                 "İstanbul", "σοφία", "µ-law", "naïve", "ﬅring")

CRAFTED = (
    "Alpha Beta Gamma",              # the longest term at the leftmost start
    "Alpha Beta Gamma Delt",         # the longest fails: a shorter one at the same start
    "Alpha Beta Gamma Deltas",       # the longest fails its end boundary
    "xAlpha Beta Gamma",             # no start boundary: the next start
    "Alpha Betax Gamma",
    "AlphaBeta Gamma, alpha  beta",
    "ALPHA BETA GAMMA DELTA, alpha beta gamma delta.",
    "Obsidian Sync; Sync's syncing Sync2 _Sync Sync_ Sync-x",
    "c++ TIPS and node.JS and Node.jsx",
    "同期設定値を変える。同期する。コマンドパレットのコマンド。核心插件和插件",
    "Markdownフォーマット、同期Sync同期、Ｓync Syncｘ",
    "STRASSE Straße STRAẞE strasse",     # ẞ lowers to ß; "ss" is not ß to the regex
    "\u212aelvin KELVIN kelvin",           # the Kelvin sign is k
    "İstanbul ISTANBUL istanbul i̇stanbul ıstanbul",   # İ is i to the regex
    "ΣΟΦΊΑ σοφία ϲοφία ſync ſYNC",          # ſ is s, ς is σ
    "μ-law µ-law Μ-LAW",
    "NAÏVE naive",
    "ﬆring ﬅring STRING",
    "",
    "\n\nAlpha\n\nBeta Gamma\n",
)


def test_crafted_texts_are_matched_as_the_regex_matches_them():
    index = index_of(*CRAFTED_TERMS)
    assert matcher(index) is not None
    assert_same(index, CRAFTED)
    assert term_spans(index, "Alpha Beta Gamma Delt") == [(0, 10)]
    assert term_spans(index, "Alpha Beta Gamma Delta") == [(0, 22)]
    assert term_spans(index, "\u212aelvin") == [(0, 6)]
    # the term İstanbul is "i̇stanbul" lowered (9 characters): the regex, which folds İ to i,
    # does not find it written İstanbul, nor does the automaton
    assert term_spans(index, "İstanbul") == [] and term_spans(index, "ISTANBUL") == []
    assert term_spans(index, "I\u0307stanbul") == [(0, 9)]


FRAGMENTS = (*CRAFTED_TERMS, "Gamma", "Delta", "Beta", "Obsidian", "x", "1", "_", " ", " ",
             "\n", ".", ",", "-", "'", "`", "[[", "]]", "#", "、", "。", "值", "ー", "ｘ",
             "İ", "ı", "I", "i", "ẞ", "ß", "SS", "ſ", "s", "S", "\u212a", "k", "K", "Σ", "σ",
             "ς", "ϲ", "µ", "μ", "Μ", "ﬅ", "ﬆ", "\u0307", "ǅ", "ǆ", "Ǆ", "é", "É", "e\u0301")


@pytest.mark.parametrize("seed", range(3))
def test_random_texts_are_matched_as_the_regex_matches_them(seed):
    rng = random.Random(seed)
    texts = ["".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 80)))
             for _ in range(800)]
    index = index_of(*CRAFTED_TERMS)
    assert_same(index, texts)
    for text in texts:      # any text, a term or not
        start = rng.randrange(len(text))
        piece = text[start:rng.randint(start + 1, len(text))]
        assert is_term(index, piece) == (index.pattern.fullmatch(piece) is not None), repr(piece)
    # terms made of the odd characters as well
    for odd in (index_of(*CRAFTED_TERMS, "ǆemal", "ǅx", "ﬅar", "i̇ki", "σς", "kk"),
                index_of("ıstanbul", "ﬆar", "Beta", "straſſe", "µs", "Σς")):
        assert matcher(odd) is not None
        assert_same(odd, texts)
    # ı and i, ﬅ and ﬆ are one character to the regex: these terms fork there
    forked = index_of(*CRAFTED_TERMS, "ıı", "ﬆar")
    assert matcher(forked) is None
    assert_same(forked, texts)


def test_terms_forking_at_characters_the_regex_holds_equal_use_the_regex():
    """The regex tries "sx" before "ſxy" (code point order), not the longer first: the
    automaton would not, so the regex runs; its matches are the same either way."""
    index = index_of("Sxa", "ſxa b", "Beta")
    assert matcher(index) is None
    assert term_spans(index, "sxa b Beta") == regex_spans(index, "sxa b Beta") == [(0, 3), (6, 10)]
    assert matcher(index_of("Stra", "Straße")) is not None    # ß and ẞ fold the same


def test_a_scoped_index_shares_its_parents_automaton():
    # terms of this test alone (re.compile hands out one pattern per source, and the
    # automaton is kept per pattern)
    index = index_of(*CRAFTED_TERMS, "Only in the scoped test")
    scoped = index.within({"p0.md", "p3.md"})
    assert matcher(scoped) is None                      # its terms did not build the pattern
    assert term_spans(scoped, "Alpha Beta Gamma") == regex_spans(scoped, "Alpha Beta Gamma")
    assert matcher(index) is not None
    assert matcher(scoped) is matcher(index)
    assert add_links("Alpha Beta Gamma", "n.md", scoped)[1] == []


def test_linking_and_scanning_do_not_build_the_regex():
    # the automaton stands for it (its ~0.05 s over the vault's terms was the parent's,
    # before any worker forks); a copy with generic terms shares the automaton
    index = index_of("同期", "同期設", "Alpha Beta", "Alpha", "Sync", "Only in this test")
    assert scan_mentions(index, "同期設定を開く, Alpha Beta") == ("alpha beta", "同期", "同期設")
    linking = index.with_generic_terms(frozenset({"sync"}))
    assert matcher(linking) is matcher(index)
    # 同期設 cuts the word 設定: the mention is cut to 同期
    assert add_links("同期設定を開く。Alpha Beta. Sync.", "n.md", linking) == \
        ("[[p0|同期]]設定を開く。[[p2|Alpha Beta]]. Sync.", ["p0.md", "p2.md"])
    assert "pattern" not in index.__dict__ and "pattern" not in linking.__dict__


def test_fold_keeps_positions_and_folds_as_the_regex_does():
    """One character for one (the spans of the folded text are those of the text), and
    the characters the regex holds equal fold equal: checked here over the first 12,288
    code points (Latin, Greek, Cyrillic, ...) and the odd cases; all 1.1 million agree too,
    which takes a minute."""
    chars = [chr(i) for i in range(0x3000)] + list("ſ\u212a\u212bẞﬅﬆ")
    text = "".join(chars)
    folded = fold(text)
    assert len(folded) == len(text)
    assert fold("İ") == "i" and fold("ΑΣ") == fold("ασ") == fold("ας")
    groups: dict[str, list[str]] = {}
    for char, same in zip(chars, folded):
        groups.setdefault(same, []).append(char)
    for key, members in groups.items():
        if len(members) > 1 or key != members[0]:
            assert set(re.findall(re.escape(key), text, re.I)) == set(members), key


@pytest.mark.slow
def test_every_code_point_folds_as_the_regex_compares_it():
    """re.IGNORECASE compares a text character with a cased pattern character by their
    simple lower cases (``_sre.unicode_tolower``), widened to the sets of _EXTRA_CASES, and
    an uncased pattern character with itself: fold gives each character that set's smallest
    member, one character for one, and no character folds onto an uncased other."""
    bad = []
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        folded = fold(char)
        lower = _sre.unicode_tolower(code)
        if folded != chr(min((lower, *_EXTRA_CASES.get(lower, ())))):
            bad.append(char)
        elif folded != char and not _sre.unicode_iscased(ord(folded)):
            bad.append(char)
    assert bad == []
