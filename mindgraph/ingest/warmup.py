"""What a first run loads while its worker processes work, off the run's serial path
(pipeline.py): the segmenters the compile will need and NumPy for the move sketches.

A run forks its workers three times (Reading, Linking, Compiling) and the parent mostly waits
for them in between, so whatever the compile's workers should inherit is loaded then:

- MeCab, at the first Japanese note to compile the Reading workers hand back, in a thread
  while this process takes in the rest of the notes and builds the title index; it is joined
  before the Linking workers fork (a fork never happens beside a live thread:
  workers.processes_for). Its dictionary check (SHA-256 of UniDic's 260 MB, ~0.2 s of CPU)
  compares digests that `mindgraph ingest` began computing in a process of their own as it
  started (cjk.check_ahead), on the core its start-up left idle; without them (another
  caller of the run) the thread hashes the files itself, without the GIL;
- jieba before the Reading workers fork, when a note they will read is Chinese (building its
  dictionary holds the GIL, which beside them would stall them: ``before_reading``), else
  at the first Chinese note to compile, here;
- NumPy (all a first sketch imports), while the Linking workers scan (they are done in
  ~0.1 s; the Reading workers, by contrast, keep both cores busy).

Nothing here changes what a run writes: a dictionary that fails its check fails it again,
with the same message, when the Linking step loads it (cjk.py), and a run that never forks
loads each thing where it first needs it, as before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from ..text.cjk import needs_chinese, needs_japanese, preload
from .notes import Note
from .scan import NoteReadError, RawFile, read_note


SAMPLE = 128        # at most this many of the notes to read ``before_reading`` looks at


class Segmenters:
    """Loads the segmenters the notes going by need, MeCab in a thread (``join`` it)."""

    def __init__(self, may_compile: Callable[[Note], bool]):
        self.may_compile = may_compile
        self.thread: threading.Thread | None = None
        self.chinese = False

    def before_reading(self, raw_dir: Path, files: Sequence[RawFile], max_bytes: int) -> None:
        """Load jieba now, before the Reading workers fork, if a note of ``files`` (the ones
        they will read) is Chinese: building its dictionary holds the GIL for ~0.13 s, and
        beside the workers that kept this process's pool thread from taking their results and
        handing them work, so they stood still for as long. Looks at ``SAMPLE`` notes spread
        over ``files`` (~5 ms; a folder of Chinese notes is seen if it holds a ``SAMPLE``th of
        them); a Chinese note it misses loads jieba as it comes in, as before."""
        for file in files[::max(1, -(-len(files) // SAMPLE))]:
            try:
                text = read_note(raw_dir, file, max_bytes).decode("utf-8", errors="replace")
            except NoteReadError:
                continue        # the reading reports it
            if needs_chinese(text):
                self.chinese = True
                preload([text])
                return

    def watch(self, notes: Iterable[Note]) -> Iterator[Note]:
        """``notes``, loading MeCab (in a thread) at the first Japanese one to compile and
        jieba (here) at the first Chinese one."""
        for note in notes:
            text = note.text
            if text and (self.thread is None or not self.chinese) and self.may_compile(note):
                if self.thread is None and needs_japanese(text):
                    self.thread = threading.Thread(target=_quietly, args=(text,),
                                                   name="mindgraph-mecab", daemon=True)
                    self.thread.start()
                elif not self.chinese and needs_chinese(text):
                    self.chinese = True
                    preload([text])
            yield note

    def join(self) -> None:
        """Wait for the MeCab thread (before anything forks)."""
        if self.thread is not None:
            self.thread.join()


def _quietly(text: str) -> None:
    """Load what ``text`` needs; a failure is left to the step that loads it next (it raises
    the same error there, in the run's own thread)."""
    try:
        preload([text])
    except Exception:  # noqa: BLE001 - raised again, with its message, where it is needed
        pass


def import_sketches() -> None:
    """Import sketches.py (and NumPy: all a first sketch needs) now, so the compile's workers
    inherit it."""
    from . import sketches  # noqa: F401
