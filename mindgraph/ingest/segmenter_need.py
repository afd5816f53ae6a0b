"""Whether a workspace's ingest may load the Japanese or Chinese segmenter: a quick look, at
`mindgraph ingest`'s start, before its dictionaries are hashed ahead (text/cjk.check_ahead).

Hashing UniDic's 260 MB costs ~0.2-0.3 s of CPU on the second core. A run of an English-only
workspace never loads a segmenter, so that was spent for nothing, and a short run (which stops
the hashing process unfinished, keeping no digest) spent it again at every start. The look
answers yes when the ingest state records a Japanese or Chinese note, or when the names or
first bytes of a small sample of raw/ hold kana or Han; a CJK note it misses still has its
dictionary checked when it comes in (ingest/warmup.py), as before hashing ahead existed.
It reads no note through a symlink, as the scan does not (scan.py).
"""

from __future__ import annotations

import mmap
import os
import re
from collections import deque
from pathlib import Path

from .scan import IGNORED_DIRS, NOTE_SUFFIXES

# state.py's (importing it would load the page cache's modules before the hashing starts;
# tests/ingest/test_segmenter_need.py checks the two agree)
STATE_FILENAME = ".ingest-state.json"

SAMPLE_NOTES = 64       # at most this many notes read, of which
PER_FOLDER = 8          # at most this many in one folder (a vault of en/ ja/ zh/ folders)
MAX_FOLDERS = 256       # folders listed at most
HEAD_BYTES = 2048       # read from the start of each
# kana and Han (the scripts the segmenters cut), as UTF-8 text or \u escapes in JSON
_CJK = re.compile("[\u3005\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_STATE_LANGUAGES = (b'"language":"ja"', b'"language":"zh"')


def may_need_segmenters(state_dir: Path, raw_dir: Path) -> bool:
    """True when the ingest of ``raw_dir`` (its state in ``state_dir``) may load a segmenter
    (see the module docstring)."""
    return _state_has_cjk(Path(state_dir) / STATE_FILENAME) or _sample_has_cjk(raw_dir)


def _state_has_cjk(state_file: Path) -> bool:
    try:
        with open(state_file, "rb") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return False
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return any(data.find(marker) >= 0 for marker in _STATE_LANGUAGES)
    except (OSError, ValueError):
        return False


def _sample_has_cjk(raw_dir: Path) -> bool:
    """Breadth first over raw/'s folders: a CJK file or folder name, or the head of one of
    up to ``PER_FOLDER`` notes of each, until ``SAMPLE_NOTES`` are read."""
    folders, listed, read = deque([str(raw_dir)]), 0, 0
    while folders and listed < MAX_FOLDERS and read < SAMPLE_NOTES:
        folder = folders.popleft()
        listed += 1
        in_folder = 0
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith(".") or name in IGNORED_DIRS:
                        continue
                    if _CJK.search(name):
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif in_folder < PER_FOLDER and read < SAMPLE_NOTES \
                            and name.lower().endswith(NOTE_SUFFIXES) \
                            and entry.is_file(follow_symlinks=False):
                        in_folder += 1
                        read += 1
                        if _head_has_cjk(entry.path):
                            return True
        except OSError:
            continue        # the scan reports it
    return False


def _head_has_cjk(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        head = os.read(fd, HEAD_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    return _CJK.search(head.decode("utf-8", errors="ignore")) is not None
