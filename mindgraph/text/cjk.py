"""The words of Chinese and Japanese text, which is written without spaces.

Japanese goes through MeCab (``fugashi``) with the UniDic-lite dictionary, Chinese through
jieba's dictionary and HMM (``rjieba``, in Rust). Both dictionaries ship inside their packages
(nothing is downloaded) and are loaded on first use only, so a process that never meets CJK
text never pays for them; their files are checked against the SHA-256 digests pinned below
before first use. Korean (Hangul) is written with spaces and has no segmenter here.

Each word knows whether it is a *function word*: a particle, ending, auxiliary, pronoun,
question word or punctuation (Japanese by UniDic's part of speech, Chinese by jieba's tag and
a short list). Those are the stop words of the two languages: 「とは何ですか」 and 「什么是」 say
that a question is asked, not what it is about.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib.util
import re
import threading
from itertools import starmap
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from ..errors import MindgraphError
from ..fsutil import hash_ahead, sha256_file

# Han, kana and Hangul (with the iteration mark 々): the scripts written without spaces.
CJK_CHARS = ("\u1100-\u11ff\u3005\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
             "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff")
CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_KANA = re.compile("[\u3040-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff]")
_HIRAGANA = re.compile("[\u3040-\u309f]+")
# One Han character (with the iteration mark 々), as a regular expression's class.
HAN_CHAR = "[\u3005\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_HAN = re.compile(HAN_CHAR)
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
# Katakana letters and the long-vowel mark, not the middle dot 「・」 that separates words.
KATAKANA = re.compile("[\u30a1-\u30fa\u30fc\u31f0-\u31ff]")
KATAKANA_WORD = re.compile("[\u30a1-\u30fa\u30fc\u31f0-\u31ff]+")

# The release of each package measured (pinned in pyproject.toml) and the digests of the files
# each segmenter loads from it.
RELEASES = {"unidic_lite": "unidic-lite==1.0.8", "rjieba": "rjieba==0.2.2"}
PINNED_FILES: dict[str, dict[str, str]] = {
    "unidic_lite": {   # unidic-lite 1.0.8: UniDic 2.1.2 for MeCab
        "dicdir/sys.dic": "122c4c91f026bf4b65bbe2dfd8b9f8eeb6ab56d8eb2a7287a68bca75708ba513",
        "dicdir/matrix.bin": "88fb99efe1075d9b8b40e01bb2751e4095f1612618f2490af776eb5ed39190a9",
        "dicdir/char.bin": "dd31396563d8924645b80fd3c9aa7b13ca089d7748f25553a1d6bc3f9b511ae8",
        "dicdir/unk.dic": "e3b92803feeb6c2712c796b905317ec192a59729d2c1e92b2728d454169541c4",
        "dicdir/dicrc": "fcd17f35752de1417859a15e2e1f043d666da03f36dc632e8c0ed46887883a59",
    },
    "rjieba": {        # rjieba 0.2.2 (manylinux x86_64): jieba's dictionary is compiled in
        "rjieba.abi3.so": "1d9f410a4c9884b0a49d0a842c672b3cf4e56a80c7744421b0bad7cb63ae7714",
    },
}

# UniDic parts of speech that carry no topic: particles, auxiliaries, symbols, pronouns
# (何, どこ, これ), adnominals (この, どの), adverbs (どう, すぐ), conjunctions, interjections.
_JA_FUNCTION_POS = frozenset("助詞 助動詞 補助記号 記号 空白 代名詞 連体詞 副詞 接続詞 感動詞".split())
# Formal nouns: grammar, not topic (「〜すること」「〜するため」「〜したところ」).
_JA_FUNCTION_WORDS = frozenset("こと もの ため ところ とき 時 ほう 方 わけ はず".split())
# jieba tags of particles, modal particles, onomatopoeia and punctuation
_ZH_FUNCTION_TAGS = frozenset("u uj ul uz ug uv ud y e o x w".split())
_ZH_FUNCTION_WORDS = frozenset("""
的 了 着 过 是 在 和 与 及 或 或者 而 并 并且 但 但是 就 也 都 还 又 再 吗 呢 吧 啊 呀 么 嘛
我 你 您 他 她 它 我们 你们 他们 自己 这 那 这个 那个 这些 那些 这样 那样 这里 那里 这是 那是
什么 怎么 怎样 怎么样 怎样才能 如何 该 为什么 为何 哪 哪里 哪儿 哪些 哪个 几 多少 是否 是不是
能 能够 可以 可 会 要 想 应该 得 地 把 被 让 给 对 从 到 向 于 以 为 因为 所以 如果 的话
一 一个 一下 一些 有 没有 不 不能 不会 没 已经 时 时候 之后 之前 里 上 下 中 后 前 请问
它们 她们 其他 其它 所有 每个 几个 很 最 更 非常 只 只是 还是 然后 那篇 这篇 那种 这种
""".split()) | frozenset("""
用 需要 另外 做法 办法 方法 怎么办 知道 告诉 请 样子 这么 怎么回事 回事
""".split())    # how a question asks ("do I need…", "what is the way to…"), as how / need
# in English: rarer in pages than in questions, they matched the few pages using them
_ZH_FUNCTION_CHARS = frozenset(word for word in _ZH_FUNCTION_WORDS if len(word) == 1)


class Word(NamedTuple):
    """One word of a CJK run: its span in the run, its text and dictionary form (a named
    tuple: a vault segments ~100,000 words, and a frozen dataclass took 4x as long to make)."""

    start: int
    end: int
    text: str
    base: str           # dictionary form (Japanese verbs and adjectives), else the text
    function: bool      # a particle, ending, pronoun, question word or punctuation
    noun: bool
    parts: tuple[str, ...] = ()     # shorter dictionary words inside it (Chinese)
    inflects: bool = False          # a Japanese verb or adjective (its ending may follow)
    ending: bool = False            # a Japanese verb's ending: れ, た, ない, ます, て


def run_language(run: str, hint: str | None = None) -> str:
    """"ja", "zh" or "ko" for a CJK run: kana make it Japanese and Hangul Korean; Han alone
    is the ``hint`` (the language of the text around it) when that is "ja", else Chinese."""
    if _KANA.search(run):
        return "ja"
    if _HANGUL.search(run):
        return "ko"
    return "ja" if hint == "ja" else "zh"


def text_hint(text: str) -> str | None:
    """"ja" when ``text`` has kana anywhere (so its Han-only runs are Japanese), else None."""
    return "ja" if not text.isascii() and _KANA.search(text) else None


@functools.lru_cache(maxsize=4096)     # ~4 MB: repeats are near (a page's headings, its hits)
def words(run: str, lang: str) -> tuple[Word, ...]:
    """The words of one CJK run in ``lang`` ("ja" or "zh"); () for other languages."""
    if lang == "ja":
        return _japanese(run)
    if lang == "zh":
        return _chinese(run)
    return ()


# the runs one query's answer has cut (``one_query``), else None: cut again each time
_ONE_QUERY: contextvars.ContextVar[dict[tuple[str, str], tuple[Word, ...]] | None] = \
    contextvars.ContextVar("mindgraph_one_query", default=None)


def fresh_words(run: str, lang: str) -> tuple[Word, ...]:
    """``words``, with no cache shared between queries read or written: cut again, or taken
    from what this query's answer has cut already (``one_query``). A query's words are cut
    so: a hit in the caches every tenant of a server shares made a search faster when anyone
    had searched the word before (its analysis 64 µs instead of 238, the median of the dev
    questions in ja and zh: bench/bench_query_cache.py), which timed another tenant's
    searches."""
    memo = _ONE_QUERY.get()
    if memo is not None and (run, lang) in memo:
        return memo[(run, lang)]
    found: tuple[Word, ...] = ()
    if lang == "ja":
        found = _japanese(run, _ja_node.__wrapped__)
    elif lang == "zh":
        found = _chinese(run, _zh_node.__wrapped__)
    if memo is not None:
        memo[(run, lang)] = found
    return found


@contextlib.contextmanager
def one_query() -> Iterator[None]:
    """While one query is answered (in this thread), ``fresh_words`` cuts each of its runs
    once: the analyses of one search share the words, no two searches do."""
    token = _ONE_QUERY.set({})
    try:
        yield
    finally:
        _ONE_QUERY.reset(token)


def word_bounds(text: str, hint: str | None = None) -> set[int]:
    """Offsets in ``text`` where a Chinese or Japanese word starts or ends (for CJK runs)."""
    hint = hint or text_hint(text)
    bounds: set[int] = set()
    for match in CJK_RUN.finditer(text):
        offset = match.start()
        found = words(match.group(), run_language(match.group(), hint))
        bounds.update([offset + word[0] for word in found])     # start
        bounds.update([offset + word[1] for word in found])     # end
    return bounds


def known_characters(run: str, lang: str, fresh: bool = False) -> int:
    """How many characters of one CJK run the dictionary of ``lang`` ("ja" or "zh") cuts
    into words of two or more characters it knows (not ones guessed from the characters:
    MeCab's unknown words, which UniDic gives no dictionary form, and jieba's HMM words;
    each dictionary knows nearly every character as a word): what tells which language a
    run of Han alone is written in (伏見稲荷: 4 in Japanese, 0 in Chinese; 故宫博物院: 2, 5).
    ``fresh``: cut as ``fresh_words`` cuts (a query's run)."""
    if lang == "ja":
        return sum(len(surface) for surface, _, _, base in _unidic_nodes(run)
                   if base and len(surface) > 1)
    if lang == "zh":
        jieba = _jieba()
        return sum(len(word.text) for word in (fresh_words if fresh else words)(run, lang)
                   if len(word.text) > 1 and jieba.has_word(word.text))
    return 0


# -- Japanese -------------------------------------------------------------------------------
# A Word from a plain tuple of its nine fields, without the named tuple's __new__ (a Python
# function that takes them one by one): a vault makes ~100,000 words.
_new_word = tuple.__new__


# MeCab (through fugashi) kills the process with a segmentation fault on one parse of a few
# hundred thousand characters (290,000 kana and kanji without punctuation: one CJK run; a
# note uploaded through POST /documents took the server down). A longer run is parsed in
# pieces of this many characters; a word across a cut is split in two (only in such runs).
MECAB_PIECE = 16_384
# MeCab's time on a stretch of katakana (its unknown words' class, grouped) grows with the
# square of its length: 1,000 characters 2 ms, 4,000 54 ms, 16,384 0.72 s, so a note of
# 320,000 katakana (ファイル again and again, 960 kB through POST /documents) took 13 s to
# segment, holding the write lane. A stretch longer than this is parsed in pieces of this
# many characters (no katakana word is a thousand long; other runs are cut as before).
KATAKANA_PIECE = 1_024
_LONG_KATAKANA = re.compile(f"[\u30a0-\u30ff\u31f0-\u31ff]{{{KATAKANA_PIECE + 1},}}")


def _mecab_pieces(run: str) -> Iterator[str]:
    """``run`` in the pieces MeCab parses: at most MECAB_PIECE characters, and a stretch of
    katakana of at most KATAKANA_PIECE."""
    start = 0
    for stretch in _LONG_KATAKANA.finditer(run):
        for at in range(start, stretch.start(), MECAB_PIECE):
            yield run[at:min(at + MECAB_PIECE, stretch.start())]
        for at in range(stretch.start(), stretch.end(), KATAKANA_PIECE):
            yield run[at:min(at + KATAKANA_PIECE, stretch.end())]
        start = stretch.end()
    for at in range(start, len(run), MECAB_PIECE):
        yield run[at:at + MECAB_PIECE]


def _mecab_lines(run: str) -> list[str]:
    """MeCab's output lines for ``run`` (``_make_tagger``'s format), parsed piece by piece."""
    parse = _tagger()
    if len(run) <= KATAKANA_PIECE:
        return parse(run).split("\n")
    return [line for piece in _mecab_pieces(run) for line in parse(piece).split("\n")]


def _japanese(run: str, node: Callable[[str], Any] | None = None) -> tuple[Word, ...]:
    out = []
    add = out.append
    position = 0
    for known in map(node or _ja_node, _mecab_lines(run)):
        if known is None:
            continue
        surface = known[0]
        if run.startswith(surface, position) and surface:   # MeCab's nodes follow on
            start = position
        else:
            start = run.find(surface, position) if surface else -1
            if start < 0:
                continue
        position = start + len(surface)
        add(_new_word(Word, (start, position) + known))
    return tuple(out)


@functools.lru_cache(maxsize=65536)     # the Help vault: 89,000 nodes, 3,100 distinct
def _ja_node(line: str) -> tuple[str, str, bool, bool, tuple[str, ...], bool, bool] | None:
    """A Word's fields but its span (text, base, function, noun, parts, inflects, ending)
    from one line of MeCab's output (``_unidic_lines``; None for a line that is no node).
    Lines repeat: each is worked out once."""
    surface, tab, feature = line.partition("\t")
    if not tab:                 # the empty end-of-sentence line
        return None
    return (surface, *_ja_word(surface, feature))


def _ja_word(surface: str, feature: str) -> tuple[str, bool, bool, tuple[str, ...], bool, bool]:
    """(base, function, noun, parts, inflects, ending) of a MeCab node: its surface and
    UniDic's raw CSV."""
    pos1, pos2, orth_base = _pos(feature)
    inflects = pos1 in ("動詞", "形容詞")
    base = surface
    if inflects and orth_base and orth_base != "*":
        base = orth_base
    # a verb or adjective in hiragana alone is grammar too: について (つく), ている, ない
    function = (pos1 in _JA_FUNCTION_POS or pos2 in ("非自立可能", "助動詞語幹")
                or surface in _JA_FUNCTION_WORDS
                or (inflects and _HIRAGANA.fullmatch(surface) is not None))
    return (base, function, pos1 == "名詞", (), inflects,
            pos1 == "助動詞" or (pos2 == "接続助詞" and surface in ("て", "で")))


def _unidic_nodes(run: str) -> Iterator[tuple[str, str, str, str | None]]:
    """(surface, part of speech, its subclass, dictionary form) of each MeCab node."""
    for surface, feature in _unidic_lines(run):
        yield (surface, *_pos(feature))


def _pos(feature: str) -> tuple[str, str, str | None]:
    """(part of speech, its subclass, dictionary form) from a node's UniDic CSV."""
    fields = feature.split(",", 11)
    return fields[0], fields[1] if len(fields) > 1 else "", \
        fields[10] if len(fields) > 10 else None


def _unidic_lines(run: str) -> Iterator[tuple[str, str]]:
    """(surface, UniDic's raw CSV) of each MeCab node of ``run``.

    Read from MeCab's text output, a line per node (a CJK run holds no comma to quote, no
    tab, no newline): one call into MeCab per run and no Python object per node (fugashi's
    parsed ``feature`` doubled the time of indexing Japanese)."""
    for line in _mecab_lines(run):
        surface, tab, feature = line.partition("\t")
        if tab:                 # not the empty end-of-sentence line
            yield surface, feature


# -- Chinese --------------------------------------------------------------------------------
def _chinese(run: str, node: Callable[[str, str], Any] | None = None) -> tuple[Word, ...]:
    out = []
    add = out.append
    position = 0
    for known in starmap(node or _zh_node, _jieba().tag(run)):
        start = position
        position += known[0]
        if known[1] is not None:
            add(_new_word(Word, (start, position) + known[1]))
    return tuple(out)


@functools.lru_cache(maxsize=65536)     # the Help vault: 61,000 words, 3,500 distinct
def _zh_node(surface: str, tag: str) -> tuple[int, tuple[str, str, bool, bool, tuple[str, ...],
                                                         bool, bool] | None]:
    """The length of a word jieba tagged ``tag`` and a Word's fields but its span (text,
    base, function, noun, parts, inflects, ending); None for a blank one. Words repeat: each
    is worked out once."""
    if not surface.strip():
        return len(surface), None
    return len(surface), (surface, surface, *_zh_word(surface, tag), False, False)


def _zh_word(surface: str, tag: str) -> tuple[bool, bool, tuple[str, ...]]:
    """(function, noun, parts) of a word jieba tagged ``tag``."""
    jieba = _jieba()
    function = (tag in _ZH_FUNCTION_TAGS or surface in _ZH_FUNCTION_WORDS
                or _glued_function_words(surface, jieba))
    noun = tag.startswith("n") or tag == "vn"        # vn: 设置, 设备 (a verb's noun)
    return function, noun, _parts(surface, jieba) if not function else ()


def _glued_function_words(word: str, jieba: Any) -> bool:
    """True for a word jieba's HMM glued from function words it does not know as one: 我能,
    它会, 下要 (状态|下要|怎样), 上时 (链接|上时) are grammar, not a topic (62 of the vault's
    51,576 Chinese content words, and common in questions: 我该, 我能)."""
    return (len(word) > 1 and _ZH_FUNCTION_CHARS.issuperset(word)
            and not jieba.has_word(word))


def _parts(word: str, jieba: Any) -> tuple[str, ...]:
    """The dictionary words of two and three characters inside a longer word, as jieba's
    search mode finds them: 非标准 → 标准, 反向链接面板 → 反向 链接 面板."""
    if len(word) < 3:
        return ()
    found = [word[i:i + n] for n in (2, 3) if len(word) > n
             for i in range(len(word) - n + 1) if jieba.has_word(word[i:i + n])]
    return tuple(dict.fromkeys(found))


# -- loading --------------------------------------------------------------------------------
_LOCKS = {"ja": threading.Lock(), "zh": threading.Lock()}
_LOADED: dict[str, Any] = {}


def _tagger() -> Callable[[str], str]:
    """MeCab's parse of a run as text: a line ``surface<TAB>raw UniDic CSV`` per node."""
    return _load("ja", _make_tagger)


def _jieba() -> Any:
    return _load("zh", _make_jieba)


def preload(texts: Iterable[str]) -> None:
    """Load now the segmenters ``texts`` will need (MeCab for any text with kana, jieba for
    any with Han and no kana), so that processes forked afterwards share them instead of each
    loading and checking its own (ingest/workers.py). A segmenter loaded already is not
    looked for (the texts are not searched at all once both are: a first run's compile
    called this, in the process its workers wait on, over ~550 English notes searched for
    kana in vain)."""
    japanese, chinese = "ja" in _LOADED, "zh" in _LOADED
    for text in texts:
        if not japanese and needs_japanese(text):
            japanese = True
        elif not chinese and needs_chinese(text):
            chinese = True
        if japanese and chinese:
            break
    if japanese:
        _tagger()
    if chinese:
        _jieba()


def needs_japanese(text: str) -> bool:
    """True for a text ``preload`` loads MeCab for: it has kana."""
    return not text.isascii() and _KANA.search(text) is not None     # isascii: a flag


def needs_chinese(text: str) -> bool:
    """True for a text ``preload`` loads jieba for: Han and no kana."""
    return not text.isascii() and _HAN.search(text) is not None and _KANA.search(text) is None


def _load(name: str, make: Callable[[], Any]) -> Any:
    found = _LOADED.get(name)
    if found is None:
        with _LOCKS[name]:      # one lock each: jieba loads while MeCab's files are checked
            found = _LOADED.get(name)
            if found is None:
                found = _LOADED[name] = make()
    return found


def check_ahead(state_dir: Path | None, wanted: Callable[[], bool] | None = None) -> None:
    """Begin hashing the segmenters' pinned files now, in a forked process (fsutil.hash_ahead),
    for a run that may load them soon (``wanted()``, asked only when a file has no digest
    kept: whether the run may meet Japanese or Chinese): a first ingest checks UniDic's 260
    MB (~0.2 s of CPU) on a core its start-up leaves idle instead of beside its reading
    workers. The check itself is unchanged: it compares those digests with the pins when a
    segmenter loads."""
    hash_ahead([folder / name for package, files in PINNED_FILES.items()
                if (folder := _installed(package)) is not None for name in files], state_dir,
               wanted)


def _installed(package: str) -> Path | None:
    """The folder ``package`` is installed in, without importing it (unidic_lite reads a file
    on import), or None."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _make_tagger() -> Any:
    folder = _installed("unidic_lite")
    if folder is None:
        raise MindgraphError("the Japanese dictionary (unidic-lite) is not installed; "
                             f"install it: pip install {RELEASES['unidic_lite']}")
    verify_files("unidic_lite", folder)     # before MeCab reads a byte of it
    import fugashi

    # -r /dev/null: no mecabrc from the machine; the dictionary folder says everything but
    # the output: not its UniDic format but each node's surface and raw feature CSV (the
    # backslashes doubled for fugashi's shell-like splitting of the options; MeCab reads \t)
    node = r"%m\\t%H\\n"
    tagger = fugashi.GenericTagger(f'-r /dev/null -d "{folder / "dicdir"}" '
                                   f"--output-format-type= --node-format={node} "
                                   f"--unk-format={node} --eos-format=")
    return tagger.parse


def _make_jieba() -> Any:
    folder = _installed("rjieba")
    if folder is not None:      # checked before it loads
        verify_files("rjieba", folder)
    import rjieba

    return rjieba       # its functions use the instance it builds on import (one is enough)


def verify_files(package: str, folder: Path) -> None:
    """Check every pinned file of ``package`` (installed in ``folder``) against its digest."""
    for name, digest in PINNED_FILES[package].items():
        check_file(folder / name, digest, package, RELEASES[package])


def check_file(path: Path, digest: str, package: str, release: str) -> None:
    """Refuse a dictionary file of ``package`` whose SHA-256 is not ``digest`` (the one of
    ``release``, pinned in pyproject.toml), naming the file and the reinstall that fixes it."""
    try:
        actual = sha256_file(path, pinned=True)
    except OSError as error:
        raise MindgraphError(f"{path}: cannot read the {package} dictionary ({error}); "
                             f"reinstall it: pip install --force-reinstall {release}") from error
    if actual != digest:
        raise MindgraphError(
            f"{path}: SHA-256 {actual} is not the pinned {digest} of {release}, "
            f"the release mindgraph was measured with; reinstall it: "
            f"pip install --force-reinstall {release}")
