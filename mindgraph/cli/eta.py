"""How long the rest of a long run will take, from the work done so far.

Two things made the plain estimate (time so far × items left / items done) far too low on
`mindgraph embed` of the Obsidian vault ("1408 of 6834 chunks (20%), 10 s, ETA 39 s" on a run
of 177 s): items are not equal work, and the speed does not hold.

- The work is the model's tokens, not chunks: a chunk costs time in proportion to its tokens
  (measured per batch on that vault: tokens explain the batch times, the count of chunks adds
  nothing), and the plan is in path order, so the short release notes (91 tokens a chunk)
  come first and the Japanese and Chinese pages (up to 256) last: 20% of the chunks were 16%
  of the tokens.
- The speed is the recent one (over the last ``WINDOW_S`` seconds), not the average since the
  start: a machine shared with other jobs slows down and speeds up, and the first batch pays
  for loading the model; an average since the start keeps a fast (or slow) beginning for the
  whole run.
"""

from __future__ import annotations

from collections import deque

WINDOW_S = 30.0     # the rate is measured over this many seconds of the latest work


class EtaEstimator:
    """Seconds left for ``total`` units of work (tokens, or items when all weigh the same)
    from (time, work done) samples: the work left at the rate of the last ``window_s``
    seconds."""

    def __init__(self, total: float, started: float, window_s: float = WINDOW_S) -> None:
        self.total = float(total)
        self.window_s = window_s
        self._samples: deque[tuple[float, float]] = deque([(started, 0.0)])

    def add(self, now: float, done: float) -> None:
        """``done`` units of work are done at time ``now`` (monotonic seconds)."""
        self._samples.append((now, float(done)))
        # keep one sample at or before the window's start, so the window is always spanned
        while len(self._samples) > 2 and self._samples[1][0] <= now - self.window_s:
            self._samples.popleft()

    def seconds_left(self) -> float | None:
        """The estimate, or None while nothing measurable was done (or all of it is)."""
        (then, before), (now, done) = self._samples[0], self._samples[-1]
        if done <= before or now <= then or done >= self.total:
            return None
        return (self.total - done) * (now - then) / (done - before)
