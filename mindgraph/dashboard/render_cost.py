"""What drawing a page body as markdown costs, estimated from its markup before drawing it.

markdown-it's cost is not its text's length: prose costs ~0.4 µs a character, a ``[`` up to
~40 µs (it looks for the label's end through the tokens after it), any other character
markdown-it stops at (``*``, ``<``, ``&``, ``` ` ```...) up to ~15 µs, and a line up to
~55 µs (a table row, a list or task item, a callout). 100,000 ``[``, under
RENDER_MAX_CHARS, held the dashboard's slow lane 4.4 s. ``estimate`` adds those worst costs
(bench/bench_render_guard.py measures them: the CPU time of a body cut at the budget is
0.15 to 0.7 of its estimate), so a body estimated within ``RENDER_BUDGET_US`` draws in
about that or less, whatever its markup; ``affordable`` finds how much of a body the budget
draws (cut at a paragraph's end), the rest being shown as plain text. Code highlighting
has a budget of its own (``HIGHLIGHT_BUDGET_CHARS``: Pygments takes up to 5 µs a
character). The Help vault's densest page (Obsidian CLI: 32 kB, 1,534 lines of code and
tables) is estimated at 0.15 s, and no page of the vault is cut.
"""

from __future__ import annotations

from ..page.links import WIKILINK_RE

# µs of markdown-it (our rules included) per unit, the worst of bench/bench_render_guard.py
US_PER_BRACKET = 40.0       # "[": a link label is looked for through the tokens after it
US_PER_WIKILINK = 40.0      # a whole [[link]] (one match, resolved, drawn): not its two "["
US_PER_MARKUP = 15.0        # any other character markdown-it's inline parser stops at
US_PER_LINE = 55.0          # a line: a table row, a list or task item, a callout
US_PER_CHAR = 0.5           # every character
# markdown-it stops at these (its terminators, "|" for tables); "[" is counted on its own
MARKUP_CHARS = "!#$%&*+-:<=>@\\]^_`{}~|"
_DROP_MARKUP = str.maketrans("", "", MARKUP_CHARS)
RENDER_BUDGET_US = 200_000  # one page view's markdown, embeds included (~0.2 s)
HIGHLIGHT_BUDGET_CHARS = 20_000     # of code highlighted per view (Pygments: up to 5 µs each)


def as_markdown_it_reads(text: str) -> str:
    """``text`` with its line ends as markdown-it reads them: a ``\\r\\n`` or a lone ``\\r``
    (an old Mac's line end, which a page keeps) is a ``\\n``. ``estimate`` counts lines by
    ``\\n``: 33,000 ``p\\r\\r`` paragraphs were estimated at 0.05 s and drew in 0.9 s."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def estimate(text: str) -> float:
    """The µs markdown-it may take to draw ``text``, at most (its markup's worst costs)."""
    # a blank line costs next to nothing: "\n\n" is counted as one line
    return _markup(text) + US_PER_LINE * (text.count("\n") - text.count("\n\n") + 1)


def _markup(text: str) -> float:
    """``estimate`` but for the lines."""
    markup = len(text) - len(text.translate(_DROP_MARKUP))
    wikilinks = len(WIKILINK_RE.findall(text)) if "[[" in text else 0
    return (US_PER_BRACKET * (text.count("[") - 2 * wikilinks) + US_PER_WIKILINK * wikilinks
            + US_PER_MARKUP * markup + US_PER_CHAR * len(text))


def affordable(text: str, budget: float) -> int:
    """How many characters of ``text`` (from its start) ``budget`` µs draw: all of it when
    its estimate fits, else up to the end of a paragraph (a line, or within a line when a
    single line is over) before the budget runs out."""
    if estimate(text) <= budget:
        return len(text)
    spent, start, last_paragraph = 0.0, 0, -1
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        line = text[start:end]
        blank = not line.strip()
        cost = _markup(line) + (0 if blank else US_PER_LINE)
        if spent + cost > budget:
            if last_paragraph > start // 2:
                return last_paragraph
            return start if start else _within_line(line, budget)
        spent += cost
        if blank:
            last_paragraph = end
        start = end
    return len(text)


def _within_line(line: str, budget: float) -> int:
    """The longest start of ``line`` whose estimate fits ``budget`` (a binary search)."""
    low, high = 0, len(line)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate(line[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


__all__ = ["HIGHLIGHT_BUDGET_CHARS", "RENDER_BUDGET_US", "affordable", "as_markdown_it_reads",
           "estimate"]
