"""Progress of long work on stderr: click's progress bar on a terminal; elsewhere (CI, a pipe,
an agent's subprocess) a plain line every ``EVERY_S`` seconds, so a log shows the run is alive
(embedding 2,000 chunks printed nothing for a minute) while short runs print nothing extra.
"""

from __future__ import annotations

import itertools
import sys
import time
from typing import Any, Sequence

import click

from .common import is_terminal, terminal_safe
from .eta import EtaEstimator

EVERY_S = 10.0      # seconds between two lines when stderr is not a terminal
FORCED_EVERY_S = 1.0    # the same with --progress


class Progress:
    """Counts work done and shows it: ``advance(n)`` or ``update(done, total, item)``.

    On a terminal a click progress bar (created once the total is known); otherwise a line
    ``label: done of total unit (pct%), N s, ETA M s`` at most every ``EVERY_S`` seconds.
    ``work`` gives each item's cost in order (a chunk's tokens): the ETA is then measured in
    work, not items, at the recent rate (eta.py); the bar counts work too."""

    def __init__(self, label: str, unit: str, total: int | None = None,
                 forced: bool = False, work: Sequence[float] | None = None) -> None:
        self.label, self.unit, self.total = label, unit, total
        self.done = 0
        # work done after each count of items: _work[i] for i items (None: items are equal)
        self._work = list(itertools.accumulate(work, initial=0.0)) if work is not None \
            else None
        self._eta: EtaEstimator | None = None
        self._terminal = is_terminal()
        self._every = FORCED_EVERY_S if forced else EVERY_S
        self._bar: Any = None
        self._counting = False      # a terminal line counting items of an unknown total
        self._started = self._last = time.monotonic()

    def _work_of(self, done: int) -> float:
        """The work of the first ``done`` items."""
        if self._work is None:
            return float(done)
        return self._work[min(max(done, 0), len(self._work) - 1)]

    def advance(self, n: int) -> None:
        """``n`` more items are done."""
        self.update(self.done + n, self.total)

    def update(self, done: int, total: int | None = None, item: str = "") -> None:
        """``done`` of ``total`` items are done, the last one being ``item``."""
        if total is not None:
            if total != self.total:
                self._eta = None            # a new total: measured again
            self.total = total
        if self.total:
            if self._eta is None:
                if self._work is not None and len(self._work) != self.total + 1:
                    self._work = None       # the costs of another list: count items
                whole = self._work[-1] if self._work is not None else float(self.total)
                self._eta = EtaEstimator(whole, self._started)
            self._eta.add(time.monotonic(), self._work_of(done))
        if self._terminal:
            self._draw(done, item)
        else:
            self._line(done)
        self.done = done

    def close(self) -> None:
        """Finish the bar (a terminal's line ends)."""
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
        if self._counting:
            sys.stderr.write("\n")
            self._counting = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _draw(self, done: int, item: str) -> None:
        if self._bar is None:
            if not self.total:
                self._counting = True
                sys.stderr.write(f"\r{self.label}: {done} {self.unit}")
                sys.stderr.flush()
                return
            def safe(p: Any) -> Any:
                return p and terminal_safe(p)
            if self._work is not None:      # the bar counts work; the items are shown
                self._bar = click.progressbar(
                    length=max(1, round(self._work[-1])), label=self.label, file=sys.stderr,
                    item_show_func=safe)
            else:
                self._bar = click.progressbar(length=self.total, label=self.label,
                                              file=sys.stderr, show_pos=True,
                                              item_show_func=safe)
            self._bar.__enter__()
        if self._work is not None:
            shown = f"{done}/{self.total} {self.unit}" + (f" {item}" if item else "")
            self._bar.update(round(self._work_of(done)) - round(self._work_of(self.done)),
                             shown)
        else:
            self._bar.update(done - self.done, item or None)

    def _line(self, done: int) -> None:
        now = time.monotonic()
        if now - self._last < self._every:
            return
        self._last = now
        of = f" of {self.total}" if self.total else ""
        share = f" ({100 * done // self.total}%)" if self.total else ""
        spent = now - self._started
        left = self._eta.seconds_left() if self._eta is not None and done < (self.total or 0) \
            else None
        eta = f", ETA {left:.0f} s" if left is not None else ""
        click.echo(f"{self.label}: {done}{of} {self.unit}{share}, {spent:.0f} s{eta}",
                   err=True)


class Phases:
    """One progress display per phase of a long command ("Reading", then "Compiling"):
    ``ticker(label)`` is the ``update`` of that phase's display, created when the phase
    first reports (so a phase with nothing to do shows nothing) and closing the phase before
    it. Off (nothing shown) when ``enabled`` is False."""

    def __init__(self, unit: str, enabled: bool = True, forced: bool = False) -> None:
        self.unit, self.enabled, self.forced = unit, enabled, forced
        self._label = ""
        self._shown: Progress | None = None

    def ticker(self, label: str) -> Any:
        """The ``update(done, total, item)`` of phase ``label``."""
        def update(done: int, total: int | None = None, item: str = "") -> None:
            if not self.enabled:
                return
            if self._label != label:
                self.close()
                self._label = label
                self._shown = Progress(label, self.unit, total, forced=self.forced)
            assert self._shown is not None
            self._shown.update(done, total, item)
        return update

    def close(self) -> None:
        """End the phase shown now."""
        if self._shown is not None:
            self._shown.close()
            self._shown = None

    def __enter__(self) -> "Phases":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
