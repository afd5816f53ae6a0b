"""A one-line notice while a slow model loads: the first Japanese or Chinese query of a process
waits ~3–6 s for use-multilingual-v3 (numpy reads its weights), and without a word the CLI
looked hung.

A provider wraps its load in ``announced(name)``; whoever shows the notice (the CLI's search
and context commands, on stderr: never on stdout, where ``--json`` goes) listens with
``load_notices``. The notice comes only when the load is still running ``after_s`` after it
started (``embedding.load_notice_after_s``, 0.5 s): a model already loaded, or loading fast,
says nothing.

``load_seconds`` is how long the process has spent in such loads so far (a running one
included; ``counted_load`` counts a load that says nothing, such as a tokenizer's). The CLI's
``context`` leaves it out of its time limit, a one-shot process's one-time cost: a fresh
process on a loaded machine spent ~12 s loading use-multilingual-v3 and gave up on vectors
after context's 5 s.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from ...text.answer_labels import label, localized

NOTICE_AFTER_S = 0.5

# (after_s, listener, the language it is told in)
_listeners: list[tuple[float, Callable[[str], None], str]] = []
_lock = threading.Lock()
# wall time spent loading: loads that ended, and since when one (or several) runs
_loading = {"ended_s": 0.0, "running": 0, "since": 0.0}


def load_seconds() -> float:
    """Seconds this process has spent loading announced models, a load still running included
    (loads that overlap count once)."""
    with _lock:
        running = time.monotonic() - _loading["since"] if _loading["running"] else 0.0
        return _loading["ended_s"] + running


def notice_text(name: str, lang: str = "en") -> str:
    """What a listener is told while ``name`` loads, in ``lang`` (the question's: Japanese
    and Chinese have their words in text/answer_labels.py, any other is told in English)."""
    if localized(lang):
        return label(lang, "loading", name=name)
    return (f"loading the multilingual embedding model {name} (each command loads it; "
            f"a running mindgraph serve or mcp keeps it loaded)…")


@contextmanager
def load_notices(listener: Callable[[str], None],
                 after_s: float = NOTICE_AFTER_S, lang: str = "en") -> Iterator[None]:
    """Tell ``listener`` of every model load still running ``after_s`` after it started,
    while the block runs, in ``lang`` (``notice_text``)."""
    entry = (after_s, listener, lang)
    with _lock:
        _listeners.append(entry)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(entry)


@contextmanager
def announced(name: str) -> Iterator[None]:
    """Run the block (a model's load); past ``NOTICE_AFTER_S`` the listeners hear of it."""
    done = threading.Event()

    def later() -> None:
        started = time.monotonic()
        with _lock:
            listeners = sorted(_listeners, key=lambda entry: entry[0])
        for after_s, listener, lang in listeners:
            if done.wait(max(0.0, after_s - (time.monotonic() - started))):
                return
            try:
                listener(notice_text(name, lang))
            except Exception:     # a notice must never fail the load (a closed stderr)
                pass

    if _listeners:
        threading.Thread(target=later, name="mindgraph-load-notice", daemon=True).start()
    try:
        with counted_load():
            yield
    finally:
        done.set()


@contextmanager
def counted_load() -> Iterator[None]:
    """Run the block (part of a model's one-time load) as time ``load_seconds`` counts, with
    no notice: a tokenizer, or a model quick to load."""
    with _lock:
        if not _loading["running"]:
            _loading["since"] = time.monotonic()
        _loading["running"] += 1
    try:
        yield
    finally:
        with _lock:
            _loading["running"] -= 1
            if not _loading["running"]:
                _loading["ended_s"] += time.monotonic() - _loading["since"]
