"""What a hostile note costs the dashboard's renderer: CPU time of one page render of notes
whose raw HTML never closes (a tag, a comment), at growing sizes.

    python bench/bench_dashboard_hostile_html.py
    cd /tmp && PYTHONPATH=/path/to/other/checkout python /path/to/bench_dashboard_hostile_html.py

The second form renders with another checkout's code (run from /tmp so the current
directory does not shadow it), to set the figures side by side. A render whose time grows
fourfold when the note doubles is quadratic: any note author can make the server spend
minutes on one view.
"""

from __future__ import annotations

import statistics
import time

from mindgraph.dashboard.render import Links, render_markdown

NOTES = {
    "unclosed tags": lambda n: "<div " + "<a " * n,
    "unclosed comments": lambda n: "<div>\n" + "<!-- " * n,
    "tags in a pre block": lambda n: "<pre>\n" + "<b title=x " * n + "\n</pre>",
}
SIZES = (2_000, 4_000, 8_000)
RUNS = 3


def main() -> None:
    """Print the median CPU seconds of a render per note kind and size."""
    links = Links(lambda target: None, lambda path, *_: "")
    print(f"{'note':<22}" + "".join(f"{n:>12,}" for n in SIZES) + "   (repetitions)")
    for name, make in NOTES.items():
        cells = []
        for size in SIZES:
            text = make(size)
            times = []
            for _ in range(RUNS):
                started = time.process_time()
                render_markdown(text, links)
                times.append(time.process_time() - started)
            cells.append(f"{statistics.median(times):>11.3f}s")
        print(f"{name:<22}" + "".join(cells))


if __name__ == "__main__":
    main()
