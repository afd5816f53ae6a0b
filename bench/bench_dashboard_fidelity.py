"""How faithfully the dashboard renders Obsidian notes: raw Obsidian syntax left in its pages.

    python bench/bench_dashboard_fidelity.py                 # en, ja, zh of the Help vault
    python bench/bench_dashboard_fidelity.py --examples 3    # and where each kind was seen
    python bench/bench_dashboard_fidelity.py --json
    python bench/bench_dashboard_fidelity.py --languages en --release-notes

What it does: copies the Obsidian Help vault's language folders (en, ja, zh: 173 pages each)
into the wiki of a temporary workspace, serves it with `mindgraph serve`'s app (uvicorn on a
loopback port, in-process thread), lists the pages through GET /dashboard/graph and fetches
each one's HTML through GET /dashboard/page, the route the dashboard draws a page from. The
HTML is read as a browser would show it: its text, outside code (``<code>``, ``<pre>``) and
math (``class="math"``), is searched for Obsidian syntax that should have become markup:

- wikilink ``[[`` / ``]]``, embed ``![[``, block-id (a ``^id`` ending a block), comment
  ``%%``, highlight ``==``, math ``$$``, callout ``[!type]``, html-comment ``<!--``, raw-html
  (an HTML tag shown as text), table (a ``|---|`` row left in a paragraph), footnote ``[^``,
  task (``[ ]`` / ``[x]`` opening a list item), tag (``#tag`` that is no tag element);
- and what the markup itself says is missing: unresolved-link (a ``wikilink broken``
  element), unresolved-embed (an embed of a heading or block its page lacks) and
  missing-image (an attachment not found — expected here: the Help vault is published
  without its attachments, so these count files, not defects).

`mindgraph check` over the same wiki is run too: its link errors (broken-link,
ambiguous-link, missing-heading, missing-block) per page are compared with the unresolved
links the dashboard draws on that page (outside embedded text, which belongs to another
page), and the pages where the two disagree are counted ("check-mismatch").

A syntax the note escapes to show it as text (``\[\[Wikilinks\]\]``, ``\#tag``) is no
leftover: as many places of a kind as the page's markdown escapes are counted as "escaped"
instead. A count is a place in the rendered output, not a verdict: run with ``--examples``
and compare with the markdown (a ``==`` in prose about an equality test is no highlight).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "dashboard"))

import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

LANGUAGES = ("en", "ja", "zh")
SYNTAX_KINDS = ("wikilink", "embed", "block-id", "comment", "highlight", "math", "callout",
                "html-comment", "raw-html", "table", "footnote", "task", "tag")
MARKUP_KINDS = ("unresolved-link", "unresolved-embed", "missing-image")
LINK_ERRORS = ("broken-link", "ambiguous-link", "missing-heading", "missing-block")

_BLOCKS = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "div", "summary",
           "blockquote", "details", "dd", "dt"}
_VOID = {"br", "hr", "img", "input", "wbr"}
_HTML_TAGS = ("a|abbr|b|br|center|code|del|details|div|em|font|h[1-6]|hr|i|iframe|img|ins|"
              "kbd|li|mark|ol|p|pre|s|small|span|strong|sub|summary|sup|table|tbody|td|th|"
              "thead|tr|u|ul|video|audio|svg|path|rect|text|style|script|template")
_PATTERNS = {
    "wikilink": re.compile(r"(?<!!)\[\[|\]\]"),
    "embed": re.compile(r"!\[\["),
    "comment": re.compile(r"%%"),
    "highlight": re.compile(r"==[^=\s](?:[^=\n]*[^=\s])?=="),
    "math": re.compile(r"\$\$"),
    "callout": re.compile(r"\[![A-Za-z0-9_-]+\]"),
    "html-comment": re.compile(r"<!--"),
    "raw-html": re.compile(rf"</?(?:{_HTML_TAGS})(?:[\s/>]|$)", re.I),
    "table": re.compile(r"(?m)^\s*\|?\s*:?-{3,}:?\s*\|"),
    "footnote": re.compile(r"\[\^"),
    "tag": re.compile(r"(?:^|(?<=\s))#[^\s#\[\]{}()<>,.;:!?\"'`]*[^\W\d_]"
                     r"[^\s#\[\]{}()<>,;:!?\"'`]*"),
}
_BLOCK_ID_RE = re.compile(r"\^[A-Za-z0-9-]+\s*$")
# what a note writes to show the syntax as text (Obsidian shows it so too): "\[\[Wikilinks\]\]"
_ESCAPED = {"wikilink": re.compile(r"\\\[\\\[|\\\]\\\]"), "embed": re.compile(r"!\\\[\\\["),
            "comment": re.compile(r"\\%\\?%"), "highlight": re.compile(r"\\=\\?="),
            "math": re.compile(r"\\\$\\?\$"), "callout": re.compile(r"\\\[!"),
            "footnote": re.compile(r"\\\[\^|\[\\\^"), "tag": re.compile(r"\\#[^\W\d_]"),
            "block-id": re.compile(r"\\\^[A-Za-z0-9-]+\s*$", re.M)}
_TASK_RE = re.compile(r"^\s*\[[ xX]\]\s")


def _corpus() -> Path:
    return shared_corpora.require(shared_corpora.corpora(), "obsidian-help") / "obsidian-help"


class PageText(HTMLParser):
    """A rendered page read as a reader sees it: the text of each block outside code and
    math, and the markup of unresolved links, embeds and missing attachments."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []    # (tag, skipped, in an embed)
        self.blocks: list[str] = []
        self.open: list[list[str]] = [[]]
        self.markup: Counter[str] = Counter()
        self.own_broken: Counter[str] = Counter()        # their labels, outside embeds
        self._classes: list[set[str]] = []
        self._label: tuple[int, list[str]] | None = None

    def _skipped(self) -> bool:
        return any(skip for _, skip, _ in self.stack)

    def _in_embed(self) -> bool:
        return any(embed for _, _, embed in self.stack)

    @property
    def _classes_open(self) -> set[str]:
        return set().union(*self._classes) if self._classes else set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        classes = set((found.get("class") or "").split())
        capture = False
        if "wikilink" in classes and "broken" in classes:
            self.markup["unresolved-link"] += 1
            # the page's own links: outside embedded text (an embed's title is the page's)
            embeds = sum(embed for _, _, embed in self.stack)
            capture = embeds == 0 or (embeds == 1 and "embed-title" in self._classes_open)
        if "attachment" in classes and "missing" in classes:
            self.markup["missing-image"] += 1
        if "embed" in classes and "broken" in classes:
            self.markup["unresolved-embed"] += 1
        if tag == "input" and found.get("type") == "checkbox":
            self.open[-1].append("☐ ")
        if tag in _VOID:
            return
        skip = tag in ("code", "pre", "math") or bool(classes & {"math", "tag"})
        self.stack.append((tag, skip, "embed" in classes))
        self._classes.append(classes)
        if tag in _BLOCKS:
            self.open.append([])
        if capture:
            self._label = (len(self.stack), [])

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        while self.stack:
            if self._label is not None and self._label[0] == len(self.stack):
                self.own_broken["".join(self._label[1])] += 1
                self._label = None
            opened, _, _ = self.stack.pop()
            self._classes.pop()
            if opened in _BLOCKS:
                self.blocks.append("".join(self.open.pop()))
            if opened == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._label is not None:
            self._label[1].append(data)
        if not self._skipped():
            self.open[-1].append(data)

    def texts(self) -> list[str]:
        """Every block's own text (a block's children are blocks of their own)."""
        return [*self.blocks, *("".join(part) for part in self.open)]


def leftovers(html: str) -> tuple[Counter[str], dict[str, list[str]], Counter[str]]:
    """(counts per kind, the block texts where each was seen, broken links outside embeds)."""
    reader = PageText()
    reader.feed(html)
    reader.close()
    counts: Counter[str] = Counter(reader.markup)
    where: dict[str, list[str]] = defaultdict(list)
    for text in reader.texts():
        for kind, pattern in _PATTERNS.items():
            hits = len(pattern.findall(text))
            if hits:
                counts[kind] += hits
                where[kind].append(text)
        for line in text.split("\n"):
            if _BLOCK_ID_RE.search(line):
                counts["block-id"] += 1
                where["block-id"].append(text)
        if _TASK_RE.match(text):
            counts["task"] += 1
            where["task"].append(text)
    return counts, where, reader.own_broken


def workspace(corpus: Path, languages: list[str], release_notes: bool) -> Path:
    """A temporary workspace whose wiki holds a copy of the chosen folders."""
    base = Path(tempfile.mkdtemp(prefix="dashboard-fidelity-"))
    for folder in [*languages, *(["Release notes"] if release_notes else [])]:
        shutil.copytree(corpus / folder, base / "wiki" / folder)
    (base / "raw").mkdir()
    return base


_WRITTEN_RE = re.compile(r"^(!?\[\[.*?\]\]|!?\[[^\]]*\]\([^)]*\)|\(.*?\)|\S+)"
                         r"(?=:| points| matches)")


def check_link_errors(base: Path) -> dict[str, set[str]]:
    """`mindgraph check`'s link errors per page (the kinds of LINK_ERRORS): the distinct
    links as written (check reports two equal links on one line once)."""
    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph

    report = Mindgraph(settings_from_dict({}, base_dir=base)).check()
    found: dict[str, set[str]] = defaultdict(set)
    for f in report.findings:
        if f.kind in LINK_ERRORS:
            match = _WRITTEN_RE.match(f.message)
            found[f.path].add(_label(match.group(1)) if match else f.message)
    return found


def _label(written: str) -> str:
    """The words the dashboard draws for a link as written (render.py's label)."""
    from mindgraph.page.links import parse_wikilink_inner

    if written.startswith(("[[", "![[")):
        target, heading, _block, alias = parse_wikilink_inner(written.lstrip("!")[2:-2])
        return alias or (f"{target} › {heading}" if target and heading else target or heading
                         or written)
    return written.lstrip("!")[1:].split("]", 1)[0] if written.lstrip("!").startswith("[") \
        else written


def sweep(base: Path, examples: int) -> dict:
    """Fetch every page from a served workspace and count what is left per kind and
    language."""
    import httpx
    from browser_support import live_server

    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph
    from mindgraph.serve.rest import create_app

    app = create_app(Mindgraph(settings_from_dict({}, base_dir=base)), None, None)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    pages_with: dict[str, Counter[str]] = defaultdict(Counter)
    seen: dict[str, list[tuple[str, str]]] = defaultdict(list)
    drawn: dict[str, set[str]] = defaultdict(set)     # unresolved links drawn, per page
    started = time.perf_counter()
    with live_server(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        nodes = client.get("/dashboard/graph").raise_for_status().json()["nodes"]
        for node in nodes:
            path = node["id"]
            lang = path.split("/", 1)[0] if "/" in path else "other"
            answer = client.get("/dashboard/page", params={"page": path}).raise_for_status()
            found, where, broken = leftovers(answer.json()["html"])
            source = (base / "wiki" / path).read_text(encoding="utf-8")
            for kind, pattern in _ESCAPED.items():
                written = min(found[kind], len(pattern.findall(source)))
                if written:
                    found[kind] -= written
                    counts[lang]["escaped"] += written
                    if not found[kind]:
                        del found[kind]
                        where.pop(kind, None)
            counts[lang].update(found)
            counts[lang]["pages"] += 1
            pages_with[lang].update(found.keys())
            drawn[path] = set(broken)
            for kind, texts in where.items():
                if len(seen[kind]) < examples:
                    seen[kind].append((path, _snippet(texts[0], kind)))
    fetch_s = time.perf_counter() - started
    errors = check_link_errors(base)
    for path in sorted(set(drawn) | set(errors)):
        if drawn[path] != errors.get(path, set()):
            lang = path.split("/", 1)[0] if "/" in path else "other"
            counts[lang]["check-mismatch"] += 1
            pages_with[lang]["check-mismatch"] += 1
            if len(seen["check-mismatch"]) < examples:
                seen["check-mismatch"].append(
                    (path, f"dashboard draws {sorted(drawn[path])} unresolved, check "
                           f"reports {sorted(errors.get(path, ()))}"))
    return {"counts": {lang: dict(c) for lang, c in sorted(counts.items())},
            "pages_with": {lang: dict(c) for lang, c in sorted(pages_with.items())},
            "examples": {k: v for k, v in sorted(seen.items())}, "fetch_s": round(fetch_s, 1)}


def _snippet(text: str, kind: str) -> str:
    pattern = _PATTERNS.get(kind)
    match = pattern.search(text) if pattern is not None else None
    start = max(0, match.start() - 60) if match is not None else max(0, len(text) - 120)
    return " ".join(text[start:start + 140].split())


def _table(result: dict) -> str:
    langs = list(result["counts"])
    kinds = [*SYNTAX_KINDS, *MARKUP_KINDS, "check-mismatch", "escaped"]
    rows = [f"{'kind':<18}" + "".join(f"{lang:>12}" for lang in langs),
            f"{'pages':<18}" + "".join(f"{result['counts'][lang].get('pages', 0):>12}"
                                       for lang in langs)]
    for kind in kinds:
        cells = []
        for lang in langs:
            n = result["counts"][lang].get(kind, 0)
            p = result["pages_with"][lang].get(kind, 0) if kind != "escaped" else 0
            cells.append(f"{n:>6} ({p:>3})" if n else f"{0:>12}")
        rows.append(f"{kind:<18}" + "".join(cells))
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES),
                        help="comma-separated language folders of the Help vault")
    parser.add_argument("--release-notes", action="store_true",
                        help="add the Release notes folder (364 pages)")
    parser.add_argument("--examples", type=int, default=0,
                        help="show up to N places per kind")
    parser.add_argument("--json", action="store_true")
    shared_corpora.add_option(parser)
    args = parser.parse_args()
    base = workspace(_corpus(), args.languages.split(","), args.release_notes)
    try:
        result = sweep(base, args.examples)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return
    print("leftovers per kind and language: places (pages); fetched in "
          f"{result['fetch_s']} s")
    print(_table(result))
    for kind, places in result["examples"].items():
        print(f"\n{kind}:")
        for path, text in places:
            print(f"  {path}: {text}")


if __name__ == "__main__":
    main()
